# The same under vLLM's names: GPU KV cache size 327,680 tokens; Maximum concurrency 10.00x
# for 32,768 tokens per request (2048 pages a request); one more page costs 2097152 B (a
# page of 65536 B in each of 32 slots); one more request costs 4294967296 B (2048 pages of
# 32,768 tokens). The arenas' per-block and per-slot figures mean nothing under the pool: no
# `one more KV block costs`, `bytes per sequence slot`, `bytes per KV token`.
fit circuits/llama.toml --checkpoint llama_3_1_8b --inputs $DIR/vllm_pool.toml --for sequences --context 32768 --budget 40GiB
