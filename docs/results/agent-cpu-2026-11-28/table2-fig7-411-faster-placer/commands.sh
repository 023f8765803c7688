#!/bin/bash
# issue 27: Table 2 (agent, ES, random) and Figure 7 (the agent against its frozen network) at 600 s on the smallest of the
# three programs only (alexnet_train_b32@tpu_v4i, 411 buffers), after the placer's moves were made 1.2-2.4x faster
#, commit 8e95cdc), the commands of ../table2-fig7-600s-floor/commands.sh restricted to it:
# one core a run, two at a time, persistent cache off. Run from this folder: bash commands.sh
export JAXMMAP_COMPILATION_CACHE=off
R=../../../..
A=suite:alexnet_train_b32@tpu_v4i; n=alexnet_train_b32@tpu_v4i
(taskset -c 0 python -m jaxmmap compare --instances $A --solvers muzero --budget 600 --seeds 1 --option muzero.place_share=0.5 -o muzero > muzero.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $A --solvers es --budget 600 --seeds 1 -o es > es.log 2>&1) &
wait
(taskset -c 0 python -m jaxmmap compare --instances $A --solvers random --budget 600 --seeds 1 -o random > random.log 2>&1) &
(taskset -c 1 python $R/benchmarks/agent_ablations.py --instance $A --budget 600 --seeds 1 \
   --variants "search, no learning" -o frozen-$n > frozen-$n.log 2>&1) &
wait
python -m jaxmmap latency $A muzero/solutions/$n.muzero.json.gz es/solutions/$n.es.json.gz \
  random/solutions/$n.random.json.gz frozen-$n/solutions/$n.search__no_learning-*.json.gz --baseline-budget 10 > latency.json
