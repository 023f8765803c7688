#!/bin/bash
# Table 2 on one generated program, each solver's seeds run one process a run (the compile in every
# run's budget), 600 s, --no-place, the deferred game with the early copy supply, one core a run, as
# many runs at a time as CORES lists (default "0 1": the first two solvers' runs of a seed side by
# side), the persistent cache off (2026-12-02). Then every written game is validated and placed
# without local moves: OUT.md has each run's game return, its placement and the placement of no
# decisions, and each solver's means (table2_placed.py). Run from an empty folder:
#   bash table2_placed.sh 1003 3000 table2_placed_9028                 (agent and ES, seeds 0-2)
#   SEEDS=0 CORES=1 bash table2_placed.sh 1002 1000 random_2981 random  (random, seed 0, core 1)
# A solver written NAME+KEY=VALUE runs NAME with --option KEY=VALUE (es+population=32); BUDGET
# replaces the 600 s.
export JAXMMAP_COMPILATION_CACHE=off
SEED=$1 INSTRUCTIONS=$2 OUT=$3; shift 3
SOLVERS=${*:-muzero es} SEEDS=${SEEDS:-0 1 2} CORES=(${CORES:-0 1})
D=$(cd "$(dirname "$0")" && pwd) R=${R:-$(cd "$(dirname "$0")/../../.." && pwd)}
PYTHONPATH=$R python -m jaxmmap generate --seed $SEED --instructions $INSTRUCTIONS -o gen-$SEED.json.gz
run() {  # CORE SOLVER SEED
  local option=(); [[ $2 == *+* ]] && option=(--option "${2#*+}")
  PYTHONPATH=$R taskset -c $1 python -m jaxmmap solve gen-$SEED.json.gz --solver ${2%%+*} "${option[@]}" \
    --budget ${BUDGET:-600} --seed $3 --no-place --placement deferred --copy-supply early --json -o $2-s$3.sol.json.gz > $2-s$3.json 2> $2-s$3.log
}
jobs=(); for s in $SEEDS; do for v in $SOLVERS; do jobs+=("$v $s"); done; done
for ((i = 0; i < ${#jobs[@]}; i += ${#CORES[@]})); do
  for ((c = 0; c < ${#CORES[@]} && i + c < ${#jobs[@]}; c++)); do run ${CORES[c]} ${jobs[i + c]} & done
  wait
done
PYTHONPATH=$R python $D/table2_placed.py gen-$SEED.json.gz $(for j in "${jobs[@]}"; do set -- $j; echo $1-s$2; done) > $OUT.md
