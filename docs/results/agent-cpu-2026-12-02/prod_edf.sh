#!/bin/bash
# muzero-prod in the deferred game with the edf copy supply (`--copy-supply edf`), otherwise as
# ../agent-cpu-2026-11-30/prod_commands.sh (the early supply, prod's default): the 15 suite
# instances with room, 300 s, seed 0, one core a run, two at a time, the persistent cache off.
# prod_edf.md: 2026-12-02, commit e8f104f. Run from an empty folder: bash prod_edf.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
run() {  # CORE INSTANCE...
  core=$1; shift
  for i in "$@"; do
    taskset -c $core python -m jaxmmap solve suite:$i --solver muzero-prod --budget 300 --seed ${SEED:-0} \
      --placement deferred --copy-supply edf --option from_heuristic=true --json \
      -o out/${i//@/_}-s${SEED:-0}.sol.json > out/${i//@/_}-s${SEED:-0}.json 2> out/${i//@/_}-s${SEED:-0}.log
  done
}
mkdir -p out
run 0 alexnet_train_b32@tpu_v4i resnet50_infer@gpu gpt_small_train@tpu_v4i-30 resnet18_train@gpu \
  gpt_medium_train@gpu resnet50_train@tpu_v4i mnasnet_train@gpu &
run 1 resnet18_infer@tpu_v4i-30 resnet50_infer@dram_pmem-25 mnasnet_infer@tpu_v4i-30 \
  transformer_bf16_infer@tpu_v4i-30 nmt_infer@tpu_v4i-30 gpt_train_donated@gpu \
  transformer_bf16_train@gpu nmt_train@gpu &
wait
python "$R/docs/results/agent-cpu-2026-11-30/prod_collect.py" > prod_edf.md
