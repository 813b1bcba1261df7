#!/usr/bin/env python3
"""Prints the zoo's per-slot recurrent bytes, per-token KV bytes and per-request fixed KV bytes,
one row per checkpoint.

For each circuit in circuits/ and each real checkpoint (not the `tiny` miniatures), runs
`metrale-codegen plan --json --align 1` under inputs with ONE unit of everything that scales: one
sequence slot (f32 recurrent matrices, bf16 conv windows) and a KV pool of one block of one
token (bf16; a windowed side then also holds one token). So the live recurrent terms sum to
the bytes one sequence slot keeps, and the main model's paged_kv terms to the bytes one token
keeps over every layer. A KV side of a fixed token count a request holds (`tokens`, schema 4:
cross-attention over an encoder) is not a decoded token's: its unit bytes times its tokens are
the bytes one request holds of it, the last column (exact tokens, before rounding to blocks).
Usage: scripts/zoo_table.py [path to the metrale-codegen binary].
"""

import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/debug/metrale-codegen")
INPUTS = """slots = 1
[formats]
kv_cache_dtype = "bf16"
ssm_h_storage = "f32"
ssm_conv_storage = "bf16"
[kv]
blocks = 1
block_size = 1
sequences = 1
chunk_tokens = 1
max_tokens = 1
"""


def plan(circuit, checkpoint, inputs):
    out = subprocess.run(
        [BINARY, "plan", str(circuit), "--checkpoint", checkpoint, "--inputs", inputs,
         "--align", "1", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def main():
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(INPUTS)
        inputs = f.name
    print("| circuit | checkpoint | layers with state | recurrent bytes per slot | KV bytes per token (bf16) | fixed KV bytes per request (bf16) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for circuit in sorted((ROOT / "circuits").glob("*.toml")):
        text = circuit.read_text()
        for checkpoint in re.findall(r"^\[checkpoint\.([a-z0-9_]+)\]", text, re.M):
            if checkpoint == "tiny":
                continue
            terms = plan(circuit, checkpoint, inputs)["terms"]
            recurrent = sum(t["bytes"] for t in terms
                            if t["kind"] == "recurrent" and t["holding"] == "live")
            main_kv = [t for t in terms
                       if t["kind"] == "paged_kv" and not t["state"].startswith("draft.")]
            kv = sum(t["bytes"] for t in main_kv if "tokens" not in t)
            fixed = sum(t["unit_bytes"] * t["tokens"] for t in main_kv if "tokens" in t)
            layers = len({t["state"].split(".")[0] for t in terms
                          if re.match(r"l\d+\.", t["state"])})
            print(f"| {circuit.stem} | {checkpoint} | {layers} | {recurrent:,} | {kv:,} | {fixed:,} |")


if __name__ == "__main__":
    main()
