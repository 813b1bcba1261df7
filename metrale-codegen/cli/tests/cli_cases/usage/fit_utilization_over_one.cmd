fit circuits/qwen3_5.toml --gpu 24GiB --utilization 1.5 --for kv-blocks
