# A config missing a key: exit 1, `layer_types` named at the object, 1:1.
import circuits/gpt_oss.toml $DIR/missing_key.json
