# 2026-11-27, thirteenth session; one core a run (taskset), two at a time; persistent cache off.
export JAXMMAP_COMPILATION_CACHE=off
# core1/ (commit ffdd205; its core-0 half was stopped after three instances, rerun below):
taskset -c 1 jaxmmap compare --instances suite:alexnet_train_b32@tpu_v4i suite:resnet50_infer@gpu suite:mnasnet_infer@tpu_v4i-30 suite:transformer_bf16_infer@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 suite:gpt_train_donated@gpu suite:transformer_bf16_train@gpu --solvers heuristic muzero-prod --budget 300 --seeds 1 -o core1
# reserve/ (commit 6caec48: prod gives the agent what the placement does not need):
taskset -c 0 jaxmmap compare --instances suite:resnet50_infer@gpu suite:gpt_small_train@tpu_v4i-30 --solvers muzero-prod --budget 300 --seeds 1 --no-bound -o reserve
# b-*/ and c-*/ (commit 6caec48):
taskset -c 0 jaxmmap compare --instances suite:resnet18_train@gpu suite:resnet50_train@tpu_v4i suite:nmt_train@gpu --solvers heuristic muzero-prod --budget 300 --seeds 1 --no-bound -o b-core0
taskset -c 1 jaxmmap compare --instances suite:gpt_medium_train@gpu suite:mnasnet_train@gpu --solvers heuristic muzero-prod --budget 300 --seeds 1 --no-bound -o b-core1
taskset -c 0 jaxmmap compare --instances suite:resnet18_infer@tpu_v4i-30 --solvers heuristic muzero-prod --budget 300 --seeds 1 --no-bound -o c-core0
taskset -c 1 jaxmmap compare --instances suite:resnet50_infer@dram_pmem-25 suite:gpt_small_train@tpu_v4i-30 --solvers heuristic muzero-prod --budget 300 --seeds 1 --no-bound -o c-core1
