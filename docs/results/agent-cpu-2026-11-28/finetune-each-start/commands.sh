#!/bin/bash
# issue 28: fine-tuning after muzero's first placed round descends from each start (its game's placement, the placement of
# no decisions, and with muzero.pretrained=true that with the shipped network's guide read in; twenty-sixth session, 2026-11-28),
# muzero fresh against --option muzero.pretrained=true, one core each at the same time, persistent cache off.
# Run from this folder: bash commands.sh [budgets...] (default 60)
export JAXMMAP_COMPILATION_CACHE=off
python -m jaxmmap generate --seed 1001 --instructions 300 -o gen-1001.json.gz
python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
I="suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1001.json.gz gen-1002.json.gz"
for B in ${@:-60}; do
(taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget $B --seeds 1 --no-bound -o muzero-fresh-${B}s > fresh-${B}s.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget $B --seeds 1 --no-bound --option muzero.pretrained=true -o muzero-pretrained-${B}s > pretrained-${B}s.log 2>&1) &
wait
done
rm -f gen-1001.json.gz gen-1002.json.gz
