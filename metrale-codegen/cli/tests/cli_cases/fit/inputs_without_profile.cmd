# `--for sequences` needs a serving profile in the inputs; the default inputs have none.
fit circuits/qwen3_5.toml --budget 80GiB --for sequences --context 8 --inputs metrale-codegen/cli/inputs/default.toml
