"""Each run of prod_plan_start.sh (out/*.json) beside the same program and seed in
prod_other_start.txt (prod before its third start): return, simulated speed-up over the heuristic,
seconds, the start the last moves improved. Then each seed's mean speed-up over prod.md's 15
programs as prod now stands: these runs, else prod_other_start.txt's, else prod.md's (where prod's
later starts are never reached). Run where prod_plan_start.sh ran."""

import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

now = {}  # (program, seed): the speed-up in %, prod.md's
for line in open(os.path.join(HERE, "prod.md")):
    c = [x.strip() for x in line.split("|")]
    if len(c) > 12 and "@" in c[1]:
        now[c[1], 0], now[c[1], 1] = float(c[4].rstrip("%")), float(c[9].rstrip("%"))
before = {}  # prod_other_start.txt's runs
for line in open(os.path.join(HERE, "prod_other_start.txt")):
    m = re.match(r"(\S+@\S+)\s+seed (\d)\s+(\S+) \(([-+.\d]+)%\) (\d+) s", line)
    if m:
        before[m[1], int(m[2])] = (m[3], float(m[4]), m[5])
        now[m[1], int(m[2])] = float(m[4])
for path in sorted(glob.glob("out/*-s[01].json")):
    if not os.path.getsize(path):  # (still running)
        continue
    d = json.load(open(path))
    seed = int(re.search(r"-s(\d)\.json$", path).group(1))
    ret, speedup, seconds = before[d["problem"], seed]
    now[d["problem"], seed] = d["speedup_over_heuristic_percent"]
    print(f"{d['problem']:34s} seed {seed}  {d['return']:.6g} ({d['speedup_over_heuristic_percent']:+.3f}%)"
          f" {d['seconds']:.0f} s, improved {d['info']['improved']:9s} | before {ret} ({speedup:+.3f}%) {seconds} s"
          f" | valid {d['valid']}")
for seed in (0, 1):
    runs = [v for (_, s), v in now.items() if s == seed]
    print(f"seed {seed}: mean speed-up over the {len(runs)} programs {sum(runs) / len(runs):+.3f}%")
