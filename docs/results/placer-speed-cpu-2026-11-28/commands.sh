# 2026-11-28, twenty-second session: the placer's moves before (commit f7e184a, a worktree at /tmp/s22/wt) and after
# the change, one core, one process at a time (two at once on this machine's two virtual cores slow each other).
P="alexnet_train_b32@tpu_v4i resnet50_infer@gpu gpt_small_train@tpu_v4i-30 transformer_bf16_infer@tpu_v4i-30 resnet18_train@gpu gpt_medium_train@gpu transformer_bf16_train@gpu gen:5"
for r in 1 2; do
  PYTHONPATH=/tmp/s22/wt taskset -c 1 python moves_speed.py.txt 60 $P > before-$r.txt
  PYTHONPATH=/work/main taskset -c 1 python moves_speed.py.txt 60 $P > after-$r.txt
done
python table.py.txt > table.md
for v in before after; do
  if [ $v = before ]; then pp=/tmp/s22/wt; else pp=/work/main; fi
  PYTHONPATH=$pp taskset -c 1 python ../../../benchmarks/placer_speed.py --sizes 1000 5000 25000 > placer_speed-$v.txt
done
