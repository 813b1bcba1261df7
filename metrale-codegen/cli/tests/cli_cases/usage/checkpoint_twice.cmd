# An option given twice: `--checkpoint <NAME>` cannot be used multiple times.
plan circuits/qwen3_5.toml --checkpoint tiny --checkpoint tiny
