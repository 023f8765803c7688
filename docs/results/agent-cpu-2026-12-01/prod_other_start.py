"""Each run of prod_other_start.sh (out/*.json) beside the same program and seed in prod.md (the
runs before the other start's descents): return, simulated speed-up over the heuristic, seconds,
the start the last moves improved. Run where prod_other_start.sh ran."""

import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

before = {}
for line in open(os.path.join(HERE, "prod.md")):
    c = [x.strip() for x in line.split("|")]
    if len(c) > 12 and "@" in c[1]:
        before[c[1], 0] = (float(c[3]), c[4], c[7])
        before[c[1], 1] = (float(c[8]), c[9], c[12])
gains = {0: 0.0, 1: 0.0}
for path in sorted(glob.glob("out/*-s[01].json")):
    d = json.load(open(path))
    seed = int(re.search(r"-s(\d)\.json$", path).group(1))
    ret, speedup, seconds = before[d["problem"], seed]
    gains[seed] += d["speedup_over_heuristic_percent"] - float(speedup.rstrip("%"))
    print(f"{d['problem']:34s} seed {seed}  {d['return']:.6g} ({d['speedup_over_heuristic_percent']:+.3f}%)"
          f" {d['seconds']:.0f} s, improved {d['info']['improved']:9s} | before {ret:.6g} ({speedup}) {seconds} s"
          f" | valid {d['valid']}")
for seed, gain in gains.items():
    print(f"seed {seed}: the 15 programs' mean speed-up moves by about {gain / 15:+.4f} points (prod.md rounds to 0.01)")
