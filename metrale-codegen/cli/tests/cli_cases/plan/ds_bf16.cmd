# A dtype's unit has neither a layout nor parts: `l0.mla.latent` is 576 bf16, unit_bytes 1152.
plan circuits/deepseek_v32.toml --inputs $DIR/ds_bf16.toml --json
