# Zero is a number but no power of two: bad input, like 100.
plan circuits/qwen3_5.toml --align 0
