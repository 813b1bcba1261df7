# Layer 0 keeps a 128-token window: min(127 + 64, 4096) = 191 tokens span 12 blocks of 16,
# + 1: 13 per sequence, 26 for 2 sequences = 416 units (tokens) of `l0.local.k`; layer 1 the
# whole pool, 100 x 16 = 1600.
plan $DIR/sliding.toml --inputs $DIR/window.toml --json
