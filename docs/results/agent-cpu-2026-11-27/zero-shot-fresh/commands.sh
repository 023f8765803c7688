# 2026-11-27, nineteenth session, commit 23c2c4d (the placer also starts from no decisions where that is
# higher, placer.FRESH; the slices as before this session), the shipped
# network unchanged, one seed, compile included, persistent cache off, the whole 2-core CPU a run (one core
# is too slow for the generalist's compile at 10 s: on nmt_infer@tpu_v4i-30 the first slice took 10.1 s).
# The generated programs:
#   jaxmmap generate --seed 1000 --instructions 40 -o gen-1000.json.gz   # 1001: 300, 1002: 1000, 1003: 3000, 1004: 8000
export JAXMMAP_COMPILATION_CACHE=off
G=/tmp/s19
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu $G/gen-1003.json.gz $G/gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s
jaxmmap compare --instances suite:held-out $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  $G/gen-1003.json.gz $G/gen-1004.json.gz --solvers es --budget 60 --seeds 1 --no-bound -o es-heldout-60s
# with-slices-fix-aeac265/: the same runs at commit aeac265, whose slices stopped on the moves' own rate and at
# once where the games could not end (reverted: the placer of large programs was left no time).
