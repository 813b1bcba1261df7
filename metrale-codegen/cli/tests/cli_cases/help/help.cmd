# Help goes to stdout with exit 0: the usage, the commands (check, plan, gen, schema) and
# the exit status.
help
