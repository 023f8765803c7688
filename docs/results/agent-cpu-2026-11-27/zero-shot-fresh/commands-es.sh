# ES at 60 s on the same 13 held-out programs, after the generalist's runs of commands.sh (same commit and
# protocol: the whole 2-core CPU a run); run on its own (the third command of commands.sh, stopped there).
export JAXMMAP_COMPILATION_CACHE=off
G=/tmp/s19
jaxmmap compare --instances suite:held-out $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  $G/gen-1003.json.gz $G/gen-1004.json.gz --solvers es --budget 60 --seeds 1 --no-bound -o es-heldout-60s
