#!/bin/bash
# issue 27: Table 2 at 600 s (agent, ES, random) and Figure 7 at 600 s (the agent against its
# frozen network, the agent's runs being Table 2's), three sizes, one core a run, two at a time,
# persistent cache off (2026-11-28: commit 6d9e8e4, the placement of no decisions the floor of every placed run;
# run from a worktree of that commit, PYTHONPATH set to it; muzero's place_share 0.5 is its default, given as before).
# Run from this folder: bash commands.sh
export JAXMMAP_COMPILATION_CACHE=off
R=../../../..
A=suite:alexnet_train_b32@tpu_v4i; B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu
(taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers muzero --budget 600 --seeds 1 --option muzero.place_share=0.5 -o muzero > muzero.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $A $B $C --solvers es --budget 600 --seeds 1 -o es > es.log 2>&1) &
wait
(taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers random --budget 600 --seeds 1 -o random > random.log 2>&1) &
(for inst in $A $B $C; do n=${inst#suite:}
   taskset -c 1 python $R/benchmarks/agent_ablations.py --instance $inst --budget 600 --seeds 1 \
     --variants "search, no learning" -o frozen-$n > frozen-$n.log 2>&1
 done) &
wait
# simulated latencies and speed-ups over the heuristic (its solver, 10 s: it ends in seconds there) of every written solution (latency.json):
for n in alexnet_train_b32@tpu_v4i wavenet_train@gpu nmt_train@gpu; do
  python -m jaxmmap latency suite:$n muzero/solutions/$n.muzero.json.gz es/solutions/$n.es.json.gz \
    random/solutions/$n.random.json.gz frozen-$n/solutions/$n.search__no_learning-*.json.gz --baseline-budget 10
done > latency.json
