#!/bin/bash
# The agent at 411 buffers with more seeds, before and after the fork and the once-per-network
# evaluation game (2026-11-30; seeds 0 and 1 before are table2_commands.sh's and table2_seed1.sh's,
# seed 0 after is table2_fork.sh's). Run from an empty folder with a checkout of each commit:
# OLD=/path/to/58bb049 NEW=/path/to/bab7369 bash table2_seeds.sh
run() { core=$1; tree=$2; seed=$3; name=$4
  JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$tree taskset -c $core python -m jaxmmap solve suite:alexnet_train_b32@tpu_v4i \
    --solver muzero --budget 600 --seed $seed --no-place --placement deferred --copy-supply early --json \
    -o $name.sol.json > $name.json 2> $name.log; }
(run 0 "$NEW" 1 new-s1; run 0 "$OLD" 2 old-s2) &
(run 1 "$NEW" 2 new-s2; run 1 "$NEW" 3 new-s3) &
wait
