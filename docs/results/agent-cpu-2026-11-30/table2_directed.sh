#!/bin/bash
# Table 2's agent and Figure 7's frozen network with the expert's directed games. 600 s,
# --no-place, the deferred game with the early copy supply, one core a run, two at a time, the
# persistent cache off; ES and random are table2_commands.sh's and table2_generated.sh's, whose
# code this does not change. As run: the frozen network (frozen, frozen-suite) and the agent
# before the evaluation game waited EVALUATION_GAP generations (muzero-every) at commit 378e1eb;
# the agent (muzero: the generated programs and alexnet_train; muzero-suite: wavenet_train and
# nmt_train) at commit 566dd60, which changes no game of a frozen network. Set C378 and C566 to
# checkouts of the two commits. Run from an empty folder: bash table2_directed.sh
export JAXMMAP_COMPILATION_CACHE=off
R=$(cd "$(dirname "$0")/../../.." && pwd)
PYTHONPATH=$R python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
PYTHONPATH=$R python -m jaxmmap generate --seed 1003 --instructions 3000 -o gen-1003.json.gz
A=suite:alexnet_train_b32@tpu_v4i; B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu; N=gen-1002.json.gz; M=gen-1003.json.gz
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
F="--option muzero.learning_rate=0.0"
at() { PYTHONPATH=$1 taskset -c $2 python -m jaxmmap compare --solvers muzero $G "${@:3}"; }
(at $C378 0 --instances $N $M -o muzero-every > muzero-every.log 2>&1
 at $C566 0 --instances $N $M $A -o muzero > muzero.log 2>&1) &
(at $C378 1 --instances $N $M $F -o frozen > frozen.log 2>&1
 at $C378 1 --instances $A $B $C $F -o frozen-suite > frozen-suite.log 2>&1
 at $C566 1 --instances $B $C -o muzero-suite > muzero-suite.log 2>&1) &
wait
D="muzero muzero-suite frozen frozen-suite muzero-every"
for d in $D; do echo "# $d"; sed -n '/^## /,$p' $d/results.md; done > table2_directed.md
python - $D <<'PY' >> table2_directed.md
import json, sys
print("\n# generations played (info.iterations)")
for d in sys.argv[1:]:
    for run in json.load(open(f"{d}/traces.json"))["runs"]:
        print(f"{d:13} {run['instance']:28} {run['info'].get('iterations')}")
PY
PYTHONPATH=$R python $R/benchmarks/decisions_pay.py $D --place > placed_directed.txt
