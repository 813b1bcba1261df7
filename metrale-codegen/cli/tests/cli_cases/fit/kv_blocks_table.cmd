# bytes per KV token: 16 full-attention layers x 2 sides x 4 KV heads x 256 fp8 = 32768 B;
# bytes per sequence slot: 48 GDN layers x (h 3,145,728 B + conv 61,440 B) = 153944064 B.
fit circuits/qwen3_5.toml --budget 80GiB --for kv-blocks
