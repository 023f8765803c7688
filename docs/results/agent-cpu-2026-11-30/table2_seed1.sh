#!/bin/bash
# Table 2 and Figure 7 at 411 buffers with seed 1 (as table2_commands.sh, by `jaxmmap solve`; one
# core a run, two at a time, the persistent cache off; 2026-11-30, commit 50c91fe). Run from an empty
# folder: bash table2_seed1.sh; table2_seed1.txt: the written returns and speed-ups.
R=$(cd "$(dirname "$0")/../../.." && pwd)
export JAXMMAP_COMPILATION_CACHE=off PYTHONPATH=$R
A=suite:alexnet_train_b32@tpu_v4i
G="--budget 600 --seed 1 --no-place --placement deferred --copy-supply early --json"
run() { core=$1; name=$2; shift 2; taskset -c $core python -m jaxmmap solve $A $G -o $name.sol.json "$@" > $name.json 2> $name.log; }
(run 0 muzero --solver muzero; run 0 es --solver es) &
(run 1 frozen --solver muzero --option learning_rate=0.0; run 1 random --solver random) &
wait
for f in muzero frozen es random; do python -c "import json; d = json.load(open('$f.json'))
print(f\"$f {d['return']:.6g} ({d['speedup_over_heuristic_percent']:+.2f}%) in {d['seconds']:.0f} s, valid {d['valid']}\")"
done > table2_seed1.txt
