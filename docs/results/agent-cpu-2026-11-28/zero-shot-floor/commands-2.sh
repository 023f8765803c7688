# 2026-11-28, commit bdd1ce2: the generalist's greedy game keeps its first-solution grace again (at commit
# 3101487, commands.sh, it had none inside `solve` and was cut on all 7 programs at 10 s: those runs are
# generalist-heldout-{10,30}s-no-grace/); the placer places nothing once past its deadline. ES's runs
# (es-heldout-60s/, commands.sh) are not run again. Same protocol as commands.sh.
export JAXMMAP_COMPILATION_CACHE=off
G=/tmp/s20
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s-grace
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu $G/gen-1003.json.gz $G/gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s-grace
