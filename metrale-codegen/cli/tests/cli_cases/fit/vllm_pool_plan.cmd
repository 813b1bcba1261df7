# plan shows the pool's layers: page pool (vllm) at device offset 0: 2049 pages.
plan circuits/llama.toml --checkpoint llama_3_1_8b --inputs $DIR/vllm_pool.toml
