#!/bin/bash
# 2026-11-28: the generalist with its guide (the intent network, agent/guide.py; the policy network the
# same as to the last bit), one seed, compile included, persistent cache off, the whole 2-core CPU a
# run, one run at a time. ES at 60 s: ../zero-shot-faster-placer/es-heldout-60s (commit f4e9cee; ES and the placer without a
# guide are unchanged since). Table: python zero_shot_table.py.txt
#   jaxmmap generate --seed 1000 --instructions 40 -o gen-1000.json.gz   # 1001: 300, 1002: 1000, 1003: 3000, 1004: 8000
export JAXMMAP_COMPILATION_CACHE=off
G=${G:-/tmp/s24/G}  # the five generated programs (the commands above)
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 $G/gen-1000.json.gz $G/gen-1001.json.gz $G/gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu $G/gen-1003.json.gz $G/gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s
