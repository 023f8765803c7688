#!/usr/bin/env bash
# The GPU figures in one call of the device machine (about 5 minutes on one H100):
#
#     bash benchmarks/gpu_figures.sh            # writes under $OUT (else /tmp/gpu-figures)
#
# The device, the GPU test (`-m gpu`: batched games on the GPU equal them on the CPU), the env's
# throughput (batches up to 16,384) and its baseline with restores one game at a time in the
# same call, and the first 10,000 moves of one greedy game on the GPU (a single game is
# latency-bound there: whole large games take many minutes). Each step has its own time limit,
# so one that runs long leaves the others their time. Needs jax with CUDA, chex, flax, optax,
# scipy; the package runs from the checkout (PYTHONPATH), nothing is installed.
source "$(dirname "$0")/gpu_setup.sh" /tmp/gpu-figures
timeout 230 $PY benchmarks/env_throughput.py --batches 1 64 1024 4096 16384 --max-work 2e7 --repeats 1 \
    -o "$OUT/env_throughput.json" 2>&1 | tee "$OUT/env_throughput.txt"
timeout 40 $PY benchmarks/env_throughput.py --sizes 300 --batches 1024 --repeats 1 --restores one-at-a-time \
    2>&1 | tee "$OUT/env_throughput_one_at_a_time.txt"
timeout 50 $PY benchmarks/greedy_game.py --instructions 2500 17000 --checkpoints 16 --max-moves 10000 \
    2>&1 | tee "$OUT/greedy_game_gpu.txt"
