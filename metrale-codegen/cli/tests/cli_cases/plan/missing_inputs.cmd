# The missing inputs file is named.
plan circuits/qwen3_5.toml --inputs no/such/inputs.toml
