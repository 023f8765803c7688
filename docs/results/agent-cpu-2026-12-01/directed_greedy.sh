#!/bin/bash
# The directed games lean on greedy's scores, not on the network: does learning still cost the
# search? The agent with its network frozen (learning_rate 0) and learning at its default rate
# (1e-3), seeds 0 to 2, 200 s on the two generated tuning programs (3,001 and 8,999 buffers,
# outside the held-out split), the game's own return (--no-place), the deferred game with the
# early copy supply; one core a run, two at a time, the persistent cache off (2026-12-01, commit
# 73a9917). directed_greedy.txt: python learning_collect.py. Run from an empty folder:
# bash directed_greedy.sh
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
(for s in 0 1 2; do run 0 frozen $s 0.0; done) &
(for s in 0 1 2; do run 1 lr1e3 $s 0.001; done) &
wait
python "$(dirname "$0")/learning_collect.py" > directed_greedy.txt
