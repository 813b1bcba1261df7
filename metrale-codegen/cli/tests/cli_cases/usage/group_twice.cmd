plan circuits/qwen3_5.toml --group kind --group layer
