#!/usr/bin/env python3
"""Lists the public names at the root of metrale-circuit and fails when there are more than
the engine-facing budget: what `pub use` re-exports and every `pub mod` or other `pub` item of
src/lib.rs, leaving out those marked `#[doc(hidden)]` (the private ABI and its fingerprint),
which are not API. The budget is written once, in docs/architecture.md ("its root is ... at
most N names"), and read from there.

Prints the names, one line, and their count; exits 1 over the budget.

    python3 scripts/root_api.py [--max N]
"""

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIB = ROOT / "metrale-circuit" / "src" / "lib.rs"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def budget() -> int:
    """The root's budget as docs/architecture.md states it."""
    text = " ".join(ARCHITECTURE.read_text().split())
    found = re.search(r"its root is [^.]*?at most (\d+) names", text)
    if not found:
        sys.exit("docs/architecture.md states no budget for the root (`its root is ... at most N names`)")
    return int(found.group(1))


def root_names(text: str) -> list:
    """The public names lib.rs declares or re-exports at the crate root."""
    text = re.sub(r"(?m)//.*$", "", text)
    # An inline module's body is not the root's: keep `pub mod name;` of it.
    out, depth, i = "", 0, 0
    while i < len(text):
        ch = text[i]
        if depth == 0 and re.match(r"mod \w+ \{", text[i:]) and text[max(0, i - 4):i] == "pub ":
            name = re.match(r"mod (\w+) \{", text[i:]).group(1)
            out += f"mod {name};"
            j = text.index("{", i)
            level = 0
            while True:
                level += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
                if level == 0:
                    break
            i = j
            continue
        out += ch
        i += 1
    names = []
    for attrs, statement in re.findall(r"((?:#\[[^\]]*\]\s*)*)(pub use [^;]*;|pub (?:mod|const fn|fn|struct|enum|const|static|type|trait)\b[^;{]*[;{])", out):
        if "doc(hidden)" not in attrs:
            names += declared(" ".join(statement.split()))
    return names


def declared(statement: str) -> list:
    """The names one root statement makes public."""
    statement = statement.strip()
    use = re.match(r"pub use ([\w:]+)::\{(.*)\}\s*;", statement)
    if use:
        return [n.strip().split(" as ")[-1] for n in use.group(2).split(",") if n.strip()]
    use = re.match(r"pub use [\w:]+::(\w+)(?: as (\w+))?;", statement)
    if use:
        return [use.group(2) or use.group(1)]
    item = re.match(r"pub (?:const fn|fn|mod|struct|enum|const|static|type|trait) (\w+)", statement)
    return [item.group(1)] if item else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=None)
    args = parser.parse_args()
    if args.max is None:
        args.max = budget()
    names = root_names(LIB.read_text())
    print(f"metrale-circuit's root: {len(names)} names: {', '.join(names)}")
    if len(names) > args.max:
        sys.exit(f"more than {args.max} public names at the root of metrale-circuit")


if __name__ == "__main__":
    main()
