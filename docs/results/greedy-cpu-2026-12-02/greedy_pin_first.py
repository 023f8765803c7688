"""Greedy pinning first: its games with NoCopy wherever NoCopy is dense enough, against its own.

On the tuning programs (`benchmarks/greedy_starts.py`'s), deferred game, early copy supply: for
each of greedy's least densities (`solvers.simple.least_densities`), the decisions of greedy's game
(`rollout.density_policy`: Copy or NoCopy, whichever takes less room) and of the same game with
NoCopy chosen wherever it is legal and dense enough (else Copy), each placed without local moves
(`placer.place(moves=0)`) over the placement of no decisions; the ratio of the two games' best
returns; then how many programs start above (at least at) that placement with greedy's four games
(`cur`), the pinning ones (`pin`) and all eight (`both`), each kept by return. Every solution is
validated (`place` checks it). Run: python greedy_pin_first.py (2-core CPU, one core, 3 minutes).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from greedy_starts import deferred_rules, split_problems  # noqa: E402

from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import density_policy, drop_first_policy, placement_densities, rollout, to_solution  # noqa: E402
from jaxmmap.solvers.placer import place, place_nothing  # noqa: E402
from jaxmmap.solvers.simple import least_densities  # noqa: E402


def pin_policy(min_density):
    """`density_policy`'s choice of what to place, with NoCopy (action 1) wherever it is acceptable."""
    def policy(key, state):
        density, can = placement_densities(state)
        ok = can & (density >= min_density)
        return jnp.where(jnp.any(ok), jnp.where(ok[1], 1, 0).astype(jnp.int32), drop_first_policy(key, state))
    return policy


tot = {"cur": [], "pin": [], "both": []}
for problem in split_problems("train", 3000):
    t = time.perf_counter()
    rules = deferred_rules(problem)
    floor = place_nothing(problem, rules=rules, budget_s=600).ret
    instance = make_instance(problem, rules)
    res = {}
    for name, pol in (("cur", density_policy), ("pin", pin_policy)):
        play = jax.jit(lambda key, least, inst=instance, pol=pol: rollout(inst, key, pol(least), backup=True))
        rs, ps = [], []
        for least in least_densities(problem, rules):
            sol = to_solution(problem, play(jax.random.key(0), jnp.float32(least)), rules, solver="greedy")
            rs.append(sol.ret)
            ps.append(place(problem, sol, rules=rules, moves=0, fresh=False, budget_s=600).ret / floor)
        res[name] = (rs, ps)
    for name in ("cur", "pin"):
        tot[name].append(res[name][1][int(np.argmax(res[name][0]))])
    tot["both"].append((res["cur"][1] + res["pin"][1])[int(np.argmax(res["cur"][0] + res["pin"][0]))])
    cur, pin = (" ".join(f"{x:.4f}" for x in res[name][1]) for name in ("cur", "pin"))
    print(problem.name, "cur", cur, "| pin", pin, "| pin game/cur game",
          f"{max(res['pin'][0]) / max(res['cur'][0]):.4f}", f"{time.perf_counter() - t:.0f}s", flush=True)
for k, v in tot.items():
    v = np.asarray(v)
    print(k, "above", int(np.sum(v > 1 + 1e-9)), "at least", int(np.sum(v >= 1 - 1e-9)), "of", len(v))
