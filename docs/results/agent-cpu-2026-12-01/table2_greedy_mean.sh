#!/bin/bash
# Table 2's agent and Figure 7's frozen network again, after the directed games stopped leaning
# on the network's logits (commit 73a9917): the two generated programs of the held-out split
# (2,981 and 9,028 buffers) and nmt_train@gpu (11,645), 600 s, --no-place, the deferred game with
# the early copy supply, one core a run, two at a time, the persistent cache off (2026-12-01). ES
# and random are those of docs/results/agent-cpu-2026-11-30/ (table2_generated.sh,
# table2_commands.sh). table2_greedy_mean.md: the tables and generations.
# Run from an empty folder: bash table2_greedy_mean.sh
export JAXMMAP_COMPILATION_CACHE=off
R=$(cd "$(dirname "$0")/../../.." && pwd)
PYTHONPATH=$R python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
PYTHONPATH=$R python -m jaxmmap generate --seed 1003 --instructions 3000 -o gen-1003.json.gz
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
F="--option muzero.learning_rate=0.0"
at() { PYTHONPATH=$R taskset -c $1 python -m jaxmmap compare --solvers muzero $G "${@:3}" -o $2 > $2.log 2>&1; }
(at 0 muzero-1002 --instances gen-1002.json.gz; at 0 frozen-1002 --instances gen-1002.json.gz $F
 at 0 muzero-nmt --instances suite:nmt_train@gpu) &
(at 1 muzero-1003 --instances gen-1003.json.gz; at 1 frozen-1003 --instances gen-1003.json.gz $F
 at 1 frozen-nmt --instances suite:nmt_train@gpu $F) &
wait
for d in muzero-1002 frozen-1002 muzero-1003 frozen-1003 muzero-nmt frozen-nmt; do
  echo "# $d"; sed -n '/^## /,$p' $d/results.md
  python -c "import json, sys; [print('generations', r['info'].get('iterations')) for r in json.load(open(sys.argv[1]))['runs']]" $d/traces.json
done > table2_greedy_mean.md
