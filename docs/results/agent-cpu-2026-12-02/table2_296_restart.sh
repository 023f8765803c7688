#!/bin/bash
# Table 2's agent on the generated program of 296 buffers (seed 1001, 100 instructions) with its
# stalled search starting again from its first center (`restart_stall`, 1.0 by default): seeds 0
# to 2, 600 s, --no-place, the deferred game with the early copy supply, one core a run, two at a
# time, the persistent cache off (2026-12-02). table2_296_restart.md: each seed's return, restarts,
# generations and seconds. Run from an empty folder: bash table2_296_restart.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed 1001 --instructions 100 -o gen-1001.json.gz
run() {  # CORE SEED
  PYTHONPATH=$R taskset -c $1 python -m jaxmmap solve gen-1001.json.gz --solver muzero --budget 600 --seed $2 \
    --no-place --placement deferred --copy-supply early --json -o muzero-s$2.sol.json > muzero-s$2.json 2> muzero-s$2.log
}
(run 0 0; run 0 2) & run 1 1 & wait
python - > table2_296_restart.md <<'PY'
import json
rows = [json.load(open(f"muzero-s{s}.json")) for s in range(3)]
print("| seed | return | restarts | generations | s |\n|---:|---:|---:|---:|---:|")
for s, r in enumerate(rows):
    print(f"| {s} | {r['return']:.6g} | {r['info']['restarts']} | {r['info']['iterations']} | {r['seconds']:.0f} |")
print(f"\nmean {sum(r['return'] for r in rows) / 3:.6g}")
PY
