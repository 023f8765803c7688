# 2026-11-28, commit b9bad0a: the generalist's 30 s runs with the persistent compilation cache ON, as commands-3.sh
# (the cache filled by a first run of the same command, the second run measured).
export JAXMMAP_COMPILATION_CACHE=/tmp/s20/xla-cache-30
rm -rf $JAXMMAP_COMPILATION_CACHE
G=/tmp/s20
for out in /tmp/s20/warmup-30 generalist-heldout-30s-warm-cache; do
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu $G/gen-1003.json.gz $G/gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o $out
done
