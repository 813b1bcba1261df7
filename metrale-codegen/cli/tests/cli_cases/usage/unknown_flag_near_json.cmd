# An unknown flag is named with the nearest one, `--json`.
plan circuits/qwen3_5.toml --jsn
