#!/bin/bash
# The agent cutting short the games that cannot beat the center (commit a7b10f0), against the
# code before (commit 7a527b4: every game played to its end and packed): 200 s on the two generated
# tuning programs (3,001 and 8,999 buffers, outside the held-out split), seed 0, the game's own
# return (--no-place), the deferred game with the early copy supply; one core a run, the two codes
# side by side, the persistent cache off (2026-12-01). prune_runs.txt: the return, the seconds and
# the generations of each run. Run from an empty folder with BEFORE set to a checkout of commit
# 7a527b4: BEFORE=... bash prune_runs.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off
PYTHONPATH=$R python -m jaxmmap generate --seed 2001 --instructions 1000 -o tune-2001.json.gz
PYTHONPATH=$R python -m jaxmmap generate --seed 2002 --instructions 3000 -o tune-2002.json.gz
run() {  # CORE NAME ROOT PROGRAM
  PYTHONPATH=$3 taskset -c $1 python -m jaxmmap solve $4.json.gz --solver muzero --budget 200 --seed 0 --no-place \
      --placement deferred --copy-supply early --baseline-budget 0 --json -o $2-$4.sol.json.gz > $2-$4.json 2> $2-$4.log
}
(run 0 pruned "$R" tune-2002; run 0 pruned "$R" tune-2001) &
(run 1 before "$BEFORE" tune-2002; run 1 before "$BEFORE" tune-2001) &
wait
for f in pruned-tune-2001 before-tune-2001 pruned-tune-2002 before-tune-2002; do
  python -c "import json; d = json.load(open('$f.json')); print(f\"$f return {d['return']:.3f}, {d['seconds']:.1f} s,\"
              f\" {d['info']['iterations']} generations\")"
done > prune_runs.txt
