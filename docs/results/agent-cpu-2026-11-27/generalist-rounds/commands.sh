# 2026-11-27, fifteenth session, 2-core CPU, one core a run. The rows of the imitation of seed 0 were
# gathered once (runs/dagger/rows/) and copied into runs/s1 to runs/s4.
python train.py --config configs/generalist.py --workdir runs/dagger --config.rounds=2          # seed 0: imitation, DAgger rounds 1 and 2
python train.py --config configs/generalist.py --workdir runs/dagger --config.rounds=1 --config.round_labels=lookahead
python train.py --config configs/generalist.py --workdir runs/s1 --config.network.seed=1 --config.rounds=1
python train.py --config configs/generalist.py --workdir runs/s2 --config.network.seed=2 --config.rounds=1   # and seeds 3, 4 alike (runs/s3, runs/s4)
# each network (round 0's parameters from WORKDIR/state.msgpack, round R's from WORKDIR/own-R/state.msgpack
# or WORKDIR/params.msgpack), its own game over greedy's, unplaced:
python benchmarks/generalist_correction.py --params P --shares 0.5 1.0                 # correction_*.txt (24 programs)
python benchmarks/generalist_correction.py --generated-only --params P --shares 0.5 1.0  # selection_*.txt (seeds 100-109)
python benchmarks/generalist_correction.py --shares 0.5 1.0                            # correction_shipped.txt
