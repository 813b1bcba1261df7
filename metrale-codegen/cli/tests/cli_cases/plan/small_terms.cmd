# The summary comes first, then the terms. Tiny under the small inputs (8 layers, layers 3 and
# 7 full attention), per lifetime:
# - model: 4 KV sides of 40 tokens x 16 bf16 = 1280 B, and each GDN layer's empty wy_table
#   (no verify-table rows): 4 + 6 = 10 terms, 5120 B = 5.00 KiB;
# - sequence: h (3 x 256 f32 = 3072) and conv (3 x 192 f16 = 1152) of 6 GDN layers, and the
#   empty hidden capture: 12 + 1 = 13 terms, 6 x 4224 = 25344 B = 24.75 KiB;
# - snapshot: 2 empty prefix snapshots per GDN layer and head.prefix_hidden: 13 terms, 0 B;
# - verify: head.accepted_hidden, empty: 1 term. All: 37 terms, 30464 B = 29.75 KiB.
# Per kind, only the kinds the plan has (6 rows, no ring_snapshot): recurrent 12 24.75 KiB,
# paged_kv 4 5.00 KiB, prefix_snapshot 13, verify_table 6, accept_stash 1, hidden_capture 1.
# Per layer kind: prologue - 0 0 B; linear_attention 6 layers 30 terms 24.75 KiB;
# full_attention 2 4 5.00 KiB; epilogue - 3 0 B; draft - 0 0 B. Per layer (8 rows): a GDN
# layer its h, conv, wy_table and two prefix snapshots, 3072 + 1152 = 4224 B = 4.125 KiB,
# shown `l0 linear_attention 5 4.13 KiB`; a full-attention layer its k and v, 2 x 1280 =
# 2560 B: `l3 full_attention 2 2.50 KiB`, `l7 full_attention 2 2.50 KiB`.
plan circuits/qwen3_5.toml --checkpoint tiny --inputs $DIR/small.toml --terms
