# Sourced by the device scripts (`source benchmarks/gpu_setup.sh DEFAULT_OUT`: gpu_figures.sh,
# gpu_generalist.sh): $OUT (else DEFAULT_OUT), the package from the checkout (PYTHONPATH, nothing
# installed), $PY, the persistent compilation cache off; the device into $OUT/device.txt and the
# GPU test (`-m gpu`) into $OUT/gpu_tests.txt; `timed`.
set -u
OUT=${OUT:-$1}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 JAXMMAP_COMPILATION_CACHE=off
PY=${PYTHON:-python3}
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  $PY -c "import jax; print('jax', jax.__version__, jax.devices())" 2>&1 | tail -1
  nproc | sed 's/^/cpu cores: /'; } | tee "$OUT/device.txt"
timeout 100 $PY -m pytest -q -p no:cacheprovider -o addopts="" -m gpu tests/test_slow.py 2>&1 | tail -3 \
  | tee "$OUT/gpu_tests.txt"

timed() {  # timed NAME LIMIT COMMAND...: the command's output and its seconds, added to $OUT/NAME.txt
  local name=$1 limit=$2 t0
  shift 2
  t0=$(date +%s.%N)
  timeout "$limit" "$@" >>"$OUT/$name.txt" 2>&1
  echo "exit $? after $($PY -c "import time; print(f'{time.time() - $t0:.1f}')") s: $*" | tee -a "$OUT/$name.txt"
}
