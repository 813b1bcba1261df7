# DeepSeek-V3.2's latent in vLLM's fp8_ds_mla, 2 blocks of 64 tokens: `l0.mla.latent`
# (blocks) has layout fp8_ds_mla of dtype u8, unit_bytes 656 (512 fp8, 4 f32, 64 bf16) and
# 128 x 656 = 83968 bytes; its parts are nope (fp8, 512 elements at 0, 512 B), scales (f32, 4
# at 512, 16 B) and rope (bf16, 64 at 528, 128 B). Its indexer key `l0.mla.index_k` (128 fp8
# and one f32) has layout fp8_scaled and unit_bytes 132.
plan circuits/deepseek_v32.toml --inputs $DIR/ds_mla.toml --json
