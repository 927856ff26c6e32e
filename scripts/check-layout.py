#!/usr/bin/env python3
"""Layout rules of the dirigo crate, checked (tests/layout.rs runs this).

1. Plain module folders: no `#[path]` attribute anywhere in src/.
2. `#![deny(unsafe_code)]` at the crate root, and `#[allow(unsafe_code)]`
   only on the module that may hold unsafe code (`pmd`; its `pmd::mem`
   holds the memory hints the sans-IO core uses).
3. No import circle between modules: module A refers to B (a `crate::` or
   `super::` path in A's file that names B) and B to A, directly or through
   others. A module and its own descendants (e.g. `x/mod.rs` and
   `x/tests.rs`) are one unit and may refer to each other.

Prints each violation and exits 1; prints a summary and exits 0 when clean.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")
UNSAFE_MODULES = {("pmd",)}


def module_of(rel):
    """src-relative path -> module path tuple (crate root = ())."""
    parts = rel[:-3].split(os.sep)
    if parts[0] == "bin":
        return None  # binaries are separate crates
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def main():
    errors = []
    files = {}
    for d, _, names in os.walk(SRC):
        for n in names:
            if n.endswith(".rs"):
                rel = os.path.relpath(os.path.join(d, n), SRC)
                with open(os.path.join(d, n), encoding="utf-8") as f:
                    files[rel] = f.read()

    for rel, text in sorted(files.items()):
        for i, line in enumerate(text.splitlines(), 1):
            if re.search(r"#\[path\s*=", line):
                errors.append(f"src/{rel}:{i}: #[path] attribute (use a plain module folder)")

    lib = files.get("lib.rs", "")
    if "#![deny(unsafe_code)]" not in lib:
        errors.append("src/lib.rs: missing #![deny(unsafe_code)] at the crate root")
    for rel, text in sorted(files.items()):
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "allow(unsafe_code)" not in line:
                continue
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)", nxt)
            here = module_of(rel) or ()
            if not (rel == "lib.rs" and m and (m.group(1),) in UNSAFE_MODULES):
                errors.append(
                    f"src/{rel}:{i + 1}: allow(unsafe_code) outside the allowed modules "
                    f"{sorted('::'.join(m) for m in UNSAFE_MODULES)} (in {'::'.join(here) or 'crate'})"
                )

    modules = {}
    for rel, text in files.items():
        m = module_of(rel)
        if m is not None:
            modules[m] = strip_comments(text)
    edges = {m: set() for m in modules}
    for m, text in modules.items():
        refs = set()
        for path in re.findall(r"\bcrate((?:::\w+)+)", text):
            refs.add(tuple(path.split("::")[1:]))
        for sup, path in re.findall(r"\b((?:super::)+)((?:\w+::)*\w+)", text):
            up = sup.count("super::")
            base = m[: len(m) - up] if len(m) >= up else ()
            refs.add(base + tuple(path.split("::")))
        for r in refs:
            # the longest prefix that is a module
            t = ()
            for k in range(len(r), -1, -1):
                if r[:k] in modules:
                    t = r[:k]
                    break
            if t == m or t[: len(m)] == m or m[: len(t)] == t:
                continue  # itself, a descendant or an ancestor
            edges[m].add(t)

    # Tarjan's strongly connected components.
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    for comp in sccs:
        names = sorted("::".join(c) for c in comp)
        detail = []
        for a in sorted(comp):
            for b in sorted(edges[a] & set(comp)):
                detail.append(f"{'::'.join(a)} -> {'::'.join(b)}")
        errors.append("import circle: " + ", ".join(names) + " (" + "; ".join(detail) + ")")

    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"layout ok: {len(modules)} modules, no #[path], unsafe only in pmd, no import circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
