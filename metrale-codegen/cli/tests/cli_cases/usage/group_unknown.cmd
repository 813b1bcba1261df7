# `--group` is layer, kind or lifetime.
plan circuits/qwen3_5.toml --group space
