# recurrent 12 terms 24.75 KiB, paged_kv 4 5.00 KiB, prefix_snapshot 13 0 B, verify_table 6
# 0 B, accept_stash 1 0 B, hidden_capture 1 0 B.
plan circuits/qwen3_5.toml --checkpoint tiny --inputs $DIR/small.toml --group kind
