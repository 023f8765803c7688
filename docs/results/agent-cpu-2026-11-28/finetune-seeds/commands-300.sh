#!/bin/bash
# issue 28: fine-tuning at 300 s, seeds 1 and 2 (seed 0: finetune-each-start/, the same code), each run what a user types,
# `jaxmmap solve P --solver muzero --budget 300 --seed S` in a fresh process (compile counted, persistent cache off), fresh on
# core 0 and --option pretrained=true on core 1 at the same time, 2026-11-28).
# Run from this folder: bash commands-300.sh; then python finetune_seeds_300.py.txt
export JAXMMAP_COMPILATION_CACHE=off
python -m jaxmmap generate --seed 1001 --instructions 300 -o gen-1001.json.gz
python -m jaxmmap generate --seed 1002 --instructions 1000 -o gen-1002.json.gz
I="suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1001.json.gz gen-1002.json.gz"
arm() {  # arm NAME CORE [OPTIONS...]
  local name=$1 core=$2; shift 2
  mkdir -p $name-300s
  for s in 1 2; do
    for p in $I; do
      local label=${p#suite:}; label=${label%.json.gz}
      local t0=$(date +%s.%N)
      taskset -c $core python -m jaxmmap solve $p --solver muzero --budget 300 --seed $s --baseline-budget 0 "$@" \
        -o $name-300s/$label.seed$s.json.gz > $name-300s/$label.seed$s.log 2>&1
      echo "$label $s $(echo "$(date +%s.%N) - $t0" | bc)" >> $name-300s/seconds.txt
    done
  done
}
arm fresh 0 &
arm pretrained 1 --option pretrained=true &
wait
rm -f gen-1001.json.gz gen-1002.json.gz
