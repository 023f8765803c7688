"""How much of the generalist's learned correction its games should play with
(`GeneralistConfig.correction`), measured on training programs only: the suite's training split
up to 5,000 buffers and generated seeds 100-109 (neither the pretraining's seeds 0-23 nor the
held-out 1000-1004). Per program, the network's own greedy game (unplaced, Drop-backup on) at each
share, as a ratio to the greedy policy's game (share 0); then per share the programs where it is
better, equal and worse, and the mean and geometric mean of the ratios.

With `--large`, the large programs instead, where the selection seeds (at most 3,500 buffers) do
not reach: the training split's programs above 5,000 buffers (never trained on) and generated
seeds 200-203 (2,000 to 8,000 instructions, 6,011 to 24,034 buffers; neither trained on, nor
selection, nor held out). With `--pressure`, generated programs under high memory pressure
instead (seeds 300-309, `PRESSURE`: memory fractions 0.1 to 0.2, pressures 5 to 10, 896 to 7,511
buffers), where the selection seeds (pressure 3.3 at most; the training split's programs reach 22)
do not reach either. The shipped network was chosen on the three sets (docs/agent.md).

    python benchmarks/generalist_correction.py --shares 0.25 0.5 0.75 1.0
    python benchmarks/generalist_correction.py --params WORKDIR/params.msgpack   # a candidate
    python benchmarks/generalist_correction.py --large --shares 0.5 --params WORKDIR/params.msgpack
    python benchmarks/generalist_correction.py --pressure --shares 0.5 --params WORKDIR/params.msgpack
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

os.environ.setdefault("JAXMMAP_COMPILATION_CACHE", "off")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from configs import generalist as generalist_config  # noqa: E402
from jaxmmap import Rules, generate  # noqa: E402
from jaxmmap.agent import generalist  # noqa: E402
from jaxmmap.core import suite  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402

GENERATED = generalist_config.get_config().selection  # (seed, instructions): the selection programs
LARGE = ((200, 2000), (201, 3000), (202, 5000), (203, 8000))  # (seed, instructions): `--large`'s generated
# (seed, instructions, memory fraction, latency tables): `--pressure`'s generated programs
PRESSURE = tuple((300 + k, (300, 600, 1000, 1500, 2500)[k % 5], (0.1, 0.15, 0.2)[k % 3], k % 2 == 0) for k in range(10))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--params", help="a candidate's parameters (params.msgpack of a training run's workdir)"
                        " instead of the shipped ones, with the shipped network config")
    which = parser.add_mutually_exclusive_group()  # (the program sets: one a run)
    which.add_argument("--generated-only", action="store_true",
                       help="only the generated seeds 100-109 (not the suite's training split)")
    which.add_argument("--large", action="store_true",
                       help="the training split above 5,000 buffers and generated seeds 200-203 instead")
    which.add_argument("--pressure", action="store_true",
                       help="generated seeds 300-309 under high memory pressure instead (PRESSURE)")
    args = parser.parse_args()
    params, config, about = generalist.load()
    rules = Rules(**generalist.trained_rules(about))  # (the game the network learned)
    if args.params:
        with open(args.params, "rb") as f:
            params = generalist.params_from(f.read())
    sizes = {r["name"]: r["buffers"] for r in suite.info()}
    large = args.large
    if args.pressure:
        problems = [generate(seed, num_instructions=i, memory_fraction=f, latency_tables=t) for seed, i, f, t in PRESSURE]
    else:
        problems = [] if args.generated_only else [suite.load(n) for n in suite.names("train")
                                                   if (sizes[n] > 5000) == large]
        problems += [generate(seed, num_instructions=i) for seed, i in (LARGE if large else GENERATED)]
    print("share of the correction: the network's own game over the greedy policy's" + (
        ", generated seeds 300-309 under high memory pressure" if args.pressure else
        ", training split above 5,000 buffers and generated seeds 200-203" if large else
        ", selection seeds 100-109" if args.generated_only else ", training split and selection seeds 100-109"))
    ratios = {a: [] for a in args.shares}
    for problem in problems:
        instance = make_instance(problem, rules)
        ret = {a: float(generalist.play(params, instance, config=dataclasses.replace(config, correction=a)).board.ret)
               for a in (0.0, *args.shares)}
        for a in args.shares:
            ratios[a].append(ret[a] / ret[0.0])
        print(f"{problem.name[:32]:32} {problem.num_buffers:6,} greedy {ret[0.0]:10.3f} "
              + " ".join(f"{a}: {ret[a] / ret[0.0]:7.4f}" for a in args.shares), flush=True)
    for a in args.shares:
        r = np.asarray(ratios[a])
        print(f"share {a}: better {int(np.sum(r > 1 + 1e-9))}, equal {int(np.sum(np.abs(r - 1) <= 1e-9))}, "
              f"worse {int(np.sum(r < 1 - 1e-9))} of {len(r)}; mean {r.mean():.4f}, geometric mean "
              f"{np.exp(np.log(r).mean()):.4f}")


if __name__ == "__main__":
    main()
