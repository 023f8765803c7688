"""Greedy keeping the game whose decisions place highest, instead of the game of the highest return.

On the tuning programs (`benchmarks/greedy_starts.py`'s: the suite's training split up to 3,000
buffers and generated seeds 2000-2003), in the deferred game with the early copy supply: each of
greedy's four games (one per least density, `solvers.simple.DENSITIES`), its return in the game,
and its decisions placed without local moves (`placer.place(moves=0)`) over the placement of no
decisions. Then how many programs start above (at least at) that placement when greedy keeps its
game by return (as it does) and when it keeps the game that places highest. Every game's solution
is validated. Run: python greedy_placed_games.py (2-core CPU, about 2 minutes).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from greedy_starts import deferred_rules, split_problems  # noqa: E402

from jaxmmap.core.validator import check_solution  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import density_policy, rollout, to_solution  # noqa: E402
from jaxmmap.solvers.placer import place, place_nothing  # noqa: E402
from jaxmmap.solvers.simple import least_densities  # noqa: E402

rows = []
print("program | buffers | each game's return | each game placed / no decisions placed | kept by return | s")
for problem in split_problems("train", 3000):
    began = time.perf_counter()
    rules = deferred_rules(problem)
    floor = place_nothing(problem, rules=rules, budget_s=600).ret
    instance = make_instance(problem, rules)
    play = jax.jit(lambda key, least, inst=instance: rollout(inst, key, density_policy(least), backup=True))
    returns, placed = [], []
    for least in least_densities(problem, rules):
        solution = to_solution(problem, play(jax.random.key(0), jnp.float32(least)), rules, solver="greedy")
        check_solution(problem, solution, what="a greedy game's solution")
        returns.append(solution.ret)
        placed.append(place(problem, solution, rules=rules, moves=0, fresh=False, budget_s=600).ret / floor)
    kept = int(np.argmax(returns))
    rows.append((placed[kept], max(placed)))
    print(f"{problem.name} | {problem.num_buffers} | " + " ".join(f"{r:.5g}" for r in returns) + " | "
          + " ".join(f"{x:.4f}" for x in placed) + f" | game {kept} | {time.perf_counter() - began:.0f}", flush=True)
rows = np.asarray(rows)
for j, name in enumerate(("kept by return", "kept by placement")):
    print(f"{name}: above no decisions on {int(np.sum(rows[:, j] > 1 + 1e-9))} of {len(rows)}, "
          f"at least on {int(np.sum(rows[:, j] >= 1 - 1e-9))}")
