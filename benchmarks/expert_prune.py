"""The expert search's pruned games: one generation with and without pruning, in the deferred game.

    python benchmarks/expert_prune.py tune-2001.json.gz suite:wavenet_train@gpu tune-2002.json.gz

(`jaxmmap generate --seed 2001 --instructions 1000 -o tune-2001.json.gz`, and seed 2002 with 3000
instructions: the generated tuning programs of docs/agent.md.) For each program the search's
center is the heuristic's plan as the game plays it (as `muzero` starts in the deferred game with
the early copy supply), and `--repeats` generations of `rollout.generation_games(N, 64)` games play
around it (none of them the network's evaluation game, which the solver plays at most every
`expert.EVALUATION_GAP` generations), as the solver plays them on this device
(`expert_games.games_one_by_one`), once with `play_search(prune=False)` and once with the
default, which stops an exploring game that has played only the center's moves once it is past
its window (a copy of the center) and ends one lost where it ends below the center's return
(`game.step`'s `pack_floor`: unpacked, or once its packings are). Each way is jitted alone and
timed after a warm-up generation (compilation excluded), on the same keys, the two in turn.
Printed: the seconds of a generation each way, their ratio, the games played each way, and of
those the copies stopped and the games lost below the center; the script checks that the other
games are the same games, that each copy, played out, has the center's return and each lost one,
packed, is below it (else it exits with an error).
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

from jaxmmap.agent import expert, expert_games  # noqa: E402
from jaxmmap.agent.config import AgentConfig  # noqa: E402
from jaxmmap.core.io import open_problems  # noqa: E402
from jaxmmap.core.rules import Rules  # noqa: E402
from jaxmmap.env import observation  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import generation_games, won_returns  # noqa: E402
from jaxmmap.solvers.heuristic import heuristic, play_plan  # noqa: E402

RULES = Rules(placement="deferred", copy_supply="early")


def measure(problem, repeats: int) -> tuple[int, float, float, int, int]:
    """(games a generation, seconds a generation unpruned, pruned, of all games played: those
    stopped as the center's copies, those lost unpacked)."""
    instance = make_instance(problem, RULES)
    config = AgentConfig(games=generation_games(problem.num_buffers, 64))
    plan = play_plan(problem, heuristic(problem, 30.0, 0, rules=RULES).solution.action, RULES).action
    state = expert.init(instance, config, seed=0, demonstration=np.asarray(plan))
    ctx = observation.context(instance)
    searches = {prune: jax.jit(lambda s, k, prune=prune: expert_games.play_search(
        s.learner.params, expert_games.start_search(k, instance, s.center_return, config=config, evaluate=False),
        instance, ctx,
        s.center, jnp.float32(1.0), jnp.int32(2 ** 31 - 1), config=config, prune=prune)) for prune in (False, True)}
    for search in searches.values():
        jax.block_until_ready(search(state, jax.random.key(0)))
    seconds, returns, actions, copies = {False: 0.0, True: 0.0}, {False: [], True: []}, {False: [], True: []}, []
    for r in range(1, repeats + 1):  # (the two ways in turn, first one then the other: a generation's
        # time depends on its games, several seconds apart, and the machine's drifts on both)
        for prune in (False, True) if r % 2 else (True, False):
            start = time.perf_counter()
            games = jax.block_until_ready(searches[prune](state, jax.random.key(r)))
            seconds[prune] += (time.perf_counter() - start) / repeats
            returns[prune].append(np.asarray(won_returns(games.states)))
            actions[prune].append(np.asarray(games.states.board.action))
            if prune:
                copies.append(np.asarray(expert_games.duplicate(games, instance)))
    (whole, cut), stopped = (np.stack(returns[p]) for p in (False, True)), np.stack(copies)
    lost = np.isfinite(whole) & ~np.isfinite(cut) & ~stopped
    kept, center = ~lost & ~stopped, float(state.center_return)
    same = np.array_equal(np.stack(actions[False])[kept], np.stack(actions[True])[kept])
    if not (same and np.array_equal(whole[kept], cut[kept]) and (whole[lost] < center).all()
            and (whole[stopped] == center).all()):
        raise SystemExit(f"error: {problem.name}: pruning changed a game it kept, or cut one that was not below"
                         " the center or its copy")
    return config.games, seconds[False], seconds[True], int(stopped.sum()), int(lost.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--repeats", type=int, default=8, help="generations timed each way")
    args = parser.parse_args()
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}); generations around the heuristic's"
          " plan, compilation excluded")
    print(f"{'program':34} {'buffers':>8} {'games':>5} {'unpruned s':>10} {'pruned s':>9} {'ratio':>6} {'played':>6}"
          f" {'copies':>6} {'lost':>6}")
    for problem in open_problems(args.instances):
        games, whole, cut, stopped, lost = measure(problem, args.repeats)
        print(f"{problem.name:34} {problem.num_buffers:>8,} {games:>5} {whole:>10.2f} {cut:>9.2f} {whole / cut:>5.2f}x"
              f" {games * args.repeats:>6} {stopped:>6} {lost:>6}", flush=True)


if __name__ == "__main__":
    main()
