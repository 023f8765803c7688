#!/bin/bash
# Table 2 on one generated program of the held-out split, three seeds of the agent and of ES: 600 s,
# --no-place, the deferred game with the early copy supply, one core a solver, the two side by side,
# the persistent cache off (2026-12-01). Writes OUT.md: the tables (each seed's run and their mean)
# and each run's return, the agent's generations, restarts (ES's too) and seconds. Run from an empty folder:
#   bash table2_three_seeds.sh 1003 3000 table2_seeds_9028   (9,028 buffers)
#   bash table2_three_seeds.sh 1002 1000 table2_seeds_2981   (2,981 buffers)
export JAXMMAP_COMPILATION_CACHE=off
SEED=$1 INSTRUCTIONS=$2 OUT=$3
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed $SEED --instructions $INSTRUCTIONS -o gen-$SEED.json.gz
G="--budget 600 --seeds 3 --no-bound --no-place --placement deferred --copy-supply early --instances gen-$SEED.json.gz"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare $G --solvers $3 -o $2 > $2.log 2>&1; }
at 0 muzero muzero & at 1 es es & wait
for d in muzero es; do
  echo "# $d"; sed -n '/^## /,$p' $d/results.md
  python -c "
import json, sys
for r in json.load(open(sys.argv[1]))['runs']:
    print('seed', r['seed'], 'return', r.get('final_ret', r['ret']), 'generations', r['info'].get('iterations'),
          'restarts', r['info'].get('restarts'), 'seconds', r['seconds'])
" $d/traces.json
done > $OUT.md
