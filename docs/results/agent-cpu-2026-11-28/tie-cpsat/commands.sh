#!/bin/bash
# Is the fine-tuning tie on held-out wavenet_infer (1591.32, every muzero run, fresh and pretrained, 60 s and 300 s) its
# optimum? CP-SAT (`solvers.cpsat`, the exact model of the physical problem) from that solution, 600 s, one worker, one
# core, 2026-11-28). A measurement of the target, not a tuning: nothing was chosen by it.
# Run from this folder: bash commands.sh
taskset -c 1 python cp.py.txt wavenet_infer@tpu_v4i-30 ../finetune-each-start/muzero-fresh-300s/solutions/wavenet_infer@tpu_v4i-30.muzero.json.gz 600 > wavenet.log 2>&1
# The other two ties of fine-tuning at 300 s (alphatensor_like 218.867, nmt_infer 836.169;, the same
# way, one core each at the same time:
taskset -c 0 python cp.py.txt alphatensor_like@tpu_v4i-30 ../finetune-each-start/muzero-fresh-300s/solutions/alphatensor_like@tpu_v4i-30.muzero.json.gz 600 > alphatensor.log 2>&1 &
taskset -c 1 python cp.py.txt nmt_infer@tpu_v4i-30 ../finetune-each-start/muzero-fresh-300s/solutions/nmt_infer@tpu_v4i-30.muzero.json.gz 600 > nmt.log 2>&1 &
wait
