#!/usr/bin/env bash
# Issue 26's GPU figures in one call of the device machine (about 6 minutes on one H100):
#
#     bash benchmarks/gpu_figures.sh            # writes under $OUT (else /tmp/gpu-figures)
#
# The device, the GPU test (`-m gpu`: batched games on the GPU equal them on the CPU), the env's
# throughput (batches up to 16,384), the first 10,000 moves of one greedy game on the GPU (a
# single game is latency-bound there: whole large games take many minutes) and, for the same
# machine's CPU, the whole greedy table (`JAX_PLATFORMS=cpu`). Each step has its own time limit,
# so one that runs long leaves the others their time. Needs jax with CUDA, chex, flax, optax,
# scipy; the package runs from the checkout (PYTHONPATH), nothing is installed.
set -u
OUT=${OUT:-/tmp/gpu-figures}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 JAXMMAP_COMPILATION_CACHE=off
PY=${PYTHON:-python3}
date -u | tee "$OUT/device.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/device.txt"
$PY -c "import jax; print('jax', jax.__version__, jax.devices())" 2>&1 | tail -1 | tee -a "$OUT/device.txt"
nproc | sed 's/^/cpu cores: /' | tee -a "$OUT/device.txt"
timeout 90 $PY -m pytest -q -p no:cacheprovider -o addopts="" -m gpu tests/test_slow.py 2>&1 | tail -3 | tee "$OUT/gpu_tests.txt"
timeout 210 $PY benchmarks/env_throughput.py --batches 1 64 1024 4096 16384 --max-work 1e8 \
    -o "$OUT/env_throughput.json" 2>&1 | tee "$OUT/env_throughput.txt"
timeout 90 $PY benchmarks/greedy_game.py --instructions 2500 6000 17000 --checkpoints 16 --max-moves 10000 \
    2>&1 | tee "$OUT/greedy_game_gpu.txt"
JAX_PLATFORMS=cpu timeout 120 $PY benchmarks/greedy_game.py 2>&1 | tee "$OUT/greedy_game_cpu.txt"
