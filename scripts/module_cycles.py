#!/usr/bin/env python3
"""Finds cycles between the modules of each crate of the workspace, and between the layers (the
files and folders) of each folder; and, in the crates listed in HOME_IMPORTS, imports that go
through the crate root's re-exports instead of an item's home module.

A module (one file) depends on another when it names it in a path: `use crate::a::b`,
`use super::x`, `crate::a::f()` in code. A path through a re-export (`crate::Circuit`, which
lib.rs re-exports from `circuit`; `crate::model::StateKind`, which `model/mod.rs` re-exports
from `model/kinds.rs`) is followed, re-export by re-export, to the module that defines the item.
A parent's `mod child;` is containment, not a dependency, and so is everything the crate root
names (it declares and re-exports); a parent module that `use`s its child does depend on it.
Test modules (`#[cfg(test)] mod tests`) are left out: they may use anything of the file they
test; so are `#[cfg(doc)]` imports (doc links).

Layers: inside each folder (and at the crate root), every child (a file or a subfolder, with
everything below it) is one layer; a dependency between two modules is one between the
children of their nearest common folder. A cycle there means the tree does not read bottom-up,
even when no two files form a cycle.

Home imports: in a crate of HOME_IMPORTS, a module names a sibling at its home
(`crate::model::StateKind`, `super::kinds::StateKind`), never through a name the crate root
only imports (`crate::StateKind`, `use crate::{StateKind, ...}`); the root's re-exports are for
users. Test modules and `#[cfg(doc)]` imports are checked too. Modules in ROOT_PATHS_ALLOWED
are exempt.

Prints every cycle and every root import found and exits 1 if there is one; prints the module
and edge counts otherwise."""

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
# Crates whose modules import from home modules only.
HOME_IMPORTS = ["metrale-circuit"]
# Modules that may still name the root's re-exports (none: the private ABI imports from home
# modules too).
ROOT_PATHS_ALLOWED: dict = {}


def module_files(src: pathlib.Path) -> dict:
    """Module path (a tuple; the crate root is ()) -> its file. `#[path]` attributes in lib.rs
    are followed (a file, or a folder's `mod.rs` with the files below it)."""
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
                if stem[-1:] == ("mod",):
                    stem = stem[:-1]  # a folder module (`abi/mod.rs`): its files move with it
                for key in [k for k in modules if k[: len(stem)] == stem]:
                    modules[(name,) + key[len(stem) :]] = modules.pop(key)
    return modules


def strip_comments(text: str) -> str:
    """The text without its comments (doc comments included)."""
    return re.sub(r"//[^\n]*", "", text)


def strip_tests(text: str) -> str:
    """The text without its `#[cfg(test)] mod tests { ... }` (brace-matched), its comments and
    its `#[cfg(doc)]` imports."""
    text = strip_comments(text)
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
        paths.extend(path for path, _ in leaves(tree))
    # Paths in code; a `use` tree's own prefix (`crate::model` of `use crate::model::{..}`)
    # names no item, so `use`s are left out here.
    code = re.sub(r"\buse\s+[^;]+;", "", text)
    for inline in re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", code):
        paths.append(inline.split("::"))
    return paths


def leaves(tree: str) -> list:
    """Each leaf of a `use` tree as (path, the name it binds): `a::{b, c::d as e, f::{self}}` ->
    ([a, b], b), ([a, c, d], e), ([a, f], f)."""
    out = []
    for path in expand(tree.replace("\n", " ")):
        *head, last = path
        original, _, alias = last.partition(" as ")
        original, alias = original.strip(), alias.strip()
        path = head + [original]
        if original == "self" and head:
            path = head
        if path and path[-1] not in ("*", "self"):
            out.append((path, alias or path[-1]))
    return out


def expand(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]] (a leaf keeps its ` as name`)."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        return [tree.split("::")] if tree else []
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
    """(module, name) -> the path its `use` binds `name` to (`pub use`, `pub(crate) use` and
    a private `use` alike: each makes `module::name` a path), as written in `module`."""
    found = {}
    for module, file in modules.items():
        text = strip_tests(file.read_text())
        for tree in re.findall(r"\buse\s+([^;]+);", text):
            for path, name in leaves(tree):
                if path[0] not in ("std", "core", "alloc") and len(path) > 1:
                    found[(module, name)] = path
    return found


