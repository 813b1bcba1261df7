# Qwen3.5-27B, the README's first command: the summary (ending with `term bytes per layer
# kind`) and a note, not 664 term rows: no `term bytes per layer` and no `device arena: `
# (tests/cli.rs checks it fits a screen).
plan circuits/qwen3_5.toml
