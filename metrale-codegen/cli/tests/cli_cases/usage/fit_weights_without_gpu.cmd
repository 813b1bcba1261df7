# `--weights` needs `--gpu`.
fit circuits/qwen3_5.toml --budget 1GiB --weights 1GiB --for kv-blocks
