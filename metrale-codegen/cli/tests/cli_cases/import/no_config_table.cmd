# A circuit without [config] is bad input: exit 1.
import $DIR/no_config_table.toml $DIR/missing_key.json
