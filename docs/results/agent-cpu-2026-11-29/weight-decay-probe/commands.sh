#!/bin/bash
# issue 28 (2026-11-29): the generalist with ten times the weight decay (1e-3, the shipped 1e-4),
# seeds 0 and 1, judged by the rule that chose the shipped network (the geometric mean of the network's own greedy game
# over greedy's on 27 programs neither trained on nor held out). No code change: a config override. From the repository
# root; W0, W1 began with the teacher's rows of ../balance-probe's W0 (they do not depend on the network).
export JAXMMAP_COMPILATION_CACHE=off
for S in 0 1; do   # one core each, at the same time
  taskset -c $S python train.py --config configs/generalist.py --config.network.seed=$S --config.network.weight_decay=1e-3 --workdir W$S
  P=W$S/params.msgpack
  taskset -c $S python benchmarks/generalist_correction.py --shares 0.5 --params $P > selection_wd$S.txt
  taskset -c $S python benchmarks/generalist_correction.py --large --shares 0.5 --params $P > large_wd$S.txt
  taskset -c $S python benchmarks/generalist_correction.py --pressure --shares 0.5 --params $P > pressure_wd$S.txt
done
# with the shipped recipe's and ../balance-probe's files copied beside:
python score.py.txt seed0 seed1 seed2 seed3 seed4 bal0 bal1 wd0 wd1 > score.txt
# the rule's choice (wd0), measured once on the held-out split (both cores):
python benchmarks/generalist_games.py --params W0/params.msgpack > generalist_games_heldout_wd0.txt
