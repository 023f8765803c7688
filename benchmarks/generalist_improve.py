"""Does a search in the generalist's parameters on the true game (`improvement.improve`)
improve the shipped network on programs it was not searched on?

    python benchmarks/generalist_improve.py --generations 15                       # head, pop 16
    python benchmarks/generalist_improve.py --population 32 --sigma 0.01 --learning-rate 0.002
    python benchmarks/generalist_improve.py --fixed                                 # the 38 training programs

It starts from the shipped parameters (the imitation's) and runs the improvement of
`train.py --config configs/generalist.py --config.network.generations=G`, with the search's
settings given here (its defaults are the runs in docs/decisions.md, "A search in the network's
parameters", not the config's): each generation
plays fresh generated programs (`--drawn`, seeds from 10,000 on) and training programs in turn
(`--replayed`), or with `--fixed` every training program every generation. Every `--select-every`
generations the mean plays the selection programs (generated seeds 100-109, neither trained on
nor held out); each line prints the mean's games over greedy's (geometric mean) on the
generation's programs and, where measured, on the selection programs beside the best kept. The
kept parameters are written to WORKDIR/params.msgpack; `python benchmarks/generalist_games.py
--params WORKDIR/params.msgpack` measures them on the held-out programs. The persistent
compilation cache is on (every shape compiles once across runs). A workdir holding a run of the
same settings resumes it; other settings start over.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from flax import serialization  # noqa: E402

from configs import generalist as generalist_config  # noqa: E402
from jaxmmap.agent import generalist, improvement, pretrain  # noqa: E402
from jaxmmap.core.files import atomic  # noqa: E402
from jaxmmap.env.compilation_cache import compilation_cache  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default="runs/generalist-improve")
    parser.add_argument("--generations", type=int, default=15)
    parser.add_argument("--population", type=int, default=16)
    parser.add_argument("--sigma", type=float, default=0.02)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--search", choices=("head", "all"), default="head")
    parser.add_argument("--select-every", type=int, default=3)
    parser.add_argument("--drawn", type=int, default=8)
    parser.add_argument("--replayed", type=int, default=4)
    parser.add_argument("--fixed", action="store_true", help="every training program, every generation")
    args = parser.parse_args()
    compilation_cache()
    config = generalist_config.get_config()
    config.drawn, config.replayed = args.drawn, args.replayed
    params, net, _ = generalist.load()
    net = dataclasses.replace(net, generations=args.generations, population=args.population, sigma=args.sigma,
                              es_learning_rate=args.learning_rate, select_every=args.select_every,
                              search=args.search)
    programs = pretrain.training_programs(config)
    fixed = [generalist.padded(p, r) for _, p, r in programs] if args.fixed else None
    draw = (lambda g: fixed) if args.fixed else (lambda g: pretrain.drawn(config, programs, g))
    selection = [generalist.padded(p, r) for _, p, r in pretrain.selection_programs(config)]
    os.makedirs(args.workdir, exist_ok=True)
    t0 = time.perf_counter()
    out = improvement.improve(params, draw, selection, net, workdir=args.workdir,
                             log=lambda line: print(f"[{time.perf_counter() - t0:6.0f} s] {line}", flush=True))
    with atomic(os.path.join(args.workdir, "params.msgpack"), "wb") as f:
        f.write(serialization.to_bytes(out["params"]))
    print(f"selection: kept {out['selection']:.4f}x greedy's, the start {out['selection_at_start']:.4f}x")


if __name__ == "__main__":
    main()
