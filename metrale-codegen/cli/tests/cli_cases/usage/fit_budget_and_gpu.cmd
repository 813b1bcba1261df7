# `--budget` and `--gpu` exclude each other.
fit circuits/qwen3_5.toml --budget 1GiB --gpu 24GiB --for kv-blocks
