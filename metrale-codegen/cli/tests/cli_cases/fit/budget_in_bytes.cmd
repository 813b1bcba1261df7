# A plain number is bytes: a budget of 20,000,000,000.
fit circuits/qwen3_5.toml --budget 20000000000 --for kv-blocks --json
