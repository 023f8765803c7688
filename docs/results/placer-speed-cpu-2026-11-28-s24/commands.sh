#!/bin/bash
# 2026-11-28: the placer's moves before (commit 863b8c7, a git worktree at /tmp/s24/wt) and after
# the change, one core, one process at a time (two at once on this machine's two virtual cores slow each other).
# moves_speed.py.txt and table.py.txt are (../placer-speed-cpu-2026-11-28/).
export JAXMMAP_COMPILATION_CACHE=off
P="alexnet_train_b32@tpu_v4i resnet50_infer@gpu gpt_small_train@tpu_v4i-30 transformer_bf16_infer@tpu_v4i-30 resnet18_train@gpu gpt_medium_train@gpu transformer_bf16_train@gpu gen:5"
for r in 1 2; do
  PYTHONPATH=/tmp/s24/wt taskset -c 0 python moves_speed.py.txt 60 $P > before-$r.txt
  PYTHONPATH=/work/main taskset -c 0 python moves_speed.py.txt 60 $P > after-$r.txt
done
python table.py.txt > table.md
# the same, by size, on generated programs from the pinning greedy's solution, 40 moves (the benchmark runs 863b8c7 itself)
(cd ../../.. && taskset -c 0 python benchmarks/placer_speed.py --sizes 1000 3000 10000 25000 --moves 40 --against 863b8c7) > placer_speed.txt
