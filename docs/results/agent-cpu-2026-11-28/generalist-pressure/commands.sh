#!/bin/bash
# issue 28 (2026-11-28): the generalist trained across memory pressures (configs/generalist.py:
# memory fractions 0.1-0.8, 28 generated programs), seeds 0-4, against the network shipped before (seed 3, fractions 0.3-0.8).
# Each candidate on one core (taskset), persistent cache off. The teacher's rows do not depend on the seed: the runs of
# seeds 0, 1, 2 and 4 started from a copy of seed 3's rows/ (without its own-1 rows); seed 0 was then trained again into
# an empty folder (same parameters to the last bit) and shipped.
export JAXMMAP_COMPILATION_CACHE=off
for S in 0 1 2 3 4; do
  taskset -c 0 python train.py --config configs/generalist.py --config.network.seed=$S --workdir W$S
  P=W$S/params.msgpack
  taskset -c 0 python benchmarks/generalist_correction.py --shares 0.5 --params $P > selection_seed$S.txt   # (the training split too)
  taskset -c 0 python benchmarks/generalist_correction.py --large --shares 0.5 --params $P > large_seed$S.txt
  taskset -c 0 python benchmarks/generalist_correction.py --pressure --shares 0.5 --params $P > pressure_seed$S.txt
done
# (pressure_seed{0,1,2,3}.txt and pressure_shipped-before.txt were written by the same games through
#  `python benchmarks/generalist_games.py --instances gen-300..309 --no-bound --params P`, the files of
#  `jaxmmap generate --seed 300+k --instructions (300,600,1000,1500,2500)[k%5] --memory-fraction (0.1,0.15,0.2)[k%3]
#  [--latency-tables if k even]`: the "ratio" column; for the network shipped before both ways gave the same ten ratios,
#  pressure_shipped-before.txt and pressure_shipped-before-correction.txt)
python score.py.txt   # the table of docs/agent.md: geometric means over the selection seeds, large, pressure, all 27
taskset -c 0 python train.py --config configs/generalist.py --config.ship=True --workdir W0
python benchmarks/generalist_games.py > generalist_games_heldout.txt   # held out, once, after the choice (both cores)
