# The table names everything: `checkpoint  tiny`, the device arena, `host arena: 1 term`,
# the kinds (recurrent, paged_kv), holdings, MiB, `arena bytes per space`, `term bytes per
# lifetime`, snapshot. `l0.gdn.h` live of tiny under the defaults: 9 slots x 256 f32 =
# 9216 B = 9.00 KiB. The device arena is 89 terms, by offset (plan order among equal
# offsets): first layer 0's carry table (288 B at 0), then its wy_table at 512.
plan circuits/qwen3_5.toml --checkpoint tiny --terms
