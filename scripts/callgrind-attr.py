#!/usr/bin/env python3
"""Where a callgrind run's instructions go, per source line of dirigo.

    scripts/callgrind-attr.py CALLGRIND_OUT BINARY PACKETS [TOP]

CALLGRIND_OUT must come from `valgrind --tool=callgrind --dump-instr=yes`
(scripts/callgrind-daemon.sh writes one). Every instruction address's self
cost is attributed to the innermost inlined frame that is dirigo's own
source (addr2line -i), so the cost of a generic helper inlined into the
packet path lands on the line of ours that called it; the figures are
divided by PACKETS (what the worker forwarded) to read as instructions per
packet. Costs in other objects (the PMDs, libc, the loader) are summed per
object. Prints the TOP (default 40) lines, then the totals per file.
"""

import collections
import os
import re
import subprocess
import sys


def parse(path):
    """Self cost per (object, address) from a callgrind output file."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    cost = collections.Counter()
    ob = None
    addr = 0
    line = 0
    positions = ["line"]
    skip_next = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            if s.startswith("positions:"):
                positions = s.split()[1:]
                continue
            m = re.match(r"^(c?)(ob|fl|fi|fe|fn|cfi|cfl|cfn|cob)=(.*)$", s)
            if m:
                kind = m.group(2)
                key = {"fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
                       "cfn": "fn", "cob": "ob"}.get(kind, kind)
                val = m.group(3).strip()
                cm = re.match(r"^\((\d+)\)\s*(.*)$", val)
                if cm:
                    if cm.group(2):
                        names[key][cm.group(1)] = cm.group(2)
                    val = names[key].get(cm.group(1), cm.group(1))
                if m.group(1) == "" and kind == "ob":
                    ob = val
                continue
            if s.startswith("calls="):
                skip_next = True
                continue
            if "=" in s.split()[0] or s.split()[0].endswith(":"):
                continue  # other headers (events:, summary:, jump=...)
            toks = s.split()
            vals = []
            for i, p in enumerate(positions):
                t = toks[i]
                cur = addr if p == "instr" else line
                if t == "*":
                    v = cur
                elif t[0] in "+-":
                    v = cur + int(t, 0)
                else:
                    v = int(t, 0)
                vals.append(v)
            for p, v in zip(positions, vals):
                if p == "instr":
                    addr = v
                else:
                    line = v
            c = int(toks[len(positions)]) if len(toks) > len(positions) else 0
            if skip_next:
                skip_next = False
                continue
            cost[(ob, addr)] += c
    return cost


def ours(path):
    return "/src/" in path and ".cargo/" not in path and "/rustc/" not in path


def attribute(binary, addrs):
    """addr -> "file:line (function)" of the innermost frame of ours."""
    out = {}
    addrs = sorted(addrs)
    for start in range(0, len(addrs), 2000):
        chunk = addrs[start:start + 2000]
        res = subprocess.run(
            ["addr2line", "-e", binary, "-f", "-i", "-C", "-a"]
            + [hex(a) for a in chunk],
            capture_output=True, text=True, check=True).stdout.splitlines()
        cur = None
        frames = []

        def close():
            if cur is None:
                return
            pick = None
            for fn, loc in frames:
                if ours(loc):
                    pick = (fn, loc)
                    break
            if pick is None and frames:
                pick = frames[0]
            fn, loc = pick if pick else ("?", "?")
            if ours(loc):
                loc = re.sub(r"^.*?/src/", "src/", loc)
            else:  # the standard library or a crate, with no frame of ours
                loc = "(lib) " + re.sub(r"^.*/library/", "", loc)
            loc = re.sub(r" \(discriminator \d+\)", "", loc)
            fn = re.sub(r"<.*>", "<_>", fn)
            fn = fn.rsplit("::", 1)[-1] if "::" in fn else fn
            out[cur] = f"{loc} ({fn})"

        i = 0
        while i < len(res):
            r = res[i]
            if r.startswith("0x"):
                close()
                cur = int(r, 16)
                frames = []
                i += 1
                continue
            if i + 1 < len(res):
                frames.append((r, res[i + 1]))
            i += 2
        close()
    return out


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out, binary, pkts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    cost = parse(out)
    base = os.path.basename(binary)
    mine = {a: c for (ob, a), c in cost.items() if ob and os.path.basename(ob) == base}
    other = collections.Counter()
    for (ob, _), c in cost.items():
        if not ob or os.path.basename(ob) != base:
            other[os.path.basename(ob or "?")] += c
    where = attribute(binary, mine.keys())
    by_line = collections.Counter()
    by_file = collections.Counter()
    for a, c in mine.items():
        w = where.get(a, "?")
        by_line[w] += c
        by_file[w.split(":", 1)[0]] += c
    total = sum(cost.values())
    print(f"{total / pkts:.1f} instructions per packet in all "
          f"({sum(mine.values()) / pkts:.1f} in {base})")
    print(f"\ntop {top} source lines of {base} (innermost frame of ours):")
    for w, c in by_line.most_common(top):
        print(f"{c / pkts:8.1f}  {w}")
    print(f"\nper file of {base}:")
    for w, c in by_file.most_common(25):
        print(f"{c / pkts:8.1f}  {w}")
    print("\nother objects:")
    for w, c in other.most_common(12):
        print(f"{c / pkts:8.1f}  {w}")


if __name__ == "__main__":
    main()
