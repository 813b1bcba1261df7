# A windowed KV side asks for the window inputs (sequences, chunk_tokens, max_tokens),
# located at the inputs' `[kv]` table: line 2, its key at column 2.
plan $DIR/sliding.toml --inputs $DIR/pool.toml
