# Twice, once with `=`: `--align <N>`.
plan circuits/qwen3_5.toml --align 64 --align=64
