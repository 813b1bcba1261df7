# `--for sequences` needs `--context`.
fit circuits/qwen3_5.toml --budget 80GiB --for sequences
