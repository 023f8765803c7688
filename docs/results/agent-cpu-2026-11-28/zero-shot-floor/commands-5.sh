# 2026-11-28, commit b9bad0a: ES at 60 s with the persistent compilation cache ON and warm, for a fair comparison with
# commands-3.sh and commands-4.sh: the cache filled by a first run at 10 s (the same shapes: ES's compiled programs do not
# depend on the budget), the 60 s run measured.
export JAXMMAP_COMPILATION_CACHE=/tmp/s20/xla-cache-es
rm -rf $JAXMMAP_COMPILATION_CACHE
G=/tmp/s20
for b in 10 60; do
out=es-heldout-60s-warm-cache; [ $b = 10 ] && out=/tmp/s20/warmup-es
jaxmmap compare --instances suite:held-out $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  $G/gen-1003.json.gz $G/gen-1004.json.gz --solvers es --budget $b --seeds 1 --no-bound -o $out
done
