# `shared` lists the 9 readers with `state` and `owner` (the last l7.cross.k of l2.attn.k),
# and no term is a reader's (no l7.cross.k blocks).
plan tests/ui/circuits/shared_kv.toml --json
