"""Seconds of a deferred game's last move (the packer) against the rest of the game: greedy's
game replayed to its last buffer, then its last move (compilation excluded; one core).

    PYTHONPATH=<repository> python lastmove.py gen-1002.json.gz gen-1003.json.gz suite:wavenet_train@gpu
"""

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.core.io import open_problem
from jaxmmap.env import game
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import greedy_policy, rollout
from jaxmmap.solvers import rules_for


def timed(fn, *args):
    """(seconds of a call after a warm-up call, its output)."""
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    return time.perf_counter() - start, out


def measure(name: str) -> str:
    problem = open_problem(name)
    inst = make_instance(problem, rules_for(problem, "muzero"))
    n = problem.num_buffers
    actions = jnp.asarray(np.asarray(rollout(inst, jax.random.key(0), greedy_policy, backup=True).board.action),
                          jnp.int32)
    before = jax.jit(lambda: jax.lax.while_loop(lambda s: ~s.done & (s.board.cursor < n - 1),
                                                lambda s: game.step(s, actions[s.board.cursor]),
                                                game.init(inst, backup=True)))
    rest, state = timed(before)
    last, ended = timed(jax.jit(lambda s: game.step(s, actions[s.board.cursor])), state)
    return (f"{problem.name}: {n} buffers, {int(state.moves)} moves in {rest:.3f} s ({int(state.moves) / rest:,.0f}/s);"
            f" the last move {last:.3f} s ({last / rest * 100:.0f}% of the rest); return before it"
            f" {float(state.board.ret):.3f}, after {float(ended.board.ret):.3f}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(measure(arg), flush=True)
