plan circuits/qwen3_5.toml --json --json
