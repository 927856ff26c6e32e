#!/usr/bin/env python3
"""Layout rules of the dirigo workspace, checked (tests/layout.rs runs this,
and plants each kind of violation in a copy to see it fail).

For every crate of the workspace (the daemon in src/, the layers in
crates/*/src):

1. Plain module folders: no `#[path]` attribute.
2. `#![deny(unsafe_code)]` at the crate root, and `#[allow(unsafe_code)]`
   only on the module that may hold unsafe code: `pmd` in the daemon,
   `hint` (prefetch and transparent huge pages) in the core; none in the
   protocol, configuration and tools crates.
3. No import circle between a crate's modules: module A refers to B (a
   `crate::` or `super::` path in A's file that names B) and B to A,
   directly or through others. A module and its own descendants (e.g.
   `x/mod.rs` and `x/tests.rs`) are one unit and may refer to each other.

And across them:

4. The layers: each layer crate depends (in its Cargo.toml's
   [dependencies]) only on the workspace crates below it — core on none;
   config and proto on core; tools on core, proto and config — and on
   neither DPDK (dpdk-sys) nor an async runtime or HTTP stack (tokio,
   hyper); and its sources name neither the daemon (`dirigo::`) nor DPDK
   (`dpdk_sys::`).
5. The wire rule: outside `net/wire/`, the core's packet code (`net/`,
   `lb/xmit/`, `lb/synproxy/`, `lb/balancer/`; test modules and test
   files aside) slices no packet at a numeric offset:
   `h[14]`, `h[L3 + 9]`, `seg[0..2]`, `buf.get(20..)`. Offsets are named in
   the wire module's field tables. (WIRE_DEBT would list files still to
   convert, with how many such slices they hold; it is empty.)
6. Folders import from their siblings, not from their hub: outside
   test code, a file inside a folder names no item the folder's
   `mod.rs` defines or brings in with `use`
   (re-exports included), by `super::` or by its `crate::` path, and
   imports no `super::*`. The hub declares the
   folder's modules and re-exports them; what siblings share lives in a
   sibling file of its own. (HUB_DEBT would list folders still to
   convert, with how many such imports they hold.)

Usage: check-layout.py [--root DIR]. Prints each violation and exits 1;
prints a summary and exits 0 when clean.
"""

import os
import re
import sys

# (directory of the crate's sources, name, modules that may hold unsafe)
CRATES = [
    ("src", "dirigo", {("pmd",)}),
    ("crates/core/src", "dirigo-core", {("hint",)}),
    ("crates/proto/src", "dirigo-proto", set()),
    ("crates/config/src", "dirigo-config", set()),
    ("crates/tools/src", "dirigo-tools", set()),
]

# the layer crates: (Cargo.toml, the workspace crates it may depend on)
LAYERS = {
    "crates/core/Cargo.toml": set(),
    "crates/config/Cargo.toml": {"dirigo-core"},
    "crates/proto/Cargo.toml": {"dirigo-core"},
    "crates/tools/Cargo.toml": {"dirigo-core", "dirigo-proto", "dirigo-config"},
}
WORKSPACE = {"dirigo", "dirigo-core", "dirigo-proto", "dirigo-config", "dirigo-tools", "dpdk-sys"}
FORBIDDEN = {"dpdk-sys", "tokio", "hyper", "hyper-util", "tokio-rustls"}

# core files (relative to crates/core/src) that still slice headers at
# numeric offsets, and how many slices: the wire rule's remaining debt
# (none left)
WIRE_DEBT = {}

# the core's folders whose code reads and writes packets
PACKET_CODE = tuple(p.replace("/", os.sep) for p in ("net/", "lb/xmit/", "lb/synproxy/", "lb/balancer/"))
# `x[3]`, `x[3..]`, `x[..3]`, `x[a + 3]`, `x[L3 + 9..]`, `.get(3..)`
NUMERIC_SLICE = re.compile(
    r"\w\s*\[\s*(?:\d+\s*(?:\.\.|\])|\.\.=?\s*\d+\s*\]|\w+\s*\+\s*\d+\s*(?:\.\.|\]))"
    r"|\.get(?:_mut)?\(\s*(?:\d+\s*\.\.|\.\.=?\s*\d+|\w+\s*\+\s*\d+)"
)
# byte arrays that are no packet header
NOT_A_HEADER = re.compile(r"\b(mac|macs|key|seed|secret|master|words|octets|parts|args)\s*\[")
# files of packet code whose byte indexing reads no header field
WIRE_EXEMPT = {
    "net/checksum.rs": "sums 16-bit words of any bytes",
}


# folders (crate source dir/folder) whose files still import from the
# folder's hub, and how many such imports: the hub rule's remaining debt
HUB_DEBT = {
}

