# Room for 0 sequences but not 1: an error with what 1 needs, not `Ok(0)`. 24 GiB x 0.92 =
# 23,708,219,473 B usable, less 21,208,219,473 B of weights: 2,500,000,000 B, more than 0
# sequences take (1,732,444,672 B) and less than one of 32,768 tokens adds: holds no
# sequence.
fit circuits/qwen3_5.toml --gpu 24GiB --weights 21208219473 --for sequences --context 32768
