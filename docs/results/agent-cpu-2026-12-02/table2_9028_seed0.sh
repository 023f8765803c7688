#!/bin/bash
# Seed 0 of Table 2's agent and ES at 9,028 buffers (generated seed 1003, 3000 instructions) again,
# side by side and alone on the machine: in the three-seed run of the same day
# (table2_seeds_9028_restart.md) another job shared ES's core for about 95 s of its seed 0. 600 s,
# --no-place, the deferred game with the early copy supply, one core a solver, the persistent
# cache off (2026-12-02). table2_9028_seed0.md: each run's return, generations, seconds.
# Run from an empty folder: bash table2_9028_seed0.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed 1003 --instructions 3000 -o gen-1003.json.gz
run() {  # CORE SOLVER
  PYTHONPATH=$R taskset -c $1 python -m jaxmmap solve gen-1003.json.gz --solver $2 --budget 600 --seed 0 \
    --no-place --placement deferred --copy-supply early --json -o $2-s0.sol.json > $2-s0.json 2> $2-s0.log
}
run 0 muzero & run 1 es & wait
python - > table2_9028_seed0.md <<'PY'
import json
print("| solver | seed | return | generations | restarts | s |\n|---|---:|---:|---:|---:|---:|")
for name in ("muzero", "es"):
    r = json.load(open(f"{name}-s0.json"))
    info = r["info"]
    print(f"| {name} | 0 | {r['return']:.6g} | {info.get('iterations', info.get('generations'))} | {info['restarts']} "
          f"| {r['seconds']:.0f} |")
PY
