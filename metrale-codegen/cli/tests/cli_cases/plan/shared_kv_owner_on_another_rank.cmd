# A rank that holds a reader without its owner is refused, naming both, with what to change
# (= help: split the layers ...).
plan tests/ui/circuits/shared_kv.toml --pp 2
