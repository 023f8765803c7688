#!/bin/bash
# Table 2 (the agent, ES, random) and Figure 7 (the agent against its network frozen) at 600 s, in
# the game's own return (--no-place: no placer, the agent's place_share 0), every solver in the
# deferred game with the early copy supply; one core a run, two at a time, the persistent cache
# off (2026-11-30; run at commit dd15b00 with --option muzero.place_share=0, which --no-place now
# implies; random at 11,645 buffers again at 54ca67c, whose random follows a batch cut early by a
# quarter of it, as random-nmt). Run from an empty folder: bash table2_commands.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
A=suite:alexnet_train_b32@tpu_v4i; B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu
G="--budget 600 --seeds 1 --no-bound --no-place --placement deferred --copy-supply early"
(taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers muzero $G -o muzero > muzero.log 2>&1
 taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers muzero --option muzero.learning_rate=0.0 \
     $G -o frozen > frozen.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $A $B $C --solvers es $G -o es > es.log 2>&1
 taskset -c 1 python -m jaxmmap compare --instances $A $B $C --solvers random $G -o random > random.log 2>&1) &
wait
# table2.md: the four comparisons' tables; placed.txt: each written game's decisions placed
# without local moves, beside the placement of no decisions
for d in muzero frozen es random; do echo "# $d"; sed -n '/^## /,$p' $d/results.md; done > table2.md
python $R/benchmarks/decisions_pay.py muzero es random frozen --place > placed.txt
