#!/bin/bash
# issue 27: ES and random again at 3,277 and 11,645 buffers after commit e5c4d92 (a game ended Drop-first alone
# is timed at `base.ALONE_RATE` moves a second at least: before it, both gave up their games there, in
# commands.sh's es/ and random/), 600 s, one core each at the same time, persistent cache off (2026-11-28,
#. The agent's and the frozen network's runs are commands.sh's (the fix does not
# reach them: the agent's slices end a game inside a batch of one). Run from this folder: bash commands-2.sh
export JAXMMAP_COMPILATION_CACHE=off
B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu
(taskset -c 0 python -m jaxmmap compare --instances $B $C --solvers es --budget 600 --seeds 1 --no-bound -o es-alone-rate > es-alone-rate.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $B $C --solvers random --budget 600 --seeds 1 --no-bound -o random-alone-rate > random-alone-rate.log 2>&1) &
wait
for n in wavenet_train@gpu nmt_train@gpu; do
  python -m jaxmmap latency suite:$n es-alone-rate/solutions/$n.es.json.gz random-alone-rate/solutions/$n.random.json.gz --baseline-budget 10
done > latency-alone-rate.json