def start(path: list, here: tuple, modules: dict):
    """(the module a path starts from, the rest of it), or None for a path outside the crate."""
    if not path:
        return None
    if path[0] == "crate":
        return (), path[1:]
    if path[0] in ("super", "self"):
        base, rest = here, path
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
        return base, rest
    if (here + (path[0],)) in modules:
        return here, path
    return None


def resolve(path: list, here: tuple, modules: dict, exports: dict, depth: int = 0):
    """The module `path`, named in module `here`, depends on (None: outside the crate): every
    re-export on the way is followed to what it names."""
    started = start(path, here, modules)
    if started is None or depth > 20:
        return None
    module, rest = started
    for name in rest:
        if name in ("*", "self"):
            break
        if module + (name,) in modules:
            module = module + (name,)
        elif (module, name) in exports:
            target = resolve(exports[(module, name)], module, modules, exports, depth + 1)
            if target is None:
                return None
            # A re-exported module: the rest of the path goes on inside it.
            module = target
        else:
            break
    return module


def root_imports(modules: dict, exports: dict) -> set:
    """The names the crate root binds with `use` (its re-exports and aliases), not its modules."""
    return {name for (module, name) in exports if module == () and (name,) not in modules}


def through_root(text: str, here: tuple, modules: dict, names: set) -> list:
    """Every path of `text` (tests and doc imports included) that names one of the root's
    `names` through the root: `crate::Name`, or `super::Name` from a top-level module."""
    found = []
    for path in use_paths(strip_comments(text)):
        started = start(path, here, modules)
        if started and started[0] == () and started[1] and started[1][0] in names:
            found.append("::".join(path))
    return sorted(set(found))


def layer_cycles(graph: dict) -> list:
    """(folder, cycle) for every cycle between the children of one folder: each dependency
    a -> b counts as one between the children of their nearest common ancestor."""
    folders = {}
    for a, targets in graph.items():
        for b in targets:
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            if common == len(a) or common == len(b):
                continue  # a parent and its descendant: containment, not layers
            parent = a[:common]
            folders.setdefault(parent, {}).setdefault(a[: common + 1], set()).add(b[: common + 1])
    return [(parent, c) for parent, layers in sorted(folders.items()) for c in cycles(layers)]


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
    name = lambda m: "::".join(m) or "crate"
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
        layers = layer_cycles(graph) if not found else []
        edges = sum(len(v) for v in graph.values())
        for component in found:
            print(f"{crate}: cycle between " + ", ".join(name(m) for m in component))
            for m in component:
                inside = sorted(name(t) for t in graph[m] if t in component)
                print(f"    {name(m)} -> {', '.join(inside)}")
        for parent, component in layers:
            print(f"{crate}: layers of {name(parent)} in a cycle: " + ", ".join(map(name, component)))
            members = {m for m in graph if m[: len(parent) + 1] in component}
            for m in sorted(members):
                for t in sorted(graph[m]):
                    if t not in members or t[: len(parent) + 1] == m[: len(parent) + 1]:
                        continue
                    print(f"    {name(m)} -> {name(t)}")
        imports = []
        if crate in HOME_IMPORTS:
            names = root_imports(modules, exports)
            allowed = ROOT_PATHS_ALLOWED.get(crate, set())
            for module, file in sorted(modules.items()):
                if module == () or module in allowed:
                    continue
                for path in through_root(file.read_text(), module, modules, names):
                    rel = file.relative_to(ROOT / crate)
                    imports.append(f"{crate}/{rel}: `{path}` goes through the crate root")
        for line in imports:
            print(line)
        if found or layers or imports:
            failed = True
        else:
            print(
                f"{crate}: {len(modules)} modules, {edges} dependencies, no cycle between modules "
                "or layers" + (", no import through the root" if crate in HOME_IMPORTS else "")
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
