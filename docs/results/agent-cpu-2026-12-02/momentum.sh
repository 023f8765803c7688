#!/bin/bash
# The expert's directed games drawn around the direction of the last directed game that raised the
# center (momentum.patch, applied to a copy of the package at commit ca6ab80, JAXMMAP_MOMENTUM=1)
# against without (JAXMMAP_MOMENTUM=0: the same games as the package's): the generated tuning program of 9,060
# buffers, muzero, 300 s, --no-place, the deferred game with the early copy supply, seeds 0 and 1,
# the two variants of a seed side by side, one core each, the persistent cache off. Run from an
# empty folder with P the patched copy: P=/path/to/patched bash momentum.sh (momentum.txt: 2026-12-02).
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$P
python -m jaxmmap generate --seed 2003 --instructions 3000 -o gen-2003.json.gz
run() { # CORE VARIANT SEED
  JAXMMAP_MOMENTUM=$2 taskset -c $1 python -m jaxmmap solve gen-2003.json.gz --solver muzero --budget 300 --seed $3 --no-place \
    --placement deferred --copy-supply early --json -o m$2-s$3.sol.json.gz > m$2-s$3.json 2> m$2-s$3.log
}
for s in 0 1; do run 0 0 $s & run 1 1 $s & wait; done
for f in m*-s*.json; do python -c "
import json; d=json.load(open('$f')); i=d['info']; print('$f', d['return'], d['valid'], round(d['seconds']), i.get('iterations'), i.get('restarts'))"; done
