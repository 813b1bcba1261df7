check circuits/qwen3_5.toml
