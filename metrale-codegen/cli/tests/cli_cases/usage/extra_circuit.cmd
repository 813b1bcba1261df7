# plan takes one circuit: a second is a usage error (exit 2, nothing on stdout, the
# usage on stderr).
plan circuits/qwen3_5.toml other.toml
