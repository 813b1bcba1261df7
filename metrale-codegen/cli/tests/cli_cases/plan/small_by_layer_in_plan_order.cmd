# Every layer in index order, then the epilogue; no prologue (no state) and no draft section
# (no draft KV under these inputs): l0 5 terms 4.13 KiB, l3 2 terms 2.50 KiB, epilogue 3
# terms 0 B; every term once, 6 x 5 + 2 x 2 + 3 = 37. Inside a section the sort holds: layer
# 0 in plan order, h, conv, h_prefix, conv_prefix, wy_table.
plan circuits/qwen3_5.toml --checkpoint tiny --inputs $DIR/small.toml --group layer --sort plan
