"""How much of a good plan the game can express: the heuristic's decisions, played as a game
trajectory (`heuristic.play_plan`: its action where legal, else its fallback, with the
Drop-backup), and not placed again, as a fraction of the heuristic's own placed return, under
each rule set.

    python benchmarks/expressive.py                      # every suite instance, five generated programs
    python benchmarks/expressive.py --instances suite:resnet18_infer@tpu_v4i-30 --generated
    python benchmarks/expressive.py --solutions suite:alexnet_train_b32@tpu_v4i=prod.json --rules deferred-early

Rule sets: `paper` (the grid, the lowest offset, Rules()), `deferred` (placement="deferred": the
load profile, then the packer), `deferred-early` (with copy_supply="early") and `deferred-edf`
(copy_supply="edf": a copy may take over its last step from a later deadline); all on the
instance's `auto` columns. Every game's solution is validated; the heuristic runs once per
instance (`--budget` seconds, its plans and local moves) and its solution is the reference.
Prints one row per instance and the least and geometric-mean fraction per rule set.

With `--solutions PROBLEM=SOLUTION ...` the references are those solutions instead of the
heuristic's (each validated first; an invalid one is refused with the validator's list): how much
of a solution found outside the game (muzero-prod's, the placer's descents) the game keeps. For
each deferred rule set it also counts the decisions the game changed and why the game refused
each one where the trajectory met it (`lost_causes`): *memory* (the load profile has no room),
*copy window* (the copy's interval: the supply left, another copy's edges, the tensor's life),
*predecessor* (a NoCopy with nothing to extend, or in another unit), *group* (a Drop in a placed
alias group or pinned tensor).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jaxmmap.core import suite  # noqa: E402
from jaxmmap.core.io import open_problem  # noqa: E402
from jaxmmap.core.problem import load_solution  # noqa: E402
from jaxmmap.core.rules import Rules, auto_columns  # noqa: E402
from jaxmmap.core.validator import SolutionRejected, check_solution  # noqa: E402
from jaxmmap.env import game  # noqa: E402
from jaxmmap.env.generator import generate  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.solvers import solve  # noqa: E402
from jaxmmap.solvers.heuristic import plan_policy, play_plan  # noqa: E402

RULE_SETS = {"paper": {}, "deferred": dict(placement="deferred"),
             "deferred-early": dict(placement="deferred", copy_supply="early"),
             "deferred-edf": dict(placement="deferred", copy_supply="edf")}
#: Generated programs of about 300 to 20,000 buffers: (seed, instructions), seeds no solver tunes on.
GENERATED = ((501, 100), (502, 500), (503, 1500), (504, 3300), (505, 6600))


def _problems(args):
    names = suite.names()
    chosen = [n[len("suite:"):] for n in args.instances] if args.instances else ([] if args.generated else names)
    for name in chosen:
        if name not in names:
            sys.exit(f"error: no suite instance {name}")
    problems = [suite.load(n) for n in chosen]
    if args.generated or not args.instances:
        problems += [generate(seed, num_instructions=k) for seed, k in GENERATED]
    return problems


CAUSES = ("memory", "copy window", "predecessor", "group", "packer")


def lost_causes(problem, planned: np.ndarray, played: np.ndarray, rules: Rules) -> dict:
    """Plays `planned` as `play_plan` does (its action where legal, else the fallback; the
    Drop-backup on), one jitted move at a time, and records why the game refused the planned
    action each time the trajectory met a buffer where it was illegal (the last time counts: a
    backup restore meets a buffer again). Returns {cause: how many of the decisions `played` (the
    finished game's actions) changed}; *packer*: never refused, dropped by the packer."""
    instance = make_instance(problem, rules)
    padded = np.full(instance.width.shape[0], 2, np.int32)
    padded[: problem.num_buffers] = planned
    policy, step = plan_policy(jax.numpy.asarray(padded)), jax.jit(game.step)
    choose = jax.jit(lambda state: policy(None, state))
    state, why = game.init(instance, backup=True), {}
    width, columns = np.asarray(instance.width), int(instance.columns)
    while not bool(state.done):
        i, cand = int(state.board.cursor), jax.device_get(state.candidates)
        action = int(padded[i])
        if not cand.legal[action]:
            level, covered = int(cand.level[min(action, 1)]), int(cand.alloc_start[1]) < 0
            full = width[i] > 0 and level + width[i] > columns
            why[i] = ("group" if action == 2 else "memory" if full and not (action == 1 and covered)
                      else "copy window" if action == 0 else "predecessor")
        state = step(state, choose(state))
    changed = np.flatnonzero(np.asarray(played) != np.asarray(planned))
    return {cause: sum(why.get(int(i), "packer") == cause for i in changed) for cause in CAUSES}


def _references(args) -> list:
    """(problem, reference solution) for each program of the run: the heuristic's, or the given ones."""
    if not args.solutions:
        out = []
        for problem in _problems(args):
            rules = Rules(columns=auto_columns(problem))
            out.append((problem, solve(problem, "heuristic", budget_s=args.budget, seed=0, rules=rules).solution))
        return out
    out = []
    for pair in args.solutions:
        name, sep, path = pair.rpartition("=")
        if not sep or not name:
            sys.exit(f"error: --solutions takes PROBLEM=SOLUTION, got {pair!r}")
        try:
            problem, solution = open_problem(name), load_solution(path)
            check_solution(problem, solution)
        except SolutionRejected as e:
            sys.exit(f"error: {path} is not a valid solution of {name}: {e}")
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"error: {pair}: {e}")
        out.append((problem, solution))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="*", default=[], help="suite:NAME ... (default: every suite instance)")
    parser.add_argument("--generated", action="store_true", help="the five generated programs (default with no --instances)")
    parser.add_argument("--solutions", nargs="*", default=[], metavar="PROBLEM=SOLUTION",
                        help="replay these solutions instead of the heuristic's, with why decisions were lost")
    parser.add_argument("--budget", type=float, default=10.0, help="the heuristic's seconds per instance")
    parser.add_argument("--rules", nargs="*", default=list(RULE_SETS), choices=list(RULE_SETS))
    args = parser.parse_args(argv)
    if not args.budget > 0:
        sys.exit("error: --budget must be > 0")
    references = _references(args)
    what = "the given solutions" if args.solutions else f"the heuristic's plan ({args.budget:g} s heuristic)"
    print(f"{what} played in the game, as a fraction of its placed return")
    print(f"{'instance':<42} {'buffers':>7} {'reference':>11} " + " ".join(f"{r:>15}" for r in args.rules))
    fractions, notes = {r: [] for r in args.rules}, []
    for problem, reference in references:
        columns = auto_columns(problem)
        row = []
        for name in args.rules:
            rules = Rules(columns=columns, **RULE_SETS[name])
            t0 = time.perf_counter()
            played = play_plan(problem, reference.action, rules)
            check_solution(problem, played)
            fraction = played.ret / reference.ret if reference.ret > 0 else 1.0
            fractions[name].append(fraction)
            row.append(f"{fraction:>8.4f} ({time.perf_counter() - t0:>3.0f}s)")
            if args.solutions and RULE_SETS[name].get("placement") == "deferred":
                counts = lost_causes(problem, np.asarray(reference.action), np.asarray(played.action), rules)
                notes.append(f"  {problem.name}, {name}: {sum(counts.values())} of {problem.num_buffers} decisions "
                             "changed: " + ", ".join(f"{c} {k}" for c, k in counts.items()))
        print(f"{problem.name:<42} {problem.num_buffers:>7,} {reference.ret:>11.5g} " + " ".join(row), flush=True)
    if notes:
        print("\n".join(notes))
    for name in args.rules:
        values = fractions[name]
        gmean = math.exp(sum(math.log(max(v, 1e-12)) for v in values) / len(values))
        held = sum(v >= 0.99 for v in values)
        print(f"{name}: least {min(values):.4f}, geometric mean {gmean:.4f}, at least 0.99 on {held} of {len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
