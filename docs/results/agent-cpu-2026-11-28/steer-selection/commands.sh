#!/bin/bash
# A probe, not kept (2026-11-28: the shipped network's guide steering the placer's noisy moves.
# steer.patch.txt (against 16aa071) adds placer.place(steer=...): each noisy move orders the work items by the benefit
# estimate times exp(noise N(0,1) + steer * log-odds of fast memory under the guide, clipped to +-3); muzero's placed rounds
# pass the guide on every round. Pretrained muzero (the only one with a guide), selection programs (generated seeds 100-109;
# neither trained on nor held out), 60 s, one seed, steer 0 (the code of 16aa071) and 0.5 one core each at the same time.
# Usage, from this folder at 16aa071 with steer.patch.txt applied (git apply): bash commands.sh; then python ../each-start-selection/cmp.py.txt steer-0.0 steer-0.5
set -e
export JAXMMAP_COMPILATION_CACHE=off
I=""
for s in 100:40 101:80 102:150 103:300 104:500 105:800 106:1000 107:1200 108:300 109:600; do
  python -m jaxmmap generate --seed ${s%:*} --instructions ${s#*:} -o gen-${s%:*}.json.gz > /dev/null
  I="$I gen-${s%:*}.json.gz"
done
for v in 0.0:0 0.5:1; do
  (taskset -c ${v#*:} python run.py.txt ${v%:*} compare --instances $I --solvers muzero --budget 60 --seeds 1 --no-bound \
     --option muzero.pretrained=true -o steer-${v%:*} > steer-${v%:*}.log 2>&1) &
done
wait
rm -rf gen-1*.json.gz steer-*/problems
