# Under the arenas the answer carries the policy (arenas) and no pool field: 10 sequences.
fit circuits/llama.toml --checkpoint llama_3_1_8b --inputs $DIR/arenas.toml --for sequences --context 32768 --budget 40GiB --json
