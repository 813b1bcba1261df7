# gpt-oss-20b's shipped config through circuits/gpt_oss.toml's [config]: the figures of the
# published file (24 layers alternating sliding and full from layer 0, 2880 wide, 64 query
# and 8 KV heads of 64, a 128-token window); the file has no `_name_or_path`, so the name is
# the file's stem and there is no hf line.
import circuits/gpt_oss.toml circuits/configs/gpt_oss_20b.json
