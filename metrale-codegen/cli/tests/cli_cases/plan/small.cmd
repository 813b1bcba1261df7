# A small inputs file changes the figures: 3 slots, bf16 KV of 10 blocks of 4 tokens.
# `l0.gdn.h` (live): 3 slots x 256 f32 = 3072 B; `l0.gdn.conv` (live): 3 slots x 3 x
# (2*8*2 + 4*8) = 576 f16 -> 1152 B, dtype f16; `l3.attn.k` (blocks): 10 x 4 = 40 tokens x 16
# bf16 = 1280 B, dtype bf16. No [verify]: no `l0.gdn.h` steps or checkpoint; no [draft_kv]:
# no `draft.attn.k`; no `l0.gdn.h_ring` and no `head.lookup_index`. Absent plain counts are
# 0: `l0.gdn.h_prefix` (cache) has 0 units and 0 bytes.
# device_bytes: 4 KV sides (layers 3, 7) x 1280 + 6 GDN layers x (3072 + 1152) = 30464 term
# bytes; each conv region (1152) is padded to 1280 before the next aligned region or the
# arena's end: + 6 x 128 = 31232. host_bytes 0.
# Totals (as in small_terms): lifetime.device model 10 terms 5120 B, sequence 13 / 25344,
# snapshot 13 / 0, verify 1 / 0, every host lifetime 0 / 0; kind recurrent 12 / 25344,
# paged_kv 4 / 5120, all 12 kinds listed, ring_snapshot and prompt_lookup_index 0 / 0.
plan circuits/qwen3_5.toml --checkpoint tiny --inputs $DIR/small.toml --align 256 --json
