#!/usr/bin/env python3
"""The validation table of docs/explain.md from a sweep's JSON document (`diskscope --batch
SWEEP --json > sweep.json`, or the sweep.json beside its CSVs): per experiment and block size,
the mean, the best repetition, the rate at median latency, the model's prediction and bound."""
import json, sys, statistics as st
from collections import defaultdict
doc = json.load(open(sys.argv[1]))
g = defaultdict(list)
for r, e in zip(doc["results"], doc["explanations"]):
    if r["error"]:
        continue
    g[(r["experiment"], r["block_size_bytes"])].append((r, e))
def size(b):
    for u, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {u}"
    return f"{b} B"
print("| experiment | block size | measured MiB/s (mean) | best rep | at median latency | predicted | measured % | median % | bound |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for (x, bs), v in sorted(g.items()):
    rs = [r for r, _ in v]
    e = v[0][1]
    mean = st.mean(r["mib_s"] for r in rs)
    best = max(r["mib_s"] for r in rs)
    med = st.median(bs * r["threads"] * r["queue_depth"] / (r["lat_p50_us"] * 1e-6) / 2**20 for r in rs if r["lat_p50_us"] > 0)
    if e is None:
        print(f"| {x} | {size(bs)} | {mean:.1f} | {best:.1f} | {med:.1f} | – | – | – | – |")
        continue
    p = e["bound_mib_s"]
    print(f"| {x} | {size(bs)} | {mean:.1f} | {best:.1f} | {med:.1f} | {p:.1f} | {100*mean/p:.0f}% | {100*med/p:.0f}% | {e['bound']} |")
