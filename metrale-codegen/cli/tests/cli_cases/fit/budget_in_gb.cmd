# Decimal units: 80GB = 80,000,000,000 bytes of budget.
fit circuits/qwen3_5.toml --budget 80GB --for kv-blocks --json
