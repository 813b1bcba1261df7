# `kv_cache_dtype = "bf61"` on line 3: the string at col 18; did you mean `bf16`?
plan circuits/qwen3_5.toml --inputs $DIR/bad_dtype.toml
