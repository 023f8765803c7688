# 2026-11-27, sixteenth session: the shipped generalist trained again from its config (seed 3), and measured.
# Training, one core, from nothing (runs/fresh3 empty), about 7 minutes; then shipped (resumes, then writes the package's copy):
taskset -c 1 python train.py --config configs/generalist.py --workdir runs/fresh3
taskset -c 1 python train.py --config configs/generalist.py --workdir runs/fresh3 --config.ship=True
# (one core: on both cores of the 2-core CPU the same rows train another network, docs/agent.md)
# (the same with --config.network.seed=2 --workdir runs/fresh2: its parameters equal, to the last bit, those of
#  the fifteenth session's runs/s2; runs/fresh3's equal runs/s3's)
# The choice of seed 3 among the five DAgger seeds of the fifteenth session (0-4): the selection seeds 100-109
# (generalist-rounds/selection_*.txt) and the large non-held-out programs (the training split above 5,000
# buffers and generated seeds 200-203), one core:
python benchmarks/generalist_correction.py --large --shares 0.5 --params runs/s3/params.msgpack   # large_selection_seed3.txt
python benchmarks/generalist_correction.py --large --shares 0.5 --params OLD.msgpack              # large_selection_before.txt (the network shipped before)
# large_selection_all_candidates.txt: the same games for every candidate by a throwaway script (ratio/restores)
# Held-out, zero-shot, the whole 2-core CPU a run, one seed (the generated programs as in ../zero-shot-noisy/commands.sh):
export JAXMMAP_COMPILATION_CACHE=off
jaxmmap compare --instances suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 \
  suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1000.json.gz gen-1001.json.gz gen-1002.json.gz \
  --solvers generalist --budget 10 --seeds 1 --no-bound -o generalist-heldout-10s
jaxmmap compare --instances suite:wavenet_train@gpu suite:mnasnet_train@gpu \
  suite:alphatensor_like_train@gpu-50 suite:nmt_train@gpu gen-1003.json.gz gen-1004.json.gz \
  --solvers generalist --budget 30 --seeds 1 --no-bound -o generalist-heldout-30s
python benchmarks/generalist_games.py            # generalist_games.txt, one core
# Fine-tuning, fresh against pretrained, one core each at the same time (gen-100N as above):
I="suite:wavenet_infer@tpu_v4i-30 suite:mnasnet_infer@tpu_v4i-30 suite:alphatensor_like@tpu_v4i-30 suite:nmt_infer@tpu_v4i-30 gen-1001.json.gz gen-1002.json.gz"
for B in 60 300; do
  taskset -c 0 python -m jaxmmap compare --instances $I --solvers muzero --budget $B --seeds 1 --no-bound -o muzero-fresh-heldout-${B}s-one-core &
  taskset -c 1 python -m jaxmmap compare --instances $I --solvers muzero --budget $B --seeds 1 --no-bound --option muzero.pretrained=true -o muzero-pretrained-heldout-${B}s-one-core &
  wait
done
