# A malformed size.
fit circuits/qwen3_5.toml --budget 80XB --for kv-blocks
