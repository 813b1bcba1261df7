# `--context` is only for `--for sequences`.
fit circuits/qwen3_5.toml --budget 80GiB --for kv-blocks --context 8
