# `--group` alone prints the terms, in sections with subtotals (the figures of small_terms):
# `device arena: 37 terms, by offset, grouped by lifetime`; model 10 terms 5.00 KiB, sequence
# 13 terms 24.75 KiB, snapshot 13 terms 0 B, verify 1 term 0 B.
plan circuits/qwen3_5.toml --checkpoint tiny --inputs $DIR/small.toml --group lifetime
