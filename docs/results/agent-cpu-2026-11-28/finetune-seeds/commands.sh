#!/bin/bash
# issue 28: fine-tuning at 60 s with three seeds (0, 1, 2) a program, 2026-11-28; code of 16aa071,
# the same muzero as finetune-each-start/, whose seed 0 this repeats): muzero fresh against --option muzero.pretrained=true,
# one core each at the same time, persistent cache off. Run from this folder: bash commands.sh; then python finetune_seeds.py.txt
export JAXMMAP_COMPILATION_CACHE=off
python -m jaxmmap generate --seed 1001 --instructions 300 -o gen-1001.json.gz
python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
I="suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1001.json.gz gen-1002.json.gz"
(taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget 60 --seeds 3 --no-bound -o fresh-60s > fresh-60s.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget 60 --seeds 3 --no-bound --option muzero.pretrained=true -o pretrained-60s > pretrained-60s.log 2>&1) &
wait
rm -rf gen-1001.json.gz gen-1002.json.gz fresh-60s/problems pretrained-60s/problems
