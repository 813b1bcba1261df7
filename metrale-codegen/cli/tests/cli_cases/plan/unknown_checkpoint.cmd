# Bad input with a suggestion: did you mean `tiny`?
plan circuits/qwen3_5.toml --checkpoint tiny2
