//! An unknown state kind, with a "did you mean"; the code using the module adds no error of its own.
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
[[block.mix.node]]
id = "step"
state = { h = "update" }
[[block.attn.state]]
id = "k"
kind = "paged_kvv"
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

use plans::mini::{Dims, small};

fn main() {
    let _dims: Dims = small::DIMS;
}
