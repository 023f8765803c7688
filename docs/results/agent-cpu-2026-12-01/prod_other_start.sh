#!/bin/bash
# muzero-prod with the descents from its other start in the seconds its first start's leave (the
# agent's placed game and the heuristic's solution; `solvers.agents.OTHER_START_S`), on the 9 suite
# programs of prod.md where a run ended early (before 290 s), both seeds, 300 s, prod.md's protocol
# (prod_commands.sh in ../agent-cpu-2026-11-30/): one core a seed, the seeds side by side, the
# persistent cache off (2026-12-01). On the other 6 the first start's descents used the whole
# budget, so the other start never runs. Run from an empty folder: bash prod_other_start.sh; then
# python prod_other_start.py > prod_other_start.txt (each run beside prod.md's).
# `bash prod_other_start.sh PROGRAM...` runs those programs instead (prod_plan_start.sh).
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
PROGRAMS=${*:-alexnet_train_b32@tpu_v4i gpt_small_train@tpu_v4i-30 mnasnet_infer@tpu_v4i-30 nmt_infer@tpu_v4i-30 \
  resnet18_infer@tpu_v4i-30 resnet18_train@gpu resnet50_infer@dram_pmem-25 resnet50_infer@gpu \
  transformer_bf16_infer@tpu_v4i-30}
run() {  # CORE SEED
  for i in $PROGRAMS; do
    taskset -c $1 python -m jaxmmap solve suite:$i --solver muzero-prod --budget 300 --seed $2 \
      --placement deferred --copy-supply early --option from_heuristic=true --json \
      -o out/${i//@/_}-s$2.sol.json > out/${i//@/_}-s$2.json 2> out/${i//@/_}-s$2.log
  done
}
mkdir -p out
run 0 0 & run 1 1 & wait
