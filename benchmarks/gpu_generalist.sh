#!/usr/bin/env bash
# The generalist's GPU figures in one call of the device machine (5.4 minutes on one H200, 2026-11-28):
#
#     bash benchmarks/gpu_generalist.sh            # writes under $OUT (else /tmp/gpu-generalist)
#
# The device; the GPU test (`-m gpu`); the generalist's pretraining (`train.py --config
# configs/generalist.py`, a small run: 4 generated programs, no suite instances, the imitation and
# its DAgger round) on the GPU and, at the same time, on one CPU core of the same machine
# (JAX_PLATFORMS=cpu, taskset): the baseline in the same call; then `solve --solver generalist` on
# three held-out programs at the issue's budgets, on the GPU and on one CPU core at once. Each step
# has its own time limit. Needs jax with CUDA, chex, flax, optax, scipy, mctx, ml_collections; the
# package runs from the checkout (PYTHONPATH), nothing is installed.
source "$(dirname "$0")/gpu_setup.sh" /tmp/gpu-generalist
small=(train.py --config configs/generalist.py --config.generated=4 --config.suite_max_buffers=0)
timed pretrain_gpu 270 $PY "${small[@]}" --workdir /tmp/pretrain-gpu &
timed pretrain_cpu 270 env JAX_PLATFORMS=cpu taskset -c 2 $PY "${small[@]}" --workdir /tmp/pretrain-cpu &
wait
for w in gpu cpu; do
  $PY -c "import json, sys; s = json.load(open(sys.argv[1])); print(sys.argv[2], 'decisions', s['decisions'],
  'accuracy', s['accuracy'], 'rounds', s.get('rounds'))" "/tmp/pretrain-$w/summary.json" "$w" 2>&1 | tail -1 \
    | tee -a "$OUT/pretrain_summary.txt"
done

zero_shot() {  # zero_shot DEVICE PREFIX...: solve --solver generalist on three held-out programs
  local where=$1
  shift
  for run in suite:mnasnet_infer@tpu_v4i-30:10 suite:nmt_infer@tpu_v4i-30:10 suite:wavenet_train@gpu:30; do
    timed "zero_shot_$where" 90 "$@" $PY -m jaxmmap solve "${run%:*}" --solver generalist \
      --budget "${run##*:}" --columns auto
  done
}
zero_shot gpu &
zero_shot cpu env JAX_PLATFORMS=cpu taskset -c 3 &
wait
grep -h "^exit\|written\|return" "$OUT"/zero_shot_*.txt