ITEM = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|const\s+|async\s+)*"
    r"(?:fn|struct|enum|const|static|type|trait|union)\s+(\w+)",
    re.M,
)


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


def strip_test_modules(text):
    """The text without `#[cfg(test)] mod x { ... }` blocks."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def read_crate(root, src):
    files = {}
    for d, _, names in os.walk(os.path.join(root, src)):
        for n in names:
            if n.endswith(".rs"):
                rel = os.path.relpath(os.path.join(d, n), os.path.join(root, src))
                with open(os.path.join(d, n), encoding="utf-8") as f:
                    files[rel] = f.read()
    return files


def check_crate(src, files, unsafe_modules, errors):
    for rel, text in sorted(files.items()):
        for i, line in enumerate(text.splitlines(), 1):
            if re.search(r"#\[path\s*=", line):
                errors.append(f"{src}/{rel}:{i}: #[path] attribute (use a plain module folder)")

    lib = files.get("lib.rs", "")
    if "#![deny(unsafe_code)]" not in lib:
        errors.append(f"{src}/lib.rs: missing #![deny(unsafe_code)] at the crate root")
    allowed = sorted("::".join(m) for m in unsafe_modules)
    for rel, text in sorted(files.items()):
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "allow(unsafe_code)" not in line:
                continue
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)", nxt)
            here = module_of(rel) or ()
            if not (rel == "lib.rs" and m and (m.group(1),) in unsafe_modules):
                errors.append(
                    f"{src}/{rel}:{i + 1}: allow(unsafe_code) outside the allowed modules "
                    f"{allowed} (in {'::'.join(here) or 'crate'})"
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
        errors.append(f"{src}: import circle: " + ", ".join(names) + " (" + "; ".join(detail) + ")")
    return len(modules)


def use_paths(text):
    """Every path a file names: each `use` tree expanded, and the
    `crate::`/`super::` paths written inline in code."""
    out = []

    def expand(prefix, tree):
        tree = tree.strip()
        if not tree:
            return
        # split the top level of `a::{b, c::{d}}`
        if tree.endswith("}") and "{" in tree:
            head, body = tree.split("{", 1)
            body = body[:-1]
            head = head.strip().rstrip(":").rstrip(":")
            base = prefix + [p for p in head.split("::") if p]
            depth, cur = 0, ""
            for ch in body:
                if ch == "," and depth == 0:
                    expand(base, cur)
                    cur = ""
                    continue
                depth += {"{": 1, "}": -1}.get(ch, 0)
                cur += ch
            expand(base, cur)
            return
        tree = re.sub(r"\s+as\s+\w+$", "", tree)
        out.append(prefix + [p.strip() for p in tree.split("::") if p.strip()])

    for m in re.finditer(r"\buse\s+([^;]+);", text):
        expand([], re.sub(r"\s+", " ", m.group(1)))
    code = re.sub(r"\buse\s+[^;]+;", "", text)
    for m in re.finditer(r"\b(?:crate|super)(?:::\w+)+", code):
        out.append(m.group(0).split("::"))
    return out


def hub_imports(files):
    """{folder: [(file, line, what)]}: imports of a hub's own items by
    the files inside its folder (test code aside)."""
    hubs = {}
    for rel, text in files.items():
        m = module_of(rel)
        if m is None:
            continue
        base = os.path.basename(rel)
        if base == "mod.rs":
            code = strip_comments(strip_test_modules(text))
            names = set(ITEM.findall(code))
            # and what it brings in or re-exports (`use`, `pub use`): a
            # sibling names the file that defines it, not the hub
            for m2 in re.finditer(r"^(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", code, re.M):
                for path in use_paths("use " + m2.group(1) + ";"):
                    last = path[-1]
                    alias = re.search(r"\bas\s+(\w+)$", m2.group(1))
                    if last not in ("self", "*"):
                        names.add(last)
                    if alias:
                        names.add(alias.group(1))
            hubs[m] = names
    modules = {module_of(r) for r in files} - {None}
    out = {}
    for rel, text in sorted(files.items()):
        m = module_of(rel)
        parts = rel.split(os.sep)
        if m is None or os.path.basename(rel) in ("mod.rs", "lib.rs", "main.rs"):
            continue
        if "tests" in parts or parts[-1] in ("tests.rs", "testutil.rs"):
            continue
        code = strip_comments(strip_test_modules(text))
        hits = []
        for path in use_paths(code):
            if path[0] == "crate":
                target = path[1:]
            elif path[0] == "super":
                up = 0
                while up < len(path) and path[up] == "super":
                    up += 1
                target = list(m[: len(m) - up]) + path[up:]
            else:
                continue
            # the longest module prefix, then the item named in it
            k = len(target)
            while k > 0 and tuple(target[:k]) not in modules:
                k -= 1
            hub = tuple(target[:k])
            if hub not in hubs or m[: len(hub)] != hub or hub == m:
                continue  # not a hub, or not one this file is inside
            if k == len(target) or target[k] == "*":
                if k < len(target) and path[0] == "super":
                    hits.append("::".join(path))
                continue
            if target[k] in hubs[hub]:
                hits.append("::".join(path))
        if hits:
            folder = os.path.dirname(rel)
            out.setdefault(folder, []).extend((rel, h) for h in hits)
    return out


def check_hubs(src, files, errors):
    found = hub_imports(files)
    for folder, hits in sorted(found.items()):
        key = f"{src}/{folder}".rstrip("/")
        if len(hits) > HUB_DEBT.get(key, 0):
            for rel, what in hits:
                errors.append(
                    f"{src}/{rel}: imports {what} from its folder's hub "
                    f"(move the item into a sibling file and import it from there)"
                )
    return sum(len(h) for h in found.values())


def dependencies(toml_text):
    """The package names of a Cargo.toml's [dependencies] table."""
    deps, on = set(), False
    for line in toml_text.splitlines():
        s = line.strip()
        if s.startswith("["):
            on = s == "[dependencies]"
            continue
        m = re.match(r"([A-Za-z0-9_-]+)\s*=", s)
        if on and m:
            name = m.group(1)
            pk = re.search(r'package\s*=\s*"([^"]+)"', s)
            deps.add(pk.group(1) if pk else name)
    return deps


