# The nearest command is `plan`.
plna
