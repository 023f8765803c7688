#!/bin/bash
# ES's stalled search restarted at its start (`--option es.restart_from=start`) against at its best
# parameters (`best`, the default), on the agent's restart tuning programs of 284 and 295 buffers
# (generated seeds 2000 and 2001, 100 instructions), 300 s, seeds 0 and 1, --no-place, the deferred
# game with the early copy supply, one core a variant, the two side by side, the persistent cache
# off (2026-12-02). es_restart_tuning.md: each run's return, generations, restarts.
# Run from an empty folder: bash es_restart_tuning.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
for s in 2000 2001; do PYTHONPATH=$R python -m jaxmmap generate --seed $s --instructions 100 -o tune-$s-100.json.gz; done
G="--budget 300 --seeds 2 --no-bound --no-place --placement deferred --copy-supply early --solvers es"
G="$G --instances tune-2000-100.json.gz tune-2001-100.json.gz"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare $G --option es.restart_from=$2 -o $2 > $2.log 2>&1; }
at 0 start & at 1 best & wait
python - > es_restart_tuning.md <<'PY'
import json
print("| restart at | program | seed | return | generations | restarts | time to best (s) | s |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for d in ("start", "best"):
    for r in json.load(open(f"{d}/traces.json"))["runs"]:
        print(f"| {d} | {r['instance']} | {r['seed']} | {r['ret']:.6g} | {r['info']['generations']} | {r['info']['restarts']} "
              f"| {r['time_to_best']:.0f} | {r['seconds']:.0f} |")
PY
