# Every option (--checkpoint, --inputs, --align [default: 256], --sort [default: offset],
# --group, --json, --svg), each value of --sort and --group with its meaning, and the
# shape of the JSON totals.
plan --help
