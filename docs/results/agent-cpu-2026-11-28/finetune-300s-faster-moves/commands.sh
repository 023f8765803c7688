#!/bin/bash
# issue 28: fine-tuning at 300 s again after commit e5c4d92 (a game ended Drop-first alone is no longer timed at its batch's
# rate), twenty-second session, commit 3e7b023 (the placer's moves 1.2-1.7x faster, the same moves), muzero fresh against --option muzero.pretrained=true, one core each at the
# same time, persistent cache off (2026-11-28). Run from this folder: bash commands.sh
export JAXMMAP_COMPILATION_CACHE=off
python -m jaxmmap generate --seed 1001 --instructions 300 -o gen-1001.json.gz
python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
I="suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1001.json.gz gen-1002.json.gz"
for B in 300; do
(taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget $B --seeds 1 --no-bound -o muzero-fresh-${B}s > fresh-${B}s.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget $B --seeds 1 --no-bound --option muzero.pretrained=true -o muzero-pretrained-${B}s > pretrained-${B}s.log 2>&1) &
wait
done
