# The missing file is named.
check circuits/no_such.toml
