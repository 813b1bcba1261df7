# The missing file is named.
plan circuits/no_such.toml
