# 2026-11-27, commit 57977a6; one core a run (taskset), two at a time;
# persistent cache off; seed 0 for every instance, then seed 1. Each run's JSON (`solve`'s
# output: return, speed-up over the heuristic, seconds, info) was written to /tmp and
# summarised in results.md by the table's script (collect.py here).
export JAXMMAP_COMPILATION_CACHE=off
run() {  # CORE INSTANCE...
  core=$1; shift
  for seed in 0 1; do
    for i in "$@"; do
      taskset -c $core jaxmmap solve suite:$i --solver muzero-prod --budget 300 --seed $seed \
        -o out/${i//@/_}-s$seed.sol.json > out/${i//@/_}-s$seed.json
    done
  done
}
mkdir -p out
run 0 alexnet_train_b32@tpu_v4i resnet50_infer@gpu gpt_small_train@tpu_v4i-30 resnet18_train@gpu \
  gpt_medium_train@gpu resnet50_train@tpu_v4i mnasnet_train@gpu &
run 1 resnet18_infer@tpu_v4i-30 resnet50_infer@dram_pmem-25 mnasnet_infer@tpu_v4i-30 \
  transformer_bf16_infer@tpu_v4i-30 nmt_infer@tpu_v4i-30 gpt_train_donated@gpu \
  transformer_bf16_train@gpu nmt_train@gpu &
wait
python collect.py > results.md
# ablation.txt: the heuristic and the placer alone (no agent), 300 s, one core each
JAXMMAP_COMPILATION_CACHE=off taskset -c 0 python ablation.py alexnet_train_b32@tpu_v4i resnet50_infer@gpu &
JAXMMAP_COMPILATION_CACHE=off taskset -c 1 python ablation.py resnet50_train@tpu_v4i gpt_medium_train@gpu &
wait
