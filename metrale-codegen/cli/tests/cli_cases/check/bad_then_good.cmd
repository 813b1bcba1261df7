# Line 3 is an unknown top-level key, at col 1 (did you mean `layout`?); the good file
# after the bad one is still checked: `ok` on stdout, exit 1.
check $DIR/bad_then_good.toml circuits/qwen3_5.toml
