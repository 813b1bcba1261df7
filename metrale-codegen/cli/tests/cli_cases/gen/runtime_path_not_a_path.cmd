gen circuits/qwen3_5.toml --runtime-path "not a path"
