# Another checkpoint: tiny. `l0.gdn.h` (live) is 4 value heads x 8 x 8 = 256 f32 a slot: 9
# units, 9 x 256 x 4 = 9216 bytes; `l7.attn.k` (blocks) is there and no `l8.gdn.h`: tiny has
# 8 layers. No KV is shared: no `shared` key.
plan circuits/qwen3_5.toml --checkpoint tiny --json
