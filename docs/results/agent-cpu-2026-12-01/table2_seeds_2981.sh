#!/bin/bash
# Table 2 at 2,981 buffers (the held-out split's generated program, seed 1002), three seeds of the
# agent and of ES: 600 s, --no-place, the deferred game with the early copy supply, one core a
# solver, the two side by side, the persistent cache off (2026-12-01). table2_seeds_2981.md: the
# tables (each seed's run and their mean) and the agent's generations.
# Run from an empty folder: bash table2_seeds_2981.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
G="--budget 600 --seeds 3 --no-bound --no-place --placement deferred --copy-supply early --instances gen-1002.json.gz"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare $G --solvers $3 -o $2 > $2.log 2>&1; }
at 0 muzero muzero & at 1 es es & wait
for d in muzero es; do
  echo "# $d"; sed -n '/^## /,$p' $d/results.md
  python -c "
import json, sys
for r in json.load(open(sys.argv[1]))['runs']:
    print('seed', r['seed'], 'return', r.get('final_ret', r['ret']), 'generations', r['info'].get('iterations'), 'seconds', r['seconds'])
" $d/traces.json
done > table2_seeds_2981.md
