#!/usr/bin/env python3
"""Finds cycles between the modules of each crate of the workspace.

A module (one file) depends on another when it names it in a path: `use crate::a::b`,
`use super::x`, `crate::a::f()` in code. A path through a re-export (`crate::Circuit`, which
lib.rs re-exports from `circuit`) is followed to the module that defines the item. A parent's
`mod child;` is containment, not a dependency, and so is everything the crate root names
(it declares and re-exports); a parent module that `use`s its child does depend on it. Test modules (`#[cfg(test)] mod tests`) are
left out: they may use anything of the file they test; so are `#[cfg(doc)]` imports (doc links).

Prints every cycle found (a strongly connected component of more than one module) and exits 1
if there is one; prints the module and edge counts otherwise."""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = [
    "metrale-circuit",
    "metrale-codegen",
    "metrale-codegen/cli",
    "metrale-macros",
    "examples/engine",
    "fuzz",
]


def module_files(src: pathlib.Path) -> dict:
    """Module path (a tuple; the crate root is ()) -> its file. `#[path]` attributes in lib.rs
    are followed."""
    modules = {}
    for file in src.rglob("*.rs"):
        rel = file.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            parts = []
        modules.setdefault(tuple(parts), file)
    for root in ("lib.rs", "main.rs"):
        if (src / root).exists():
            text = (src / root).read_text()
            for path, name in re.findall(r'#\[path = "([^"]+)"\]\s*(?:pub\s+)?mod\s+(\w+)', text):
                stem = tuple(pathlib.Path(path).with_suffix("").parts)
                if stem in modules:
                    modules[(name,)] = modules.pop(stem)
    return modules


def strip_tests(text: str) -> str:
    """The text without its `#[cfg(test)] mod tests { ... }` (brace-matched) and comments."""
    text = re.sub(r"//[^\n]*", "", text)
    # Imports for doc links only are not dependencies of the code.
    text = re.sub(r"#\[cfg\(doc\)\]\s*use[^;]+;", "", text)
    match = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if not match:
        return text
    depth, i = 1, match.end()
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[: match.start()] + text[i:]


def use_paths(text: str) -> list:
    """Every path a file names: each leaf of every `use` tree, and inline `crate::`/`super::`."""
    paths = []
    for tree in re.findall(r"\buse\s+([^;]+);", text):
        paths.extend(expand(tree.replace("\n", " ")))
    for inline in re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text):
        paths.append(inline.split("::"))
    return paths


def expand(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]]."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        path = tree.split(" as ")[0].strip()
        return [path.split("::")] if path else []
    prefix = [p for p in tree[:brace].rstrip(":").split("::") if p]
    inner, depth, part, parts = tree[brace + 1 : tree.rfind("}")], 0, "", []
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        part += ch
    parts.append(part)
    out = []
    for p in parts:
        for rest in expand(p):
            out.append(prefix + rest)
    return out


def reexports(modules: dict) -> dict:
    """(module, name) -> the child module a `pub use child::...::name` re-exports it from."""
    found = {}
    for module, file in modules.items():
        text = strip_tests(file.read_text())
        for tree in re.findall(r"\bpub\s+use\s+([^;]+);", text):
            for path in expand(tree.replace("\n", " ")):
                if path and path[0] not in ("crate", "super", "self", "std", "core"):
                    name = path[-1].split(" as ")[0]
                    found[(module, name)] = module + (path[0],)
    return found


def resolve(path: list, here: tuple, modules: dict, exports: dict):
    """The module `path`, named in module `here`, depends on (None: outside the crate)."""
    if not path:
        return None
    if path[0] == "crate":
        base, rest = (), path[1:]
    elif path[0] in ("super", "self"):
        base = here
        rest = path
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif (here + (path[0],)) in modules:
        base, rest = here, path
    else:
        return None
    module = base
    for name in rest:
        if name in ("*", "self"):
            break
        if module + (name,) in modules:
            module = module + (name,)
        elif (module, name) in exports:
            module = exports[(module, name)]
            while module not in modules and module:
                module = module[:-1]
            break
        else:
            break
    return module


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    failed = False
    for crate in CRATES:
        src = ROOT / crate / "src"
        modules = module_files(src)
        exports = reexports(modules)
        graph = {m: set() for m in modules}
        for module, file in modules.items():
            for path in use_paths(strip_tests(file.read_text())):
                target = resolve(path, module, modules, exports)
                # The crate root only declares and re-exports: its uses are the crate's table
                # of contents, not a dependency.
                if target is not None and target != module and module != ():
                    graph[module].add(target)
        found = cycles(graph)
        edges = sum(len(v) for v in graph.values())
        name = lambda m: "::".join(m) or "crate"
        if found:
            failed = True
            for component in found:
                print(f"{crate}: cycle between " + ", ".join(name(m) for m in component))
                for m in component:
                    inside = sorted(name(t) for t in graph[m] if t in component)
                    print(f"    {name(m)} -> {', '.join(inside)}")
        else:
            print(f"{crate}: {len(modules)} modules, {edges} dependencies, no cycle")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
