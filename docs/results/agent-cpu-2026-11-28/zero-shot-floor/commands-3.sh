# 2026-11-28, commit b9bad0a: the generalist's 10 s runs with JAX's persistent compilation cache ON (the command
# line's default), the cache filled by a first run of the same command (not kept), the second run measured.
export JAXMMAP_COMPILATION_CACHE=/tmp/s20/xla-cache
rm -rf $JAXMMAP_COMPILATION_CACHE
G=/tmp/s20
for out in /tmp/s20/warmup generalist-heldout-10s-warm-cache; do
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o $out
done
