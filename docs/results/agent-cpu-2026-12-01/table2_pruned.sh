#!/bin/bash
# Table 2's agent, Figure 7's frozen network and ES again, with the expert's games cut short where
# they cannot beat the center and the deferred game's faster step (commit 28edf7b): the two
# generated programs of the held-out split (2,981 and 9,028 buffers), 600 s, --no-place, the
# deferred game with the early copy supply, one core a run, two at a time (the agent beside its
# frozen network), the persistent cache off (2026-12-01). table2_pruned.md: the tables and
# generations. Run from an empty folder: bash table2_pruned.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
PYTHONPATH=$R python -m jaxmmap generate --seed 1003 --instructions 3000 -o gen-1003.json.gz
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
F="--option muzero.learning_rate=0.0"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare $G "${@:3}" -o $2 > $2.log 2>&1; }
(at 0 muzero-1002 --solvers muzero --instances gen-1002.json.gz; at 0 muzero-1003 --solvers muzero --instances gen-1003.json.gz
 at 0 es-1003 --solvers es --instances gen-1003.json.gz) &
(at 1 frozen-1002 --solvers muzero --instances gen-1002.json.gz $F; at 1 frozen-1003 --solvers muzero --instances gen-1003.json.gz $F
 at 1 es-1002 --solvers es --instances gen-1002.json.gz) &
wait
for d in muzero-1002 frozen-1002 es-1002 muzero-1003 frozen-1003 es-1003; do
  echo "# $d"; sed -n '/^## /,$p' $d/results.md
  python -c "import json, sys; [print('generations', r['info'].get('iterations')) for r in json.load(open(sys.argv[1]))['runs']]" $d/traces.json
done > table2_pruned.md
