# `--terms` adds the bytes of every layer and every term's row (over 664 lines), after the
# same first line as `plan`. A GDN layer holds 13 terms: h (786432 f32 = 3145728 B a unit)
# and conv (30720 bf16 = 61440 B) live, steps and checkpoint (9 + 36 + 9 units: 173187072 B),
# their prefix snapshots (16 units: 51314688 B) and rings (36 units: 115458048 B), the carry
# (9 h: 28311552 B), the carry table (288 B) and the wy table (576 B): 368272224 B =
# 351.21 MiB (`l0 linear_attention 13 351.21 MiB`). A full-attention layer: k and v of 32 MiB
# each (`l63 full_attention 2 64.00 MiB`). Per layer kind: full_attention 16 layers, 32
# terms, 1.00 GiB; the draft head's 2 sides, 64.00 MiB.
plan circuits/qwen3_5.toml --terms
