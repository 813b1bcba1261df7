# A value-taking option at the end with no value.
plan circuits/qwen3_5.toml --checkpoint
