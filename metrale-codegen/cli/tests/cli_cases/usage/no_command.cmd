# No command at all: the help, but on stderr and with exit 2.
