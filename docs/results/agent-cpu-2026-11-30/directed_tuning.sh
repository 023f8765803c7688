#!/bin/bash
# The directed games' share and scale, tuned on two generated programs outside the held-out split
# (seeds 2001 and 2002: 3,001 and 8,999 buffers): muzero, 200 s, --no-place, the deferred game with
# the early copy supply, one core a program, the variants one after the other, the persistent
# cache off (run at commit 378e1eb, 2026-11-30). directed_tuning.txt: the best game of each run.
# Run from an empty folder: bash directed_tuning.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
python -m jaxmmap generate --seed 2001 --instructions 1000 -o tune-2001.json.gz
python -m jaxmmap generate --seed 2002 --instructions 3000 -o tune-2002.json.gz
G="--budget 200 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
run() {  # CORE PROGRAM
  for v in "C:directed_share=0.0" "A:directed_share=0.5" "B:directed_share=1.0" \
           "D:directed_share=1.0 direction_scale=0.03" "E:directed_share=1.0 direction_scale=0.3" "F:directed_share=0.9"; do
    name=${v%%:*}; o=""; for x in ${v#*:}; do o="$o --option muzero.$x"; done
    taskset -c $1 python -m jaxmmap compare --instances $2.json.gz --solvers muzero $G $o -o t-$name-$2 > t-$name-$2.log 2>&1
  done
}
run 0 tune-2002 & run 1 tune-2001 & wait
python - <<'PY' > directed_tuning.txt
import glob, json, math
print("variant  program            generations  start     best game  over the rate's (C)")
best = {}
for d in sorted(glob.glob("t-*-tune-*/")):
    d = d.rstrip("/")
    run = json.load(open(f"{d}/traces.json"))["runs"][0]
    best[d.split("-", 2)[1], run["instance"]] = (run["info"]["iterations"], run["trace"][0][1], run["info"]["game"])
for (v, p), (it, start, game) in sorted(best.items()):
    print(f"{v:8} {p:18} {it:11} {start:9.4f} {game:10.4f}  {game / best['C', p][2]:.5f}")
for v in sorted({v for v, _ in best}):
    ratios = [best[v, p][2] / best["C", p][2] for w, p in best if w == v]
    print(f"{v}: geometric mean over the rate's {math.exp(sum(map(math.log, ratios)) / len(ratios)):.5f}")
PY
