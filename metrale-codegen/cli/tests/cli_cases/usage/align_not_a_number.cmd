# Not a number at all: clap's error, naming the value and the option (zero and 100 are
# numbers, refused by plan with exit 1: plan/align_*).
plan circuits/qwen3_5.toml --align abc
