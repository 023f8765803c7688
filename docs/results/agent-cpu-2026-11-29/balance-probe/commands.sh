#!/bin/bash
# issue 28 (2026-11-29): a probe, not kept. Balanced batches: each training program's rows drawn
# alike (`balance.patch.txt`: GeneralistConfig.balance, rows weighted by their program's rows to the power -balance; 0,
# the shipped recipe, draws every row alike, so a program weighs by its size). Judged by the rule that chose the shipped
# network (the geometric mean of the network's own greedy game over greedy's on 27 programs neither trained on nor held
# out), against the five seeds of the shipped recipe (../../agent-cpu-2026-11-28/generalist-pressure/). Not run on the
# held-out split. Apply the patch first (git apply balance.patch.txt), from the repository root:
export JAXMMAP_COMPILATION_CACHE=off
for S in 0 1; do   # one core each, at the same time
  taskset -c $S python train.py --config configs/generalist.py --config.network.seed=$S --config.network.balance=1.0 --workdir W$S
  P=W$S/params.msgpack
  taskset -c $S python benchmarks/generalist_correction.py --shares 0.5 --params $P > selection_bal$S.txt
  taskset -c $S python benchmarks/generalist_correction.py --large --shares 0.5 --params $P > large_bal$S.txt
  taskset -c $S python benchmarks/generalist_correction.py --pressure --shares 0.5 --params $P > pressure_bal$S.txt
done
# with the shipped recipe's files copied beside (selection_seed*.txt, large_seed*.txt, pressure_seed*.txt):
python score.py.txt seed0 seed1 seed2 seed3 seed4 bal0 bal1 > score.txt
# Diagnostics of the held-out miss, measured after, choosing nothing (no network was changed by them):
# the five seeds of the shipped recipe (/tmp/s23/cand1s{0..4}: seeds 0-4 of on the two programs
# where learning does not show, and the teacher's game on wavenet_infer against greedy's:
#   python benchmarks/generalist_games.py --instances suite:wavenet_infer@tpu_v4i-30 suite:alphatensor_like_train@gpu-50 --no-bound --params P
#   python teacher_diag.py.txt wavenet_infer@tpu_v4i-30 > heldout_teacher_diagnostic.txt
