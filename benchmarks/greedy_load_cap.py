"""Whether greedy's decisions start higher when its games leave room for the packer: a load cap.

In the deferred game greedy fills the load profile up to the usable columns, and the packer (and
the placer after it) may then not fit what it took. Here each of greedy's games
(`rollout.density_policy` at each of `simple.DENSITIES`) is also played with a cap: a Copy or
NoCopy that would raise the load profile's peak over its allocation above `cap` times the usable
columns is played as Drop instead (where Drop is legal). For each cap the game of the highest
return is kept, as the `greedy` solver keeps it, and its decisions are placed without local moves
(`placer.place(moves=0)`), as a fraction of the placement of no decisions. Last column: the best
game over every cap. The counts at the end: programs above, and at least at, the floor. Every
placed solution is validated (`place`).

    python benchmarks/greedy_load_cap.py                        # the tuning programs
    python benchmarks/greedy_load_cap.py --caps 1 0.9 --split held-out
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.greedy_starts import deferred_rules, split_problems  # noqa: E402
from jaxmmap.env import game  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import density_policy, rollout, to_solution, won_returns  # noqa: E402
from jaxmmap.solvers.placer import place, place_nothing  # noqa: E402
from jaxmmap.solvers.simple import least_densities  # noqa: E402


def capped_policy(params: jax.Array):
    """`density_policy(params[0])`, with a placement whose allocation would take the load
    profile's peak above `params[1]` times the usable columns played as Drop where legal."""
    least, cap = params[0], params[1]
    greedy = density_policy(least)

    def policy(key, state):
        cand, inst, load = state.candidates, state.instance, state.board.load
        width = inst.width[jnp.minimum(state.board.cursor, inst.width.shape[0] - 1)]
        steps = jnp.arange(load.shape[0])
        peak = jax.vmap(lambda s, e: jnp.max(jnp.where((steps >= s) & (steps <= e), load, 0)))(
            cand.alloc_start[:2], cand.alloc_end[:2])
        action = greedy(key, state)
        placing = jnp.minimum(action, 1)
        over = ((action < 2) & (cand.alloc_start[placing] >= 0) & (width > 0)
                & ((peak[placing] + width).astype(jnp.float32) > cap * inst.columns.astype(jnp.float32)))
        return jnp.where(over & game.legal_action_mask(state)[2], 2, action).astype(jnp.int32)

    return policy


def starts(problem, caps: list[float]) -> list[float]:
    """Per cap, the placed start of greedy's best game / the floor; then that of the best game of all."""
    rules = deferred_rules(problem)
    floor = place_nothing(problem, rules=rules, budget_s=600).ret
    instance = make_instance(problem, rules)
    densities = least_densities(problem, rules)
    params = jnp.asarray([[d, c] for c in caps for d in densities], jnp.float32)
    play = jax.jit(jax.vmap(lambda k, p: rollout(instance, k, capped_policy(p), backup=True)))
    states = play(jax.random.split(jax.random.key(0), len(params)), params)
    returns = np.asarray(won_returns(states)).reshape(len(caps), len(densities))

    def placed(cap: int, density: int) -> float:
        j = cap * len(densities) + density
        solution = to_solution(problem, jax.tree.map(lambda x: x[j], states), rules, solver="greedy")
        return place(problem, solution, rules=rules, moves=0, fresh=False, budget_s=600).ret / floor

    best = [placed(c, int(np.argmax(returns[c]))) for c in range(len(caps))]
    return best + [placed(*np.unravel_index(int(np.argmax(returns)), returns.shape))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("train", "held-out"), default="train")
    parser.add_argument("--max-buffers", type=int, default=3000, help="the largest training program")
    parser.add_argument("--caps", type=float, nargs="+", default=[1.0, 0.95, 0.9, 0.8])
    args = parser.parse_args(argv)
    print(f"# greedy's best game per load cap, placed without moves, / the placement of no decisions "
          f"({args.split}; {jax.device_count()} {jax.default_backend()}, {os.cpu_count()} cores)")
    print("| program | buffers | " + " | ".join(f"cap {c:g}" for c in args.caps) + " | best of all | s |")
    print("|---|---:|" + "---:|" * (len(args.caps) + 2))
    table = []
    for problem in split_problems(args.split, args.max_buffers):
        began = time.perf_counter()
        row = starts(problem, args.caps)
        table.append(row)
        print(f"| {problem.name} | {problem.num_buffers:,} | " + " | ".join(f"{x:.4f}" for x in row)
              + f" | {time.perf_counter() - began:.0f} |", flush=True)
    table = np.asarray(table)
    print("\n| cap | above the floor | at least the floor |\n|---|---:|---:|")
    for j, name in enumerate([f"{c:g}" for c in args.caps] + ["best of all"]):
        print(f"| {name} | {int(np.sum(table[:, j] > 1 + 1e-9))} of {len(table)} "
              f"| {int(np.sum(table[:, j] >= 1 - 1e-9))} of {len(table)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
