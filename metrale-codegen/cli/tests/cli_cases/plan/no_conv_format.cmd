# A format key the inputs lack is named, at the inputs file's `[formats]` table: one error
# per key (`ssm_conv_storage`), not one per state.
plan circuits/qwen3_5.toml --inputs $DIR/no_conv_format.toml
