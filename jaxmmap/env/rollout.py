"""Playing whole games on the accelerator: simple policies, jitted rollouts, solution export.

A policy is a pure function `policy(key, state) -> action` (int32[]). `rollout` plays one game to
its end inside `lax.while_loop`; `rollouts` plays a batch of games in one loop over the batch (use
it rather than `vmap(rollout)`: a vmapped loop selects every game's whole state on every move). `to_solution` turns a
finished state into a `Solution` file, and `play` does all of it for a `Problem`, validating the
best solution it found.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.core.problem import Problem, Solution
from jaxmmap.core.rules import Rules, discretize, exact_return
from jaxmmap.core.validator import BUG, check_solution  # the independent checker
from jaxmmap.env import game
from jaxmmap.env.instance import Instance, make_instance

Policy = Callable[[jax.Array, game.State], jax.Array]


def random_policy(key: jax.Array, state: game.State) -> jax.Array:
    """A uniformly random legal action."""
    mask = game.legal_action_mask(state)
    return jax.random.choice(key, 3, p=mask / jnp.maximum(mask.sum(), 1)).astype(jnp.int32)


def greedy_policy(key: jax.Array, state: game.State) -> jax.Array:
    """The legal action with the best immediate reward; ties go to Copy, then NoCopy, then Drop."""
    del key
    score = jnp.where(game.legal_action_mask(state), game.action_rewards(state), -jnp.inf)
    return jnp.argmax(score).astype(jnp.int32)


def placement_densities(state: game.State) -> tuple[jax.Array, jax.Array]:
    """float32[2] each, for Copy and NoCopy of the current buffer: the potential reward
    (`game.placement_potential`, the same for both) per column-step the placement allocates
    (inf where it allocates nothing), and whether it is legal and that reward positive."""
    cand, inst = state.candidates, state.instance
    width = inst.width[jnp.minimum(state.board.cursor, inst.width.shape[0] - 1)].astype(jnp.float32)
    steps = jnp.where(cand.alloc_start >= 0, cand.alloc_end - cand.alloc_start + 1, 0).astype(jnp.float32)
    room = (width * steps)[:2]
    reward = game.placement_potential(state)
    density = jnp.where(room > 0, reward / jnp.maximum(room, 1.0), jnp.inf)
    return density, game.legal_action_mask(state)[:2] & (reward > 0)


def density_policy(min_density: jax.Array) -> Policy:
    """Greedy by the room a move takes: the legal placement (Copy or NoCopy) of the highest
    potential reward per column-step it allocates (`placement_densities`), where that reward is
    positive and the ratio at least `min_density` (float32[]; a NoCopy that allocates nothing
    always is); else the first legal of Drop, NoCopy, Copy. `min_density` 0 places every use
    that can still pay, in program order."""

    def policy(key: jax.Array, state: game.State) -> jax.Array:
        density, can = placement_densities(state)
        ok = can & (density >= min_density)
        best = jnp.argmax(jnp.where(ok, density, -jnp.inf)).astype(jnp.int32)
        return jnp.where(jnp.any(ok), best, drop_first_policy(key, state))

    return policy


def drop_first_policy(key: jax.Array, state: game.State) -> jax.Array:
    """The first legal action of Drop, NoCopy, Copy: what finishes a game fastest, keeping
    what it has placed (the solvers' way to end a game when their budget runs out)."""
    del key
    return (2 - jnp.argmax(game.legal_action_mask(state)[::-1])).astype(jnp.int32)


POLICIES: dict[str, Policy] = {"random": random_policy, "greedy": greedy_policy}


def won_returns(states: game.State) -> jax.Array:
    """float32[...]: the return of each finished game that was not lost; -inf otherwise."""
    return jnp.where(states.done & ~states.lost, states.board.ret, -jnp.inf)


def rollout(instance: Instance, key: jax.Array, policy: Policy, *, backup: bool = False,
            max_moves: int | None = None) -> game.State:
    """Plays one game to its end, or to `max_moves`. Without the backup a game has at most N
    moves; with it, each restore drops an alias group for good, so at most N * (N + 1)."""
    n = instance.width.shape[0]
    limit = max_moves if max_moves is not None else game.move_limit(n, backup=backup)

    def cond(carry):
        state, _ = carry
        return ~state.done & (state.moves < limit)

    def body(carry):
        state, key = carry
        key, sub = jax.random.split(key)
        return game.step(state, policy(sub, state)), key

    k = checkpoints_for(instance, 1) if backup else 0
    state, _ = jax.lax.while_loop(cond, body, (game.init(instance, backup=backup, checkpoints=k), key))
    return state


def _state_axes(instance_axis, backup: bool) -> game.State:
    """vmap axes of a batch of states: the instance shared (None) or stacked (0)."""
    b = 0 if backup else None
    return game.State(instance=instance_axis, board=0, backup=b, checkpoints=b, candidates=0,
                      reward=0, done=0, lost=0, moves=0, restores=0)


def rollouts(instance: Instance, keys: jax.Array, policy, *, backup: bool = False,
             max_moves: int | None = None, params=None, stacked: bool = False) -> game.State:
    """Plays a batch of games, one per key, to their ends (or to `max_moves`), each game exactly
    as `rollout` plays it with its key: states with a leading batch axis (the instance shared,
    unless `stacked`: one instance per game, stacked along axis 0).

    With `params` (a pytree with a leading batch axis), `policy(params_i)` is game i's policy.

    The loop runs while some game is unfinished and steps all games (a finished game does not
    move), so no game's state is copied to keep it: the work per move is what the move touches.
    Every unfinished game has played as many moves as the loop has run, so `max_moves` is a
    bound on the loop."""
    axes = _state_axes(0 if stacked else None, backup)
    n = instance.width.shape[-1]
    limit = max_moves if max_moves is not None else game.move_limit(n, backup=backup)
    k = checkpoints_for(instance, keys.shape[0]) if backup else 0
    init = jax.vmap(lambda inst, _: game.init(inst, backup=backup, checkpoints=k), in_axes=(axes.instance, 0),
                    out_axes=axes)(instance, keys)
    states, _ = advance(init, keys, policy, moves=limit, params=params, stacked=stacked)
    return states


CHECKPOINT_BYTES = 256 * 2 ** 20  # what a batch's checkpoints may take, all games together
CHECKPOINT_FROM = 2048  # buffers (padded): below, a replay from the backup is short anyway


def checkpoints_for(instance: Instance, games: int) -> int:
    """How many checkpoints (`game.init`) each of `games` games keeps: none below
    `CHECKPOINT_FROM` buffers, else up to 16 within `CHECKPOINT_BYTES` of grid copies for the
    batch (a single game on 50,000 buffers keeps a few; a batch of hundreds, none: their
    restores replay from the backup)."""
    if instance.width.shape[-1] < CHECKPOINT_FROM:
        return 0
    grid = instance.supply.shape[-1] * instance.grid_words * 4
    return int(min(16, CHECKPOINT_BYTES // max(1, grid * games)))


#: What the states of one batch of games may take (`games_within`); the batch's peak memory is a
#: few times this (the loop's carry, the step's copies).
BATCH_BYTES = 2 ** 30


def games_within(instance: Instance, games: int, budget: int = BATCH_BYTES) -> int:
    """The most games, up to `games` and at least one, whose states (Drop-backup on, no
    checkpoints) take at most `budget` bytes: a batch of 256 games of a 50,000-buffer program
    would hold 5.6 GB of states alone."""
    one = jax.eval_shape(lambda: game.init(instance, backup=True).replace(instance=None))
    size = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(one))
    return int(max(1, min(games, budget // max(size, 1))))


#: The moves a generation of a search's default batch plays at most (`generation_games`).
MOVES_PER_GENERATION = 131_072


def generation_games(num_buffers: int, games: int) -> int:
    """Games a generation of a search plays on a program of `num_buffers`: `games`, halved (to at
    least 8) while a generation would play more than `MOVES_PER_GENERATION` moves. A generation
    plays every game to its end, so 64 games of 11,645 buffers take minutes on a 2-core CPU, and a
    short budget ends inside the first; powers of two keep the compiled shapes few. The agent's
    expert mode and ES size their default generations by it (docs/decisions.md, "ES's
    population sized to the program")."""
    while games > 8 and games * num_buffers > MOVES_PER_GENERATION:
        games //= 2
    return games


@functools.partial(jax.jit, static_argnames=("games", "backup", "checkpoints"))
def start(instance: Instance, games: int, *, backup: bool = True, checkpoints: int | None = None) -> game.State:
    """`games` first states of `instance` (a batch, the instance shared), for `advance`; with
    the Drop-backup, `checkpoints_for` the batch unless given."""
    k = checkpoints_for(instance, games) if checkpoints is None else checkpoints
    return jax.vmap(lambda _: game.init(instance, backup=backup, checkpoints=k),
                    out_axes=_state_axes(None, backup))(jnp.arange(games))


def advance(states: game.State, keys: jax.Array, policy, *, moves, params=None,
            stacked: bool = False) -> tuple[game.State, jax.Array]:
    """Plays at most `moves` more moves (an int, or a traced int32: one compile for any count)
    of a batch of games; returns the states and the keys to go on with. Long games are played
    in slices this way, so that a solver can look at its clock between them (`rollouts` is
    `advance` from the first states, to the end)."""
    backup = states.backup is not None
    axes = _state_axes(0 if stacked else None, backup)
    act = ((lambda k, s, p: policy(k, s)) if params is None  # noqa: E731
           else (lambda k, s, p: policy(p)(k, s)))
    p_axis = None if params is None else 0

    def cond(carry):
        states, _, played = carry
        return jnp.any(~states.done) & (played < moves)

    def body(carry):
        states, keys, played = carry
        pairs = jax.vmap(jax.random.split)(keys)
        actions = jax.vmap(act, in_axes=(0, axes, p_axis))(pairs[:, 1], states, params)
        states = jax.vmap(game.step, in_axes=(axes, 0), out_axes=axes)(states, actions)
        return states, pairs[:, 0], played + 1

    states, keys, _ = jax.lax.while_loop(cond, body, (states, keys, jnp.int32(0)))
    return states, keys


def take(states: game.State, i) -> game.State:
    """Game i of a batch (instance shared) as a batch of one: for `advance`."""
    return jax.tree.map(lambda x: x[i:i + 1], states.replace(instance=None)).replace(instance=states.instance)


def nth_game(states: game.State, i, *, stacked: bool = False) -> game.State:
    """Game i of a batch of `rollouts` (whose instance is shared unless `stacked`)."""
    if stacked:
        return jax.tree.map(lambda x: x[i], states)
    return jax.tree.map(lambda x: x[i], states.replace(instance=None)).replace(instance=states.instance)


def to_solution(problem: Problem, state: game.State, rules: Rules = Rules(), *,
                solver: str = "jaxmmap") -> Solution:
    """The solution of a finished, won game (one game: no batch axis)."""
    if not bool(state.done) or bool(state.lost):
        raise ValueError("only a finished game that was not lost has a solution")
    offset, action, alloc_start, alloc_end, copy_start, copy_end, ret = jax.device_get(_decisions(state))
    n = problem.num_buffers
    d = discretize(problem, rules)
    arr = lambda x: np.asarray(x[:n], np.int64)  # noqa: E731
    offset, action = arr(offset), arr(action)
    return Solution(problem=problem.name, solver=solver, ret=exact_return(problem, action, d),
                    action=action,
                    offset=np.where(offset >= 0, offset * d.col_bytes, -1),
                    alloc_start=arr(alloc_start), alloc_end=arr(alloc_end),
                    copy_start=arr(copy_start), copy_end=arr(copy_end),
                    rules=rules.to_json(),
                    metadata={"moves": int(state.moves), "restores": int(state.restores),
                              "float32_return": float(ret)})


@jax.jit
def _decisions(state: game.State):
    """A finished game's decisions, in one jitted call: op by op, each of their operations would
    compile on its own, a noticeable part of a short budget."""
    b = state.board
    return (b.offset, b.action, b.alloc_start, b.alloc_end, *game.copies(state), b.ret)


def play(problem: Problem, policy: str = "greedy", *, seed: int = 0, games: int = 1,
         rules: Rules = Rules(), backup: bool = True) -> tuple[Solution, dict]:
    """Plays `games` games in parallel with a named policy; returns the best validated solution
    and a summary (returns of all games, time)."""
    instance = make_instance(problem, rules)
    keys = jax.random.split(jax.random.key(seed), games)
    run = jax.jit(lambda k: rollouts(instance, k, POLICIES[policy], backup=backup))
    t0 = time.perf_counter()
    states = jax.block_until_ready(run(keys))
    seconds = time.perf_counter() - t0
    returns = np.asarray(won_returns(states))
    best = int(np.argmax(returns))
    state = nth_game(states, best)
    if not np.isfinite(returns[best]) or not bool(state.done):
        raise RuntimeError(f"no game of the {policy} policy finished feasibly")
    solution = to_solution(problem, state, rules, solver=policy)
    check_solution(problem, solution, what=f"the {policy} policy's best game (a bug in the game)",
                   allow_nocopy_move=rules.nocopy_offset == "lowest", hint=BUG)
    summary = {"problem": problem.name, "policy": policy, "seed": seed, "games": games,
               "best_return": float(returns[best]),
               "mean_return": float(np.mean(np.where(np.isfinite(returns), returns, 0.0))),
               "lost": int(np.sum(np.asarray(states.lost))),
               "restores": int(np.sum(np.asarray(states.restores))),
               "seconds_with_compile": seconds}
    return solution, summary
