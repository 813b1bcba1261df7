# A layout the states do not declare is refused at its value, 3:18: did you mean
# `fp8_ds_mla`?
plan circuits/deepseek_v32.toml --inputs $DIR/ds_bad.toml
