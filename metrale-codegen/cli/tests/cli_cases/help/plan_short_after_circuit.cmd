# `-h` anywhere on the line asks for help, even after a circuit file.
plan circuits/qwen3_5.toml -h
