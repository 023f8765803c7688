#!/bin/bash
# Table 2's agent and Figure 7's frozen network again, after the expert's restarted games start
# from a fork of the center and its evaluation game is played once per version of the network
# (run at commit bab7369; ES and random are table2_commands.sh's and table2_generated.sh's, whose
# code this does not change). 600 s, --no-place, the deferred game with the early copy supply, one
# core a run, two at a time, the persistent cache off. Run from an empty folder: bash table2_fork.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
python -m jaxmmap generate --seed 1003 --instructions 3000 -o gen-1003.json.gz
A=suite:alexnet_train_b32@tpu_v4i; B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
(taskset -c 0 python -m jaxmmap compare --instances gen-1002.json.gz gen-1003.json.gz --solvers muzero $G -o muzero > muzero.log 2>&1
 taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers muzero $G -o muzero-suite > muzero-suite.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances gen-1002.json.gz gen-1003.json.gz --solvers muzero \
     --option muzero.learning_rate=0.0 $G -o frozen > frozen.log 2>&1
 taskset -c 1 python -m jaxmmap compare --instances $A $B $C --solvers muzero --option muzero.learning_rate=0.0 \
     $G -o frozen-suite > frozen-suite.log 2>&1) &
wait
for d in muzero frozen muzero-suite frozen-suite; do echo "# $d"; sed -n '/^## /,$p' $d/results.md; done > table2_fork.md
python - <<'PY' >> table2_fork.md
import json
print("\n# generations played (info.iterations)")
for d in ("muzero", "frozen", "muzero-suite", "frozen-suite"):
    for run in json.load(open(f"{d}/traces.json"))["runs"]:
        print(f"{d:13} {run['instance']:28} {run['info'].get('iterations')}")
PY
python $R/benchmarks/decisions_pay.py muzero frozen muzero-suite frozen-suite --place > placed_fork.txt
