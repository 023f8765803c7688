#!/bin/bash
# The expert's search started again from its first center once stalled (`--option
# muzero.restart_stall=1.0`, now the default) against never (`0.0`), on two generated tuning programs
# of 284 and 295 buffers (seeds 2000 and 2001, 100 instructions), 300 s, seeds 0 and 1, --no-place,
# the deferred game with the early copy supply, one core a variant, the two side by side, the
# persistent cache off (2026-12-02). restart_tuning.md: each run's return, generations, restarts.
# Run from an empty folder: bash restart_tuning.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
for s in 2000 2001; do PYTHONPATH=$R python -m jaxmmap generate --seed $s --instructions 100 -o tune-$s-100.json.gz; done
G="--budget 300 --seeds 2 --no-bound --no-place --placement deferred --copy-supply early --solvers muzero"
G="$G --instances tune-2000-100.json.gz tune-2001-100.json.gz"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare $G --option muzero.restart_stall=$3 -o $2 > $2.log 2>&1; }
at 0 restart 1.0 & at 1 plain 0.0 & wait
python - > restart_tuning.md <<'PY'
import json
print("| variant | program | seed | return | generations | restarts | time to best (s) | s |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for d in ("restart", "plain"):
    for r in json.load(open(f"{d}/traces.json"))["runs"]:
        print(f"| {d} | {r['instance']} | {r['seed']} | {r['ret']:.6g} | {r['info']['iterations']} | {r['info']['restarts']} "
              f"| {r['time_to_best']:.0f} | {r['seconds']:.0f} |")
PY
