# The name and hf given. (An `hf` another checkpoint pins, `openai/gpt-oss-20b`, is refused:
# two checkpoints of one id would make `Checkpoint::from_hf` ambiguous.)
import circuits/gpt_oss.toml circuits/configs/gpt_oss_20b.json --name mine --hf me/gpt-oss-20b-tuned