def check_layers(root, errors):
    for toml, allowed in sorted(LAYERS.items()):
        with open(os.path.join(root, toml), encoding="utf-8") as f:
            deps = dependencies(f.read())
        for d in sorted(deps):
            if d in FORBIDDEN:
                errors.append(f"{toml}: depends on {d} (a layer crate links neither DPDK nor an async runtime)")
            elif d in WORKSPACE and d not in allowed:
                errors.append(f"{toml}: depends on {d} (allowed: {sorted(allowed) or 'no workspace crate'})")
        src = os.path.join(os.path.dirname(toml), "src")
        for rel, text in sorted(read_crate(root, src).items()):
            code = strip_comments(text)
            for i, line in enumerate(code.splitlines(), 1):
                m = re.search(r"(?<![\w:])(dirigo|dpdk_sys)::", line)
                if m:
                    errors.append(f"{src}/{rel}:{i}: names {m.group(1)}:: (a layer crate imports no daemon or driver)")


def wire_slices(files):
    """{file: [(line, text)]} of numeric header slices in the core's
    production code outside net/wire/."""
    out = {}
    for rel, text in sorted(files.items()):
        if rel.startswith("net" + os.sep + "wire" + os.sep) or not rel.startswith(PACKET_CODE):
            continue
        if rel.replace(os.sep, "/") in WIRE_EXEMPT:
            continue
        parts = rel.split(os.sep)
        if "tests" in parts or parts[-1] in ("tests.rs", "testutil.rs"):
            continue
        code = strip_comments(strip_test_modules(text))
        hits = []
        for i, line in enumerate(code.splitlines(), 1):
            if NUMERIC_SLICE.search(line) and not NOT_A_HEADER.search(line):
                hits.append((i, line.strip()))
        if hits:
            out[rel] = hits
    return out


def check_wire(root, errors):
    files = read_crate(root, "crates/core/src")
    found = wire_slices(files)
    for rel, hits in sorted(found.items()):
        allowed = WIRE_DEBT.get(rel.replace(os.sep, "/"), 0)
        if len(hits) > allowed:
            for i, line in hits:
                errors.append(
                    f"crates/core/src/{rel}:{i}: header sliced at a numeric offset outside net/wire "
                    f"(name it in the wire module's field table): {line}"
                )
    return sum(len(h) for h in found.values())


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        root = sys.argv[2]
    errors = []
    modules = hub = 0
    for src, _name, unsafe_modules in CRATES:
        files = read_crate(root, src)
        modules += check_crate(src, files, unsafe_modules, errors)
        hub += check_hubs(src, files, errors)
    check_layers(root, errors)
    debt = check_wire(root, errors)
    for e in errors:
        print(e)
    if errors:
        return 1
    print(
        f"layout ok: {len(CRATES)} crates, {modules} modules, no #[path], unsafe only in pmd and hint, "
        f"no import circle, layers kept, wire rule kept ({debt} numeric header slices outside net/wire), "
        f"hub rule kept ({hub} imports from a folder's hub)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
