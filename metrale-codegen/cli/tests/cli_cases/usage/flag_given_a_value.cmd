# `--json` takes no value.
plan circuits/qwen3_5.toml --json=1
