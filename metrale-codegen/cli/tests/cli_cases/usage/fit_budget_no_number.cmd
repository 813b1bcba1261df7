# A malformed size.
fit circuits/qwen3_5.toml --budget GiB --for kv-blocks
