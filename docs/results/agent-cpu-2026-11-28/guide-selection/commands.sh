#!/bin/bash
# 2026-11-28, twenty-fifth session: the generalist with its guide (on, the default) against the same network without it
# (--option generalist.guide=false), at 10 s, 3 seeds, on the selection programs (generated seeds 100-109: neither trained on nor
# held out), one core each at the same time, persistent cache off. Table: python cmp3.py.txt guide-10s-3 noguide-10s-3
export JAXMMAP_COMPILATION_CACHE=off
for sc in 100:40 101:80 102:150 103:300 104:500 105:800 106:1000 107:1200 108:300 109:600; do
  python -m jaxmmap generate --seed ${sc%:*} --instructions ${sc#*:} -o gen-${sc%:*}.json.gz; done
I=$(ls gen-10?.json.gz)
taskset -c 0 python -m jaxmmap compare --instances $I --solvers generalist --budget 10 --seeds 3 --no-bound -o guide-10s-3 &
taskset -c 1 python -m jaxmmap compare --instances $I --solvers generalist --budget 10 --seeds 3 --no-bound \
  --option generalist.guide=false -o noguide-10s-3
wait
python cmp3.py.txt guide-10s-3 noguide-10s-3
