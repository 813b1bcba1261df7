#!/usr/bin/env python3
"""Checks metrale-circuit's public API against the budgets docs/architecture.md states: the
root ("its root is ... at most N names") and every public module ("no public module over M
names"), a module whose names are all constants (a table, such as the loader's limits) aside.

A module's names are what `pub use` re-exports and every other `pub` item it declares (`pub
mod`, `fn`, `struct`, `enum`, `const`, `static`, `type`, `trait`), leaving out those marked
`#[doc(hidden)]` (the private ABI and its fingerprint), which are not API. Public modules are
found from `src/lib.rs` down: inline `pub mod x { .. }` bodies and `pub mod x;` files.

Prints each module's names and count; exits 1 when one is over its budget.

    python3 scripts/root_api.py [--max N] [--module-max M]
"""

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "metrale-circuit" / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def stated(pattern: str, what: str) -> int:
    """A budget as docs/architecture.md states it."""
    text = " ".join(ARCHITECTURE.read_text().split())
    found = re.search(pattern, text)
    if not found:
        sys.exit(f"docs/architecture.md states no budget for {what}")
    return int(found.group(1))


def blank_literals(text: str) -> str:
    """The source with comments removed and every string and char literal emptied, so braces
    and semicolons left are the code's own."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif re.match(r'r#*"', text[i:i + 8]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            out.append('""')
            i = n if end < 0 else end + 1 + len(hashes)
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif text[i] == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            i += len(re.match(r"'(\\.|[^\\'])'", text[i:i + 4]).group(0))
            out.append("' '")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def top_level(text: str):
    """The module's top-level statements (attributes kept), and each inline module's name and
    body."""
    statements, inline, depth, start, i = [], [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            if depth == 0:
                head = text[start:i]
                module = re.search(r"pub mod (\w+)\s*$", head)
                if module:
                    level, j = 0, i
                    while True:
                        level += {"{": 1, "}": -1}.get(text[j], 0)
                        j += 1
                        if level == 0:
                            break
                    statements.append(head.strip() + ";")
                    inline.append((module.group(1), text[i + 1:j - 1], doc_hidden(head)))
                    start = i = j
                    continue
            depth += 1
        elif ch == "}":
            depth -= 1
            # A block ends its item; a group or an initializer followed by `;` does not.
            if depth == 0 and not text[i + 1:].lstrip().startswith(";"):
                statements.append(text[start:i + 1].strip())
                start = i + 1
        elif ch == ";" and depth == 0:
            statements.append(text[start:i + 1].strip())
            start = i + 1
        i += 1
    return statements, inline


def doc_hidden(statement: str) -> bool:
    return "doc(hidden)" in " ".join(re.findall(r"#\[[^\]]*\]", statement))


def use_names(tree: str) -> list:
    """The names a `use` tree ends in (`a::{b, c::{d as e}}` gives b, e)."""
    tree = tree.strip()
    group = re.match(r"^([\w:]*?)\{(.*)\}$", tree, re.S)
    if group:
        names, depth, item = [], 0, ""
        for ch in group.group(2) + ",":
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                if item.strip():
                    names += use_names(item)
                item = ""
            else:
                item += ch
        return names
    last = tree.split(" as ")[-1].split("::")[-1].strip()
    return [] if last in ("self", "*") else [last]


def names_of(statements: list):
    """The public names of a module's statements, and whether each is a constant."""
    names = []
    for statement in statements:
        if doc_hidden(statement):
            continue
        code = re.sub(r"#\[[^\]]*\]", "", statement).strip()
        code = re.sub(r"^#!\[[^\]]*\]", "", code).strip()
        use = re.match(r"pub use (.*);$", code, re.S)
        if use:
            names += [(n, False) for n in use_names(" ".join(use.group(1).split()))]
            continue
        if re.match(r"[\w:]+!\s*\{", code):
            # An item a macro declares (`spelled_enum! { pub enum .. }`).
            names += [(n, False) for n in re.findall(r"\bpub (?:struct|enum) (\w+)", code)]
            continue
        item = re.match(r"pub (const fn|unsafe fn|fn|mod|struct|enum|const|static|type|trait) (\w+)", code)
        if item:
            names.append((item.group(2), item.group(1) == "const"))
    return names


def module_file(directory: pathlib.Path, name: str):
    for candidate in (directory / f"{name}.rs", directory / name / "mod.rs"):
        if candidate.exists():
            return candidate, candidate.parent if candidate.name == "mod.rs" else directory / name
    return None, None


def modules(path: str, text: str, directory: pathlib.Path, out: dict) -> None:
    """Every public module from this one down, by path: its names."""
    statements, inline = top_level(blank_literals(text))
    out[path] = names_of(statements)
    inline_names = {name for name, _, _ in inline}
    for name, body, hidden in inline:
        if not hidden:
            modules(f"{path}::{name}", body, directory / name, out)
    for statement in statements:
        if doc_hidden(statement):
            continue
        declared = re.match(r"(?:#\[[^\]]*\]\s*)*pub mod (\w+);$", statement.strip())
        if declared and declared.group(1) not in inline_names:
            file, subdirectory = module_file(directory, declared.group(1))
            if file:
                modules(f"{path}::{declared.group(1)}", file.read_text(), subdirectory, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=None)
    parser.add_argument("--module-max", type=int, default=None)
    args = parser.parse_args()
    if args.max is None:
        args.max = stated(r"its root is [^.]*?at most (\d+) names", "the root (`its root is ... at most N names`)")
    if args.module_max is None:
        args.module_max = stated(r"no public module over (\d+) names", "a module (`no public module over M names`)")
    found = {}
    modules("metrale_circuit", (SRC / "lib.rs").read_text(), SRC, found)
    over = []
    for path, names in found.items():
        budget = args.max if path == "metrale_circuit" else args.module_max
        table = names and all(constant for _, constant in names)
        listed = ", ".join(name for name, _ in names)
        note = " (constants: a table, no budget)" if table and path != "metrale_circuit" else ""
        print(f"{path}: {len(names)} names{note}: {listed}")
        if len(names) > budget and not (table and path != "metrale_circuit"):
            over.append(f"{path} has {len(names)} public names, over its budget of {budget}")
    if over:
        sys.exit("\n".join(over))


if __name__ == "__main__":
    main()
