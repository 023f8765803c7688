#!/bin/bash
# Table 2's random and Figure 7's frozen network on the generated program of 296 buffers (seed 1001,
# 100 instructions), seed 0: 600 s, --no-place, the deferred game with the early copy supply, one
# core a run, the two side by side, the persistent cache off (2026-12-02). The agent's and ES's
# three seeds: ../agent-cpu-2026-12-01/table2_three_seeds.sh 1001 100 table2_seeds_296.
# table2_296_rest.md: the tables, and the frozen network's generations. Run from an empty folder:
#   bash table2_296_rest.sh
export JAXMMAP_COMPILATION_CACHE=off
R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed 1001 --instructions 100 -o gen-1001.json.gz
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early --instances gen-1001.json.gz"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare $G "${@:3}" -o $2 > $2.log 2>&1; }
at 0 frozen --solvers muzero --option muzero.learning_rate=0.0 & at 1 random --solvers random & wait
for d in frozen random; do
  echo "# $d"; sed -n '/^## /,$p' $d/results.md
  python -c "import json, sys; [print('generations', r['info'].get('iterations')) for r in json.load(open(sys.argv[1]))['runs']]" $d/traces.json
done > table2_296_rest.md
