# A malformed size.
fit circuits/qwen3_5.toml --budget -1 --for kv-blocks
