"""How far a game is from a local optimum of single-move changes.

From a solution of the game (a solver's written game, `--no-place`), plays every game that changes
one buffer's action to one of the two others and follows the solution's actions after it (where
one is illegal, the legal action of the best immediate reward), in batches of 256; takes the best
improvement of a batch and starts again, until a whole pass over the buffers improves nothing or
the seconds run out. Prints the solution's return, each improvement and the last return. The game
is the solution's (its rules). Every improved game's solution is validated.
Run: python flips.py PROBLEM SOLUTION [SECONDS]
"""

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap import Rules, load_solution, make_instance
from jaxmmap.core.io import open_problem
from jaxmmap.core.validator import check_solution
from jaxmmap.env import game
from jaxmmap.env.rollout import rollout, to_solution, won_returns

problem, solution = open_problem(sys.argv[1]), load_solution(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 600.0
rules = Rules(**solution.rules)
instance = make_instance(problem, rules)
n = problem.num_buffers


def follow(plan, k, other):
    def policy(key, state):
        i = jnp.minimum(state.board.cursor, n - 1)
        want = jnp.where(i == k, other, plan[i])
        legal = game.legal_action_mask(state)
        best = jnp.argmax(jnp.where(legal, game.action_rewards(state), -jnp.inf))
        return jnp.where(legal[want], want, best).astype(jnp.int32)
    return policy


@jax.jit
def play(plan, ks, others):
    def one(k, other):
        state = rollout(instance, jax.random.key(0), follow(plan, k, other), backup=True)
        return won_returns(jax.tree.map(lambda x: x[None], state))[0], state
    return jax.vmap(one)(ks, others)


began = time.perf_counter()
returns, states = play(jnp.asarray(solution.action, jnp.int32), jnp.full(256, -1), jnp.zeros(256, jnp.int32))
best, plan = float(returns[0]), np.asarray(states.board.action[0, :n])
print(f"solution {solution.ret:.6g}, replayed {best:.6g} ({time.perf_counter() - began:.1f} s with the compile)")
passes, improved = 0, True
while improved and time.perf_counter() - began < seconds:
    passes, improved = passes + 1, False
    ks = np.repeat(np.arange(n), 2)
    others = np.stack([(plan + 1) % 3, (plan + 2) % 3], 1).reshape(-1)
    order = np.random.default_rng(passes).permutation(len(ks))
    for s in range(0, len(ks), 256):
        k, other = ks[order[s:s + 256]], others[order[s:s + 256]]
        pad = 256 - len(k)
        returns, states = play(jnp.asarray(plan), jnp.asarray(np.pad(k, (0, pad), constant_values=-1)),
                               jnp.asarray(np.pad(other, (0, pad))))
        j = int(np.argmax(np.asarray(returns)))
        if float(returns[j]) > best + 1e-9:
            won = jax.tree.map(lambda x, j=j: x[j], states)
            check_solution(problem, to_solution(problem, won, rules, solver="flips"), what="a changed game")
            best, plan, improved = float(returns[j]), np.asarray(won.board.action[:n]), True
            print(f"pass {passes}, {time.perf_counter() - began:.1f} s: {best:.6g}", flush=True)
            break
        if time.perf_counter() - began > seconds:
            break
state = "a local optimum of single changes" if not improved else "stopped by the clock"
print(f"last {best:.6g} ({100 * (best / solution.ret - 1):+.3f}%), {state}, {time.perf_counter() - began:.1f} s")
