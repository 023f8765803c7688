#!/bin/bash
# Is the fine-tuning tie on held-out wavenet_infer (1591.32, every muzero run, fresh and pretrained, 60 s and 300 s) its
# optimum? CP-SAT (`solvers.cpsat`, the exact model of the physical problem) from that solution, 600 s, one worker, one
# core (twenty-seventh session, 2026-11-28). A measurement of the target, not a tuning: nothing was chosen by it.
# Run from this folder: bash commands.sh
taskset -c 1 python cp.py.txt wavenet_infer@tpu_v4i-30 ../finetune-each-start/muzero-fresh-300s/solutions/wavenet_infer@tpu_v4i-30.muzero.json.gz 600 > wavenet.log 2>&1
