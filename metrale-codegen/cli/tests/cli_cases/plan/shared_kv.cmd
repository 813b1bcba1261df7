# KV shared across layers: 9 sides read another layer's KV, no term of their own; each with
# its owner and the owner's blocks: first `l5.swa_reader.k` reads `l3.swa.k`, last
# `l7.cross.k` reads `l2.attn.k`, at the offset of l2.attn.k's blocks in shared_kv_json.
plan tests/ui/circuits/shared_kv.toml
