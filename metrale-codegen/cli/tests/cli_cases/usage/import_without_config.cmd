# The config.json argument is required.
import circuits/gpt_oss.toml
