# A malformed size.
fit circuits/qwen3_5.toml --budget 99999999999TiB --for kv-blocks
