#!/usr/bin/env python3
"""Bar chart of Mpps per scenario, dirigo beside testpmd macswap (same pcap).
Usage: bench-plot.py DATA.csv OUT.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
names = [r["scenario"] for r in rows]
tp = [float(r["testpmd_macswap"]) for r in rows]
dg = [float(r["dirigo"]) for r in rows]
lo = [float(r["dirigo"]) - float(r["dirigo_min"]) for r in rows]
hi = [float(r["dirigo_max"]) - float(r["dirigo"]) for r in rows]
x = range(len(rows))
w = 0.4
fig, ax = plt.subplots(figsize=(11, 4.5))
ax.bar([i - w / 2 for i in x], tp, w, label="testpmd macswap (same pcap)", color="#999999")
ax.bar([i + w / 2 for i in x], dg, w, yerr=[lo, hi], capsize=3, label="dirigo (1 worker)", color="#1f77b4")
for i, v in enumerate(dg):
    ax.text(i + w / 2, v, f"{v:.1f}", ha="center", va="bottom", fontsize=8)
ax.set_xticks(list(x))
ax.set_xticklabels(names, rotation=30, ha="right")
ax.set_ylabel("Mpps (median of runs; bars: min-max)")
ax.set_title("net_pcap -> net_null, 64-byte TCP, one forwarding core")
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
