# Weights that take the whole usable share: refused (exit 1), naming both: the GPU leaves
# the state nothing.
fit circuits/qwen3_5.toml --gpu 24GiB --weights 30GiB --for sequences --context 32768
