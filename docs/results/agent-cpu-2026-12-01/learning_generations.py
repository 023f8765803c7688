"""Where the learning agent's generations go: each generation's seconds and the games' moves a
second, from the runs' metrics (WORKDIR/metrics.jsonl, `solve --option workdir=...`), for the
runs named on the command line. Prints per run the generations, the mean seconds of a generation
(the first, with the compile, left out), of its first and last five, the median moves a second,
and the learner steps. Run: python learning_generations.py wd-frozen wd-learn"""
import json
import statistics
import sys

for workdir in sys.argv[1:]:
    with open(f"{workdir}/metrics.jsonl") as f:
        rows = [json.loads(line) for line in f]
    spans = [b["seconds"] - a["seconds"] for a, b in zip(rows, rows[1:])]
    rates = [r["game_moves_per_s"] for r in rows[1:]]
    print(f"{workdir:12} generations {len(rows):3}  s/generation {statistics.mean(spans):5.2f}"
          f"  first five {statistics.mean(spans[:5]):5.2f}  last five {statistics.mean(spans[-5:]):5.2f}"
          f"  moves/s {statistics.median(rates):7.0f}  learner steps {rows[-1]['learner_steps']}")
    print("  " + " ".join(f"{s:.1f}" for s in spans))
