#!/bin/bash
# ES at 60 s on the held-out programs above 4,096 buffers, with its population sized to the program
set -e
for s in 1003 1004; do i=(40 300 1000 3000 8000); jaxmmap generate --seed $s --instructions ${i[s-1000]} -o gen-$s.json.gz; done
export JAXMMAP_COMPILATION_CACHE=$(mktemp -d)
R="--budget 60 --placement deferred --copy-supply early --no-bound"
jaxmmap compare --instances suite:mnasnet_train@gpu suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu --solvers es $R -o train-es
jaxmmap compare --instances gen-1003.json.gz gen-1004.json.gz --solvers es $R -o generated-es
