#!/bin/bash
# EGRL's default population (16 neural + 32 Boltzmann slots) against a smaller one given as options
# (SMALL, default "8 8": the slots ES's population rule would give at 8,193+ buffers), on one program,
# each run a process of its own (its compile in its budget), --no-place, the deferred game with the
# early copy supply, the two variants' runs of a seed side by side, one core each, the persistent
# cache off; then every written game validated and placed without local moves
# (../agent-cpu-2026-12-02/table2_placed.py). Run from an empty folder:
#   bash egrl_population.sh gen:2003:3000 gen_9060_60s 60      (generated seed 2003, 3,000 instructions)
#   SEEDS="0 1" SMALL="16 16" bash egrl_population.sh suite:resnet50_train@tpu_v4i resnet50_train_300s 300
# SEEDS (default "0 1 2") sets the seeds.
export JAXMMAP_COMPILATION_CACHE=off
PROGRAM=$1 OUT=$2 BUDGET=$3 SEEDS=${SEEDS:-0 1 2}
read -r NEURAL BOLTZMANN <<< "${SMALL:-8 8}"
D=$(cd "$(dirname "$0")" && pwd) R=$(cd "$(dirname "$0")/../../.." && pwd)
if [[ $PROGRAM == gen:* ]]; then
  IFS=: read -r _ seed instructions <<< "$PROGRAM"
  PROGRAM=gen-$seed.json.gz
  PYTHONPATH=$R python -m jaxmmap generate --seed $seed --instructions $instructions -o $PROGRAM
fi
run() {  # CORE VARIANT SEED
  local option=(); [[ $2 == small ]] && option=(--option neural=$NEURAL --option boltzmann=$BOLTZMANN)
  PYTHONPATH=$R taskset -c $1 python -m jaxmmap solve $PROGRAM --solver egrl "${option[@]}" --budget $BUDGET \
    --seed $3 --no-place --placement deferred --copy-supply early --json -o $OUT-egrl+$2-s$3.sol.json.gz \
    > $OUT-egrl+$2-s$3.json 2> $OUT-egrl+$2-s$3.log
}
for s in $SEEDS; do run 0 small $s & run 1 default $s & wait; done
PYTHONPATH=$R python $D/../agent-cpu-2026-12-02/table2_placed.py $PROGRAM \
  $(for s in $SEEDS; do echo $OUT-egrl+small-s$s $OUT-egrl+default-s$s; done) > $OUT.md
