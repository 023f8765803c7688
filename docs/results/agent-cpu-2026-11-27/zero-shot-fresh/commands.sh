# 2026-11-27, nineteenth session, commit 79bc78d (the placer also starts from no decisions where that is
# higher, placer.FRESH; slices that cannot end stop at once), the shipped network unchanged, one seed,
# compile included, persistent cache off. One core a run (taskset; the generalist's and ES's runs side by
# side; before, the whole 2-core CPU a run). The generated programs:
#   jaxmmap generate --seed 1000 --instructions 40 -o gen-1000.json.gz   # 1001: 300, 1002: 1000, 1003: 3000, 1004: 8000
export JAXMMAP_COMPILATION_CACHE=off
G=/tmp/s19
taskset -c 1 jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s
taskset -c 1 jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu $G/gen-1003.json.gz $G/gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s
