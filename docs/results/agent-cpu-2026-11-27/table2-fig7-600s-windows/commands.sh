#!/bin/bash
# issue 27: Table 2 at 600 s (agent, ES, random) and Figure 7 at 600 s (the agent against its
# frozen network, the agent's runs being Table 2's), three sizes, one core a run, two at a time,
# persistent cache off (2026-11-27, seventeenth session, commit 24d6f0d: windowed deviations,
# games one by one on a CPU above 1,024 padded buffers). Run from this folder:
#   bash commands.sh
export JAXMMAP_COMPILATION_CACHE=off
R=../../../..
A=suite:alexnet_train_b32@tpu_v4i; B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu
(taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers muzero --budget 600 --seeds 1 -o muzero > muzero.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $A $B $C --solvers es --budget 600 --seeds 1 -o es > es.log 2>&1) &
wait
(taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers random --budget 600 --seeds 1 -o random > random.log 2>&1) &
(for inst in $A $B $C; do n=${inst#suite:}
   taskset -c 1 python $R/benchmarks/agent_ablations.py --instance $inst --budget 600 --seeds 1 \
     --variants "search, no learning" -o frozen-$n > frozen-$n.log 2>&1
 done) &
wait
# after the placer's fix (commit after 24d6f0d: a local move starts only while the longest so far fits),
# the agent again on the largest program (its first run's placed solution landed 0.06 s after the budget):
taskset -c 0 python -m jaxmmap compare --instances $C --solvers muzero --budget 600 --seeds 1 -o muzero-nmt-after-fix > muzero-nmt-after-fix.log 2>&1
