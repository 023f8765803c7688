#!/bin/bash
# issue 27: the muzero solver's place_share (its best game placed physically, descending again,
# in the last part of its budget) against none, on four programs of the suite's training split,
# 300 s, one core a run, the two variants side by side, persistent cache off (2026-11-27,
# eighteenth session). Run from this folder: bash commands.sh
export JAXMMAP_COMPILATION_CACHE=off
I="suite:alexnet_train_b32@tpu_v4i suite:resnet18_train@gpu suite:gpt_medium_train@gpu suite:resnet50_train@tpu_v4i"
(taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget 300 --seeds 1 --no-bound -o share0 > share0.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget 300 --seeds 1 --no-bound -o share50 --option muzero.place_share=0.5 > share50.log 2>&1) &
wait  # (the first part)
# then (the same session) the placed rounds: place_share's part iterates rounds of four descents from the best so far
# until a round does not pay (commit after 1b31616), the same programs, both cores:
(taskset -c 0 python -m jaxmmap compare --instances suite:alexnet_train_b32@tpu_v4i suite:resnet18_train@gpu --solvers muzero --budget 300 --seeds 1 --no-bound -o rounds50-a --option muzero.place_share=0.5 > rounds50-a.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances suite:gpt_medium_train@gpu suite:resnet50_train@tpu_v4i --solvers muzero --budget 300 --seeds 1 --no-bound -o rounds50-b --option muzero.place_share=0.5 > rounds50-b.log 2>&1) &
wait
