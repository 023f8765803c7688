#!/bin/bash
# muzero-prod with its third start, the heuristic's plan before its local moves, descended in the
# seconds its first two starts' descents leave (`solvers.agents.OTHER_START_S`), on the 6 suite
# programs of prod_other_start.txt where the plan can be reached: a run there ended 10 s or more
# before its budget, and the heuristic's local moves kept some (else the plan is its solution).
# Both seeds, 300 s, prod.md's protocol (prod_commands.sh in ../agent-cpu-2026-11-30/): one core a
# seed, the seeds side by side, the persistent cache off (2026-12-01). Run from an empty folder:
# bash prod_plan_start.sh; then python prod_plan_start.py > prod_plan_start.txt.
bash "$(dirname "$0")/prod_other_start.sh" alexnet_train_b32@tpu_v4i resnet18_infer@tpu_v4i-30 resnet50_infer@gpu \
  transformer_bf16_infer@tpu_v4i-30 gpt_small_train@tpu_v4i-30 resnet18_train@gpu
