# `--align 100` is not a power of two: bad input.
plan circuits/qwen3_5.toml --align 100
