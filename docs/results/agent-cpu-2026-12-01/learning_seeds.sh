#!/bin/bash
# Does the expert's learning pay, and at which learning rate? The agent (`muzero`, the expert
# mode) with its network frozen (learning_rate 0), at its default rate (1e-3) and at lower ones,
# on the two generated tuning programs outside the held-out split (seeds 2001 and 2002: 3,001 and
# 8,999 buffers), 200 s, the game's own return (--no-place), the deferred game with the early copy
# supply, seeds 0 to 2 (1e-4 and 3e-5: seed 0); one core a run, two at a time, the persistent
# cache off (2026-11-30 and 2026-12-01, commit 69daab9; the seed-0 runs of frozen, 1e-3 and 1e-4
# were `compare` runs of the same solver, seed and agent code). learning_seeds.txt: python
# learning_collect.py
# Run from an empty folder: bash learning_seeds.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
python -m jaxmmap generate --seed 2001 --instructions 1000 -o tune-2001.json.gz
python -m jaxmmap generate --seed 2002 --instructions 3000 -o tune-2002.json.gz
run() {  # CORE NAME SEED LEARNING_RATE
  for p in tune-2002 tune-2001; do
    taskset -c $1 python -m jaxmmap solve $p.json.gz --solver muzero --budget 200 --seed $3 --no-place \
      --placement deferred --copy-supply early --baseline-budget 0 --json --option learning_rate=$4 \
      -o s$3-$2-$p.sol.json.gz > s$3-$2-$p.json 2> s$3-$2-$p.log
  done
}
(for s in 0 1 2; do run 0 frozen $s 0.0; run 0 lr1e3 $s 0.001; done; run 0 lr1e4 0 0.0001) &
(for s in 0 1 2; do run 1 lr3e4 $s 0.0003; done; run 1 lr3e5 0 0.00003) &
wait
python "$(dirname "$0")/learning_collect.py" > learning_seeds.txt
# Where the generations go: the seed-0 runs at 8,999 buffers again, frozen and at 1e-3, each with a
# workdir (its metrics.jsonl); learning_generations.txt: python learning_generations.py wd-frozen wd-learn
for v in "frozen 0.0 0" "learn 0.001 1"; do set -- $v
  taskset -c $3 python -m jaxmmap solve tune-2002.json.gz --solver muzero --budget 200 --seed 0 --no-place \
    --placement deferred --copy-supply early --baseline-budget 0 --json --option learning_rate=$2 \
    --option workdir=\"wd-$1\" -o wd-$1.sol.json.gz > wd-$1.json 2> wd-$1.log &
done
wait
python "$(dirname "$0")/learning_generations.py" wd-frozen wd-learn > learning_generations.txt
