"""Whether the game solvers' decisions pay: read from `jaxmmap compare` folders.

For each solver it prints on how many programs its written solution started from its own
decisions (`info["placed_start"]` `decisions` or `game`: the placer's moves began there, or no
placement beat the game's own solution) and, of those, on how many it is above the placement of no
decisions (the first point of every placed run's trace, the floor `solve` holds before the solver
runs; equal to it is not above). *guide, above*: the runs whose placer started from the
generalist's guide (`guide`: the placement of no decisions with the uses its intent network is
sure of flipped) and are above that floor, counted apart. Runs that overran their budget
(`info["overran"]`) are counted, as what they wrote. With `--against`, each solver's written
return beside its return in the other folders (the same programs, another game or another day):
better, worse, equal (to 1e-6), the mean and the range of the ratios. Every return there is a
validated solution's (`compare` keeps no other).

With `--place`, for folders of runs that kept their games' own placement (`compare --no-place`,
whose traces hold no floor): each written solution's decisions placed without local moves
(`placer.place(moves=0)`, never below the game's own solution), beside the placement of no
decisions (`placer.place_nothing`) and the game's own return, per program.

    python benchmarks/decisions_pay.py infer train generated                      # the counts
    python benchmarks/decisions_pay.py infer train generated --against infer-grid train-grid generated-grid
    python benchmarks/decisions_pay.py muzero es random --place                   # --no-place runs
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from jaxmmap.core.files import UserError  # noqa: E402
from jaxmmap.harness.compare import Comparison  # noqa: E402
from jaxmmap.solvers import rules_for  # noqa: E402
from jaxmmap.solvers.placer import place, place_nothing  # noqa: E402

OWN = ("decisions", "game")


def runs_of(folders: list[str]) -> dict[tuple[str, str], object]:
    """The ok runs of seed 0 in `folders`, by (instance, solver)."""
    out = {}
    for folder in folders:
        for run in Comparison.load(folder).runs:
            if run.status == "ok" and run.seed == 0:
                out[(run.instance, run.solver)] = run
    return out


def counts(runs: dict) -> list[str]:
    by = collections.defaultdict(list)
    for (_, solver), run in runs.items():
        by[solver].append(run)
    lines = [f"{'solver':12} {'programs':>8} {'own start':>9} {'above the floor':>15} {'guide, above':>12} {'overran':>7}"]
    for solver, rs in by.items():
        own = [r for r in rs if r.info.get("placed_start") in OWN]
        above = [r for r in own if _above(r)]
        guide = sum(r.info.get("placed_start") == "guide" and _above(r) for r in rs)
        over = sum("overran" in r.info for r in rs)
        lines.append(f"{solver:12} {len(rs):8} {len(own):9} {len(above):15} {guide:12} {over:7}")
    return lines


def _floor(run) -> float:
    """The placement of no decisions: the first point of a placed run's trace."""
    return run.trace[0][1]


def _above(run) -> bool:
    """Whether a run's written return is above the placement of no decisions."""
    return run.ret > _floor(run) * (1 + 1e-9)


def against(runs: dict, other: dict) -> list[str]:
    lines = [f"{'solver':12} {'programs':>8} {'better':>6} {'worse':>5} {'equal':>5} {'mean ratio':>10}  range"]
    for solver in dict.fromkeys(s for _, s in runs):
        ratios = np.array([r.ret / other[key].ret for key, r in runs.items() if key[1] == solver and key in other])
        if not len(ratios):
            continue
        better, worse = int((ratios > 1 + 1e-6).sum()), int((ratios < 1 - 1e-6).sum())
        lines.append(f"{solver:12} {len(ratios):8} {better:6} {worse:5} {len(ratios) - better - worse:5} "
                     f"{ratios.mean():10.4f}  {ratios.min():.4f}-{ratios.max():.4f}")
    return lines


def programs(runs: dict, other: dict) -> list[str]:
    lines = []
    for instance in dict.fromkeys(i for i, _ in runs):
        cells = []
        for (i, solver), r in runs.items():
            if i == instance:
                was = f" / {other[(i, solver)].ret:.6g}" if (i, solver) in other else ""
                cells.append(f"{solver} {r.ret:.6g}{was} ({r.info.get('placed_start', '-')}"
                             f"{', overran' if 'overran' in r.info else ''})")
        floor = next(_floor(r) for (i, _), r in runs.items() if i == instance)
        lines.append(f"{instance[:30]:30} floor {floor:.6g}: " + "; ".join(cells))
    return lines


def placed(folders: list[str]) -> list[str]:
    """Per program, each solver's written game (seed 0's best) and its decisions placed without
    local moves, beside the placement of no decisions; the solvers by placed return."""
    games, problems = {}, {}
    for folder in folders:
        comparison = Comparison.load(folder)
        for (instance, solver), game in comparison.solutions.items():  # (a solver in two folders, as
            # the agent and its frozen network: named by the folder)
            clash = any(solver == s for i, s in games if i == instance)
            games[instance, f"{solver} ({os.path.basename(os.path.normpath(folder))})" if clash else solver] = game
        problems.update(comparison.problems)
    lines = []
    for instance in dict.fromkeys(i for i, _ in games):
        problem = problems[instance]
        floor = place_nothing(problem, rules=rules_for(problem), budget_s=600).ret
        rows = sorted(((place(problem, game, budget_s=600, moves=0).ret, solver, game.ret)
                       for (i, solver), game in games.items() if i == instance), reverse=True)
        lines.append(f"{instance}: no decisions placed {floor:.6g}; placed (game's own, placed over no decisions): "
                     + "; ".join(f"{solver} {ret:.6g} ({own:.6g}, {ret / floor:.4f})" for ret, solver, own in rows))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="`jaxmmap compare -o` folders")
    parser.add_argument("--against", nargs="+", default=[], help="folders of the same programs to compare with")
    parser.add_argument("--place", action="store_true", help="place the written games' decisions (--no-place runs)")
    args = parser.parse_args()
    try:
        if args.place:  # (the solutions only: no run is read)
            print("\n".join(placed(args.folders)))
            return
        runs, other = runs_of(args.folders), runs_of(args.against)
    except UserError as e:  # (a folder `compare` did not write)
        raise SystemExit(f"error: {e}") from None
    print("\n".join(counts(runs)))
    if other:
        print("\nwritten return against", " ".join(args.against))
        print("\n".join(against(runs, other)))
    print("\nper program (written return" + (" / against" if other else "") + ", the placer's start):")
    print("\n".join(programs(runs, other)))


if __name__ == "__main__":
    main()
