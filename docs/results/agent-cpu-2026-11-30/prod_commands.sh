#!/bin/bash
# muzero-prod in the deferred game (early copy supply), its agent started from the heuristic's
# decisions (both its defaults now; given here as they were run), on the 15 suite instances with
# room (at most 12,000 buffers, the heuristic 1% or more below the LP bound), 300 s, seed 0
# (SEED=1 for seed 1); one core a run, two at a time, the persistent cache off.
# ../agent-cpu-2026-12-01/prod.md: both seeds at commit 78f35a3 (the expert's games cut short where
# they cannot beat the center; 2026-12-01, seed 0 then seed 1); prod_73a9917.md there: at commit
# 73a9917 (the directed games on greedy's scores). prod.md: both seeds at commit 69daab9 (the directed
# games on the network's logits; 2026-12-01, the seeds side by side, one core each);
# prod_rate.md: both seeds before them, every game deviating at a rate (2026-11-30, commit 440684d).
# Each run's JSON (`solve --json`) in out/; the table: python prod_collect.py. Run from an empty
# folder: bash prod_commands.sh (SUPPLY=edf: the edf copy supply, ../agent-cpu-2026-12-02/prod_edf.sh)
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
run() {  # CORE INSTANCE...
  core=$1; shift
  for i in "$@"; do
    taskset -c $core python -m jaxmmap solve suite:$i --solver muzero-prod --budget 300 --seed ${SEED:-0} \
      --placement deferred --copy-supply ${SUPPLY:-early} --option from_heuristic=true --json \
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
python "$(dirname "$0")/prod_collect.py" > prod.md
