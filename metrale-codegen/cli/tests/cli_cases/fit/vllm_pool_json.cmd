# Llama-3.1-8B, bf16, a default server's vLLM pool, requests of 32,768 tokens at 40 GiB:
# pages (block_tokens 16) of 16 x 8 x 128 x 2 x 2 = 65,536 B (page_bytes) over 32 slots
# (pool_slots, 1 group), 40 GiB / 2 MiB = 20,480 pages (pool_pages); 2048 pages a request
# (request_pages); (20,480 - 1) / 2048 = 9 at once (value, admitted); vLLM logs 10.00x
# (concurrency 10.0) and 327,680 tokens (pool_tokens). The pool's marginal figures, not the
# arenas': a page in each of 32 slots, 32 x 65,536 = 2,097,152 B (marginal_page_bytes); a
# request's 2048 pages, 4,294,967,296 B (marginal_request_bytes), which is what one more
# sequence costs (marginal_bytes). No arena KV block to cost: marginal_block_bytes null.
# pool_context 32768, policy vllm. (tests/tests/pool.rs works the same figures.)
fit circuits/llama.toml --checkpoint llama_3_1_8b --inputs $DIR/vllm_pool.toml --for sequences --context 32768 --budget 40GiB --json
