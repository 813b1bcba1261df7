# `-o <FILE>`.
gen circuits/qwen3_5.toml -o a.rs -o b.rs
