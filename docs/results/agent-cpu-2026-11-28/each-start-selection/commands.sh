#!/bin/bash
# muzero's placed rounds, chosen on the selection programs only (generated seeds 100-109; neither trained on nor held out),
# 60 s, one seed, fresh and --option muzero.pretrained=true one core each at the same time, persistent cache off (2026-11-28).
#   old-*:   commit d579004 (the first round descends from the highest start: the game's placement)
#   *-60:    the first round starts from the highest of the game's placement, no decisions and the guide (a probe, not kept)
#   *-each-60: be1b251, the first round descends from each of them (kept)
# Usage, from this folder: bash commands.sh REV NAME   (e.g. bash commands.sh be1b251 each; bash commands.sh d579004 old)
# then: python cmp.py.txt old-fresh-60 fresh-each-60 (and the other pairs in comparisons.txt)
set -e
REV=$1 NAME=$2
export JAXMMAP_COMPILATION_CACHE=off
git -C "$(git rev-parse --show-toplevel)" worktree add -f "/tmp/jaxmmap-$REV" "$REV" -q
export PYTHONPATH="/tmp/jaxmmap-$REV"
I=""
for s in 100:40 101:80 102:150 103:300 104:500 105:800 106:1000 107:1200 108:300 109:600; do
  python -m jaxmmap generate --seed ${s%:*} --instructions ${s#*:} -o gen-${s%:*}.json.gz > /dev/null
  I="$I gen-${s%:*}.json.gz"
done
(taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget 60 --seeds 1 --no-bound -o $NAME-fresh-60 > $NAME-fresh-60.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget 60 --seeds 1 --no-bound --option muzero.pretrained=true -o $NAME-pre-60 > $NAME-pre-60.log 2>&1) &
wait
rm -rf gen-1*.json.gz $NAME-*-60/problems
