# `--sort` is offset or plan.
plan circuits/qwen3_5.toml --sort size
