# 2026-11-27. The placer from greedy's game with and without `fresh` (a second start from
# no decisions), one core a run, persistent cache off. The 20 s runs used the code of commit 30b3d98 before its
# metadata fix (a "*" after a return, the result made from no decisions, shows only where no move improved it);
# the 60 s run used that commit with the fix (every such result marked).
export JAXMMAP_COMPILATION_CACHE=off
V="_:64:0.35:3 _:64:0.35:3:1"
taskset -c 0 python benchmarks/placer_moves.py --budget 20 --variants $V --programs alexnet_train_b32@tpu_v4i \
  resnet50_infer@gpu gpt_small_train@tpu_v4i-30 transformer_bf16_infer@tpu_v4i-30 resnet18_train@gpu gen:100 > placer_fresh_20s_a.txt
taskset -c 1 python benchmarks/placer_moves.py --budget 20 --variants $V --programs gpt_medium_train@gpu \
  transformer_bf16_train@gpu resnet50_train@tpu_v4i gpt_train_donated@gpu gen:101 gen:102 > placer_fresh_20s_b.txt
taskset -c 1 python benchmarks/placer_moves.py --budget 60 --variants $V --programs alexnet_train_b32@tpu_v4i \
  gpt_small_train@tpu_v4i-30 resnet18_train@gpu gpt_medium_train@gpu resnet50_train@tpu_v4i > placer_fresh_60s.txt
