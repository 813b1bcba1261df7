# gen takes one circuit too.
gen circuits/qwen3_5.toml circuits/qwen3_5.toml
