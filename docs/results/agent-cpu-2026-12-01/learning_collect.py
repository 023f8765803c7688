"""The learning-rate study's table: each run's game return and generations (`solve --json`, files
sSEED-VARIANT-PROGRAM.json), per program the mean over seeds and its ratio to the frozen network's.
Run from the folder of the runs: python learning_collect.py"""
import glob
import json
import re
import statistics

runs = {}
for path in sorted(glob.glob("s*-*-tune-*.json")):
    match = re.fullmatch(r"s(\d+)-(\w+)-(tune-\d+)\.json", path)
    if match is None:
        continue
    with open(path) as f:
        text = f.read()
    if text.strip():
        r = json.loads(text)
        runs[(match.group(2), match.group(3), int(match.group(1)))] = (r["return"], r["info"]["iterations"], r["seconds"])
variants = sorted({v for v, _, _ in runs}, key=lambda v: (v != "frozen", v))
programs = sorted({p for _, p, _ in runs})
for p in programs:
    base = statistics.mean(r[0] for (v, q, _), r in runs.items() if v == "frozen" and q == p)
    print(f"# {p} (200 s, --no-place, deferred game): return (generations) per seed; mean; mean / frozen's")
    for v in variants:
        rs = [(s, r) for (w, q, s), r in sorted(runs.items()) if w == v and q == p]
        if not rs:
            continue
        mean = statistics.mean(r[0] for _, r in rs)
        cells = "  ".join(f"s{s} {r[0]:.3f} ({r[1]})" for s, r in rs)
        print(f"{v:8} {cells}  mean {mean:.3f}  {mean / base:.4f}")
    print()
