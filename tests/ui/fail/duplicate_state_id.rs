//! Two states of a block with the same id.
mod plans {
    metrale_macros::circuit!(
        inline = r#"
schema = 1
arch = "mini"
dims = ["heads", "width"]
[layout]
kind = "interval"
period = 2
[layout.blocks]
linear_attention = ["mix"]
full_attention = ["attn"]
[[block.mix.state]]
id = "h"
kind = "recurrent"
lifetime = "sequence"
format = "{h_dtype}"
shape = "heads x width"
verify = "h_steps"
[[block.mix.state]]
id = "cap"
kind = "hidden_capture"
format = "bf16"
shape = "width"
[[block.mix.state]]
id = "cap"
kind = "hidden_capture"
format = "f32"
shape = "width"
[[block.mix.node]]
id = "step"
state = { h = "update" }
[[block.attn.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "heads x width"
[[block.attn.node]]
id = "append"
state = { k = "write" }
[[block.attn.node]]
id = "attend"
state = { k = "read" }
[checkpoint.small]
layers = 2
dims = { heads = 2, width = 8 }
"#
    );
}

fn main() {}
