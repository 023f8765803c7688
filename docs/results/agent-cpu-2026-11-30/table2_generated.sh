#!/bin/bash
# Table 2 and Figure 7 at 600 s, as table2_commands.sh, on two generated programs of the held-out
# split with room under the LP bound (2,981 and 9,028 buffers), where wavenet_train and nmt_train
# have none (2026-11-30; run at commit a8a05e3, ES at 9,028 buffers again at 53fa9ac as es-fix: at
# a8a05e3 the packing estimate of a slow first slice cut its first generation at 43 s). Run from
# an empty folder: bash table2_generated.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
python -m jaxmmap generate --seed 1003 --instructions 3000 -o gen-1003.json.gz
B=gen-1002.json.gz; C=gen-1003.json.gz
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
(taskset -c 0 python -m jaxmmap compare --instances $B $C --solvers muzero $G -o muzero > muzero.log 2>&1
 taskset -c 0 python -m jaxmmap compare --instances $B $C --solvers muzero --option muzero.learning_rate=0.0 \
     $G -o frozen > frozen.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $B $C --solvers es $G -o es > es.log 2>&1
 taskset -c 1 python -m jaxmmap compare --instances $B $C --solvers random $G -o random > random.log 2>&1) &
wait
taskset -c 0 python -m jaxmmap compare --instances $C --solvers es $G -o es-fix > es-fix.log 2>&1
for d in muzero frozen es es-fix random; do echo "# $d"; sed -n '/^## /,$p' $d/results.md; done > table2_generated.md
python $R/benchmarks/decisions_pay.py muzero frozen es es-fix random --place > placed_generated.txt
