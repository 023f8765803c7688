# 2026-11-28, twenty-second session, commit 0c05c7a (the placer's moves 1.2-1.7x faster, the same moves; after e5c4d92: a game ended Drop-first alone is no longer timed at its
# batch's rate), the shipped network unchanged, one seed, compile included, persistent cache off, the whole 2-core CPU a
# run, one run at a time. Same commands as ../zero-shot-floor/commands.sh (ES at 60 s; the generalist at 10 s and 30 s).
#   jaxmmap generate --seed 1000 --instructions 40 -o gen-1000.json.gz   # 1001: 300, 1002: 1000, 1003: 3000, 1004: 8000
export JAXMMAP_COMPILATION_CACHE=off
G=/tmp/s22/G  # the five generated programs (the commands above)
jaxmmap compare --instances suite:held-out $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  $G/gen-1003.json.gz $G/gen-1004.json.gz --solvers es --budget 60 --seeds 1 --no-bound -o es-heldout-60s
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s-faster-moves
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu $G/gen-1003.json.gz $G/gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s-faster-moves
