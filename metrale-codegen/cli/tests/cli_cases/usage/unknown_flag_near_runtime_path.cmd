# The nearest flag is `--runtime-path`.
gen circuits/qwen3_5.toml --runtime-pth ::rt
