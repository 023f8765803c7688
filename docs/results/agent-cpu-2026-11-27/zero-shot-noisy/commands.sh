# 2026-11-27, fifteenth session, commit acc54d6 (the placer's noisy moves) with the shipped network,
# the whole 2-core CPU a run, one seed, compile included, persistent cache off. The generated programs:
#   jaxmmap generate --seed 1000 --instructions 40 -o gen-1000.json.gz   # 1001: 300, 1002: 1000, 1003: 3000, 1004: 8000
export JAXMMAP_COMPILATION_CACHE=off
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1000.json.gz gen-1001.json.gz gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu gen-1003.json.gz gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s
jaxmmap compare --instances suite:held-out gen-1000.json.gz gen-1001.json.gz gen-1002.json.gz gen-1003.json.gz gen-1004.json.gz \
  --solvers es --budget 60 --seeds 1 --no-bound -o es-heldout-60s
