"""What costs greedy's decisions: which uses they serve, or how (Copy or NoCopy).

On six tuning programs where greedy's placed decisions start below, or far above, the placement
of no decisions (`greedy_placed_games.txt`), deferred game, early copy supply: greedy's first two
games (`solvers.simple.least_densities`), their decisions placed by the heuristic's rules
(`heuristic.plan(decisions=..., grow=True)`, then interleaved, `interleave=True`) over the placement
of no decisions, as they are (`own`) and with the Copy or NoCopy of that placement wherever both
serve the use from fast memory (`floor-types`). Run: python greedy_types.py (one core, 1 minute).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from greedy_starts import deferred_rules, split_problems  # noqa: E402

from jaxmmap.core.problem import DROP  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import density_policy, rollout, to_solution  # noqa: E402
from jaxmmap.solvers.heuristic import plan  # noqa: E402
from jaxmmap.solvers.placer import place_nothing  # noqa: E402
from jaxmmap.solvers.simple import least_densities  # noqa: E402

WANT = ("lstm_infer", "alexnet_train", "gpt_small_train", "random-2001", "resnet50_infer@gpu")
for problem in split_problems("train", 3000):
    if not any(w in problem.name for w in WANT):
        continue
    rules = deferred_rules(problem)
    floor = place_nothing(problem, rules=rules, budget_s=600)
    instance = make_instance(problem, rules)
    play = jax.jit(lambda key, least, inst=instance: rollout(inst, key, density_policy(least), backup=True))
    for k, least in enumerate(least_densities(problem, rules)[:2]):
        a = to_solution(problem, play(jax.random.key(0), jnp.float32(least)), rules, solver="greedy").action
        typed = np.where((a != DROP) & (floor.action != DROP), floor.action, a)
        ratios = [plan(problem, rules, pins="compare", decisions=d, **kw).solution.ret / floor.ret
                  for d in (a, typed) for kw in ({"grow": True}, {"interleave": True})]
        print(problem.name, k, "own {:.4f}/{:.4f} floor-types {:.4f}/{:.4f}".format(*ratios), flush=True)
