# An empty -o is no file: bad input.
gen circuits/qwen3_5.toml -o= --runtime-path=::my_engine::rt
