#!/bin/bash
# issue 28: fine-tuning at 300 s, fresh vs pretrained, one core each (same conditions), then
# issue 27: Figure 7 at three sizes, the agent vs its frozen network, one core each
# (2026-11-27, twelfth session, commit b5e7c70; from the repository root, gen-100N.json.gz from
# `jaxmmap generate --seed 1001 --instructions 300` and `--seed 1002 --instructions 1000`)
export JAXMMAP_COMPILATION_CACHE=off
I="suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1001.json.gz gen-1002.json.gz"
taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget 300 --seeds 1 --no-bound -o muzero-fresh-heldout-300s-one-core > fresh.log 2>&1 &
taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget 300 --seeds 1 --no-bound --option muzero.pretrained=true -o muzero-pretrained-heldout-300s-one-core > pre.log 2>&1 &
wait
for inst in suite:alexnet_train_b32@tpu_v4i suite:wavenet_train@gpu suite:nmt_train@gpu; do
  n=${inst#suite:}
  taskset -c 0 python benchmarks/agent_ablations.py --instance $inst --budget 300 --seeds 1 --variants agent -o fig7-$n-agent > fig7-$n-agent.log 2>&1 &
  taskset -c 1 python benchmarks/agent_ablations.py --instance $inst --budget 300 --seeds 1 --variants "search, no learning" -o fig7-$n-frozen > fig7-$n-frozen.log 2>&1 &
  wait
done
