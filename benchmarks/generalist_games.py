"""Does learning show? On programs kept out of its training, the shipped generalist's
greedy game against the same network untrained (its learned correction starts at zero, so its
game is the greedy policy's), the same code path with other parameters.

    python benchmarks/generalist_games.py                # the suite's held-out split, generated seeds 1000-1004
    python benchmarks/generalist_games.py --instances suite:nmt_infer@tpu_v4i-30 my.json.gz --no-bound

Each game is one jitted game (Drop-backup on) to its end, compile included, unplaced (the
network's own decisions; `jaxmmap solve --solver generalist` places them afterwards). Every
solution is validated; its return is printed as a fraction of the LP bound
(`solvers.cpsat.upper_bound`, skipped with `--no-bound`), beside its simulated speed-up over the
heuristic's solution (10 s). The last line counts the programs where the pretrained game is
better, equal and worse. The generated programs are `jaxmmap generate --seed S --instructions I`
with (S, I) = (1000, 40), (1001, 300), (1002, 1000), (1003, 3000), (1004, 8000): 118 to 24,143
buffers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("JAXMMAP_COMPILATION_CACHE", "off")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jax  # noqa: E402

from jaxmmap import Rules, generate  # noqa: E402
from jaxmmap.agent import generalist  # noqa: E402
from jaxmmap.core.files import UserError  # noqa: E402
from jaxmmap.core.io import open_problems  # noqa: E402
from jaxmmap.core.validator import validate  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import to_solution  # noqa: E402
from jaxmmap.harness.speed import baseline, speed  # noqa: E402

GENERATED = ((1000, 40), (1001, 300), (1002, 1000), (1003, 3000), (1004, 8000))


def game(problem, params, config, rules):
    """The network's greedy game: (validated solution, seconds with its compile)."""
    t0 = time.perf_counter()
    state = jax.block_until_ready(generalist.play(params, make_instance(problem, rules), config=config))
    seconds = time.perf_counter() - t0
    solution = to_solution(problem, state, rules, solver="generalist")
    report = validate(problem, solution, allow_nocopy_move=rules.nocopy_offset == "lowest")
    if not report.ok:
        raise AssertionError(f"{problem.name}: the game's solution is invalid:\n{report}")
    return solution, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", nargs="+", help="PROBLEMs (default: suite:held-out and the generated seeds)")
    parser.add_argument("--no-bound", action="store_true", help="skip the LP bound")
    parser.add_argument("--params", help="a candidate's parameters (params.msgpack of a training run's workdir,"
                        " or of generalist_improve.py's) instead of the shipped ones, with the shipped network config")
    args = parser.parse_args()
    try:  # (a mistake is one error line, before any game)
        problems = (open_problems(args.instances) if args.instances else
                    open_problems(["suite:held-out"]) + [generate(s, num_instructions=i) for s, i in GENERATED])
        shipped, config, about = generalist.load()
    except (UserError, OSError, ValueError) as e:
        parser.error(str(e).splitlines()[0])
    if args.params:
        try:
            with open(args.params, "rb") as f:
                shipped = generalist.params_from(f.read())
        except Exception as e:  # noqa: BLE001 (msgpack raises its own kinds on a file that is not ours)
            parser.error(f"--params {args.params}: not a network's parameters ({type(e).__name__}: {e})")
    untrained = generalist.untrained(shipped)  # (its games are the greedy policy's)
    rules = Rules(**generalist.trained_rules(about))  # (the game the network learned)
    print(f"device: {jax.devices()[0].platform}; one greedy game each, compile included, unplaced; "
          "returns as fractions of the LP bound, speed-ups over the heuristic's solution (10 s)")
    print(f"{'program':32} {'buffers':>8} {'bound':>9} {'pretrained':>10} {'untrained':>10} {'ratio':>7} "
          f"{'speed-up %':>10} {'(untrained)':>11} {'s':>5} {'(untr.)':>7}")
    tally = {"better": 0, "equal": 0, "worse": 0}
    for problem in problems:
        mine, t_mine = game(problem, shipped, config, rules)
        base, t_base = game(problem, untrained, config, rules)
        heuristic = baseline(problem, mine)
        fast = [speed(problem, s, against=heuristic)["speedup_over_heuristic_percent"] for s in (mine, base)]
        bound = None
        if not args.no_bound:
            from jaxmmap.solvers.cpsat import upper_bound
            bound = upper_bound(problem, rules=rules)
        frac = (lambda r, b=bound: f"{r / b:10.4f}") if bound else (lambda r: f"{r:10.4g}")  # noqa: E731
        ratio = mine.ret / base.ret if base.ret > 0 else float("inf")
        tally["better" if mine.ret > base.ret * (1 + 1e-9) else "worse" if mine.ret < base.ret * (1 - 1e-9)
              else "equal"] += 1
        print(f"{problem.name[:32]:32} {problem.num_buffers:8,} {bound or float('nan'):9.4g} {frac(mine.ret)} "
              f"{frac(base.ret)} {ratio:7.4f} {fast[0]:10.2f} {fast[1]:11.2f} {t_mine:5.1f} {t_base:7.1f}",
              flush=True)
    print(f"pretrained against untrained: better on {tally['better']}, equal on {tally['equal']}, "
          f"worse on {tally['worse']} of {len(problems)}")


if __name__ == "__main__":
    main()
