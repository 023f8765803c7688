"""The expert's games: one generation's search in the true game (`jaxmmap.agent.expert`, step 1).

`start_search` draws a generation's games (the evaluation game, restarts from a prefix of the
center, deviation rates and windows, the directed games' directions), `play_search` plays them
on, at most a given number of moves at a time (so that a generation can be played in slices on a
clock), and `ended` tells which have ended. Played one after the other (`games_one_by_one`: large
programs on a CPU), the restarted games start from the `fork`, the center's moves replayed once a
generation, instead of replaying their prefixes: the same games, move for move, for one replay
instead of one each.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.networks import PolicyValueNet
from jaxmmap.env import game
from jaxmmap.env import observation as policy_lib
from jaxmmap.env.backup import restores_together
from jaxmmap.env.instance import Instance
from jaxmmap.env.observation import NUM_DECISION_FEATURES, NUM_FEATURES, decision_features
from jaxmmap.env.packer import dropping_gain_bound


def network(config: AgentConfig) -> PolicyValueNet:
    return PolicyValueNet(config.network.decision)


def _move_limit(instance: Instance) -> int:
    """Moves a game may take (Drop-backup restores replay moves; more is counted as lost)."""
    return 8 * instance.width.shape[0] + 16


REFERENCE_BUFFERS = 128  # deviation_min is the rate at this size or below; it scales as 1/N above
DEVIATIONS = 16  # deviations of each game recorded for learning (the first ones)
UNIFORM_SHARE = 0.25  # of a deviation's distribution, spread evenly over the allowed moves
CENTER_BONUS = 1.0  # a directed game's score of the center's move (ES's plan weight at its start)
#: A pruned game is below the center's return by more than this share of it, plus PRUNE_ABSOLUTE:
#: more than the packings' tie tolerance (1e-5 of both returns, plus 1e-7) and float32 rounding.
PRUNE_MARGIN, PRUNE_ABSOLUTE = 1e-4, 1e-6


def _deviation_logits(logits: jax.Array, allowed: jax.Array, temp: jax.Array) -> jax.Array:
    """Log-probabilities of a deviation's move: the network's policy at the temperature over the
    allowed moves, mixed with the uniform distribution over them (UNIFORM_SHARE), so that
    however sure the network becomes, every alternative stays in the search."""
    p = jax.nn.softmax(jnp.where(allowed, logits / temp, -jnp.inf))
    uniform = allowed / jnp.maximum(jnp.sum(allowed), 1)
    mixed = (1 - UNIFORM_SHARE) * p + UNIFORM_SHARE * uniform
    return jnp.where(allowed, jnp.log(jnp.maximum(mixed, 1e-30)), -jnp.inf)


def deviation_range(num_buffers: jax.Array, config: AgentConfig) -> tuple[jax.Array, jax.Array]:
    """The range of the per-game deviation rate. Above REFERENCE_BUFFERS buffers its lower end
    scales as 1/N, so that the quietest games still change only a few moves (about
    deviation_min * REFERENCE_BUFFERS): on a large program a fixed rate would change dozens of
    moves of every game."""
    scale = jnp.minimum(1.0, REFERENCE_BUFFERS / jnp.maximum(num_buffers, 1))
    return (jnp.float32(config.deviation_min) * scale, jnp.float32(config.deviation_max))


@struct.dataclass
class Games:
    """A generation's games while they are played (G = `games`; see `start_search`).

    Attributes:
      states: `game.State` with a leading G axis, without the instance.
      keys: key[G] each game's key; a move's draws are folded in from its number (`State.moves`),
        so a game started from the fork below draws what it would have replaying its prefix.
      record: its first DEVIATIONS deviations: features float32[G, D, F], allowed bool[G, D, 3],
        action int32[G, D], count int32[G].
      prefix: int32[G] the center's moves a restarted game follows first (0: none), replayed by
        the game itself in a batch, taken from the fork one by one.
      window: int32[G] the buffers from the prefix on where it may deviate (N: all after it).
      rate: float32[G] its deviation rate. explore: bool[G] it follows and deviates from the
        center (False for the evaluation game 0, where it is played, and for all before the
        first center).
      direction: float32[G, NUM_FEATURES + 1, 3] a directed game's weights (ES's features and a
        bias, per action; all zero: the game deviates at its rate instead).
      index: int32[G] the game's number.
      ready: bool[G] the game may move: played one by one, a restarted game waits until the
        fork reaches its prefix (those without one are ready at once).
      same: bool[G] every move of the game so far was the center's: once such a game is past its
        window it can only replay the center, so it ends there, done and unfinished (`duplicate`;
        only where the center made no restore, which a replay of its moves might not repeat).
      fork: `game.State` (no G axis, without the instance) the center's moves replayed once for
        the generation's restarts: played one by one, a restarted game starts from its state at
        the first arrival at the game's prefix instead of replaying the prefix itself (`fork`).
    """

    states: game.State
    keys: jax.Array
    record: dict
    prefix: jax.Array
    window: jax.Array
    rate: jax.Array
    explore: jax.Array
    direction: jax.Array
    index: jax.Array
    ready: jax.Array
    same: jax.Array
    fork: game.State


def start_search(key: jax.Array, instance: Instance, best_return: jax.Array, *, config: AgentConfig,
                 evaluate: jax.Array | bool = True) -> Games:
    """One generation's games before their first move (the expert; see the module docstring).
    Game 0 is the evaluation game while there is no best game or while `evaluate`; otherwise it
    explores like the others."""
    has_best = jnp.isfinite(best_return)
    lo, hi = deviation_range(instance.num_buffers, config)

    def one(key, index):
        k_prefix, k_restart, k_rate, k_moves, k_window, k_directed = jax.random.split(key, 6)
        explore = has_best & ((index > 0) | ~jnp.asarray(evaluate))
        restart = explore & (jax.random.uniform(k_restart) < config.restart_fraction)
        prefix = jnp.where(restart, jax.random.randint(k_prefix, (), 0, instance.num_buffers), 0)
        window, low = instance.num_buffers, lo
        if config.deviation_window:
            k_windowed, k_window = jax.random.split(k_window)
            n = jnp.maximum(instance.num_buffers, 1).astype(jnp.float32)
            windowed = jax.random.uniform(k_windowed) < config.deviation_window
            window = jnp.where(windowed, jnp.exp(jax.random.uniform(k_window, maxval=jnp.log(n))).astype(jnp.int32) + 1,
                               instance.num_buffers)
            low = jnp.minimum(hi, lo * n / window)
        rate = jnp.exp(jax.random.uniform(k_rate, minval=jnp.log(low), maxval=jnp.log(hi)))
        k_share, k_scale, k_direction = jax.random.split(k_directed, 3)
        directed = explore & (jax.random.uniform(k_share) < config.directed_share)
        scale = config.direction_scale * jnp.exp(jax.random.uniform(k_scale, minval=-jnp.log(3.0), maxval=jnp.log(3.0)))
        direction = jnp.where(directed, scale, 0.0) * jax.random.normal(k_direction, (NUM_FEATURES + 1, 3))
        record = dict(features=jnp.zeros((DEVIATIONS, NUM_DECISION_FEATURES), jnp.float32),
                      allowed=jnp.zeros((DEVIATIONS, 3), bool),
                      action=jnp.zeros(DEVIATIONS, jnp.int32), count=jnp.int32(0))
        return (game.init(instance, backup=True).replace(instance=None), k_moves, record, prefix,
                jnp.int32(window), rate, explore, direction, index, prefix == 0, jnp.bool_(True))

    fields = jax.vmap(one)(jax.random.split(key, config.games), jnp.arange(config.games))
    return Games(*fields, fork=game.init(instance, backup=True).replace(instance=None))


def fork(games: Games, instance: Instance, best: game.State, moves) -> Games:
    """At most `moves` more moves of the generation's fork: the center's moves replayed as one
    game; at its first arrival at a waiting game's prefix that game gets its state and is ready.
    A restarted game replays the center's moves up to its prefix (it deviates only from there),
    so it would reach the same state: N moves of replay for the generation instead of one
    prefix per game (on average half the program each). Where the fork cannot go on (the game
    ended, or the center's move is illegal: a restore took another path), the games still
    waiting get its state, from which they play as they would have."""
    n = instance.width.shape[0]
    best_actions = best.board.action
    limit = _move_limit(instance)
    begun = games.fork.moves

    def stuck(state):
        b = best_actions[jnp.minimum(state.board.cursor, n - 1)]
        return state.done | (state.moves >= limit) | ~game.legal_action_mask(state)[b]

    def advance(state, to):  # the center's moves until the cursor is at `to`, stuck, or out of moves
        def cond(state):
            return (state.board.cursor != to) & ~stuck(state) & (state.moves - begun < moves)

        def body(state):
            return game.step(state, best_actions[state.board.cursor].astype(jnp.int32))

        return jax.lax.while_loop(cond, body, state)

    def cond(carry):
        state, _, ready = carry
        return ~jnp.all(ready) & (state.moves - begun < moves)

    def body(carry):  # (one game a turn, in the order of their prefixes: the states are written
        # G times a generation, not looked at every move)
        state, states, ready = carry
        g = jnp.argmin(jnp.where(ready, n + 1, games.prefix))  # (the next waiting game's prefix)
        state = advance(state, games.prefix[g])
        here, arrived, ended_here = state.replace(instance=None), state.board.cursor == games.prefix[g], stuck(state)
        states = jax.lax.cond(
            ended_here,  # (every game still waiting starts here)
            lambda s: jax.tree.map(lambda a, f: jnp.where(~ready.reshape((-1,) + (1,) * f.ndim), f[None], a), s, here),
            lambda s: jax.tree.map(lambda a, f: a.at[g].set(jnp.where(arrived, f, a[g])), s, here), states)
        ready = ready | ended_here | ((jnp.arange(ready.shape[0]) == g) & arrived)
        return state, states, ready

    state, states, ready = jax.lax.while_loop(
        cond, body, (games.fork.replace(instance=instance), games.states, games.ready))
    return games.replace(states=states, ready=ready, fork=state.replace(instance=None))


def _pack_floor(instance: Instance, best: game.State) -> jax.Array:
    """The return below which a game cannot beat the center `best`: its return less what packing
    could add (`packer.dropping_gain_bound`) and the margins."""
    ret = best.board.ret
    return ret - dropping_gain_bound(instance) - PRUNE_MARGIN * jnp.abs(ret) - PRUNE_ABSOLUTE


def play_search(params, games: Games, instance: Instance, ctx: policy_lib.Context, best: game.State,
                temp: jax.Array, moves, *, config: AgentConfig, one_by_one: bool | None = None,
                prune: bool = True) -> Games:
    """At most `moves` more moves of each game of `start_search` (one compile for any count, so
    that a generation can be played in slices on a clock): the center's move, a deviation
    sampled from the network, a directed game's argmax, or (game 0) the network's argmax; each
    deviation is recorded.
    `one_by_one` plays the games one after the other (default: `games_one_by_one`); the games
    are the same either way. With `prune`, the games that cannot beat the center (`best`), nor
    be learned from, are cut short: an exploring game that has played only the center's moves
    ends (done, unfinished) once past its window (`duplicate`: it could only replay the center);
    in the deferred game, one that ends below the center's return is lost, unpacked or once its
    packings are (`game.step`'s `pack_floor`; the packer is most of a large game's last move)."""
    net = network(config)
    n = instance.width.shape[0]
    best_actions = best.board.action
    limit = _move_limit(instance)
    floor = _pack_floor(instance, best) if prune and instance.deferred else None

    def one(game_state, key, record, prefix, window, rate, explore, direction, index, ready, same):
        directed = jnp.any(direction != 0)
        pack_floor = None if floor is None else jnp.where(explore, floor, -jnp.inf)  # (exploring games only)

        def cond(carry):
            state = carry[0]
            return ready & ~state.done & (state.moves < limit) & (state.moves - game_state.moves < moves)

        def body(carry):
            state, record, same = carry
            k_dev, k_act = jax.random.split(jax.random.fold_in(key, state.moves))
            phi = decision_features(state, ctx)
            # (a directed game leans on greedy's scores, ES's mean, not on what the network
            # learned: played alone, it skips the network)
            logits = jax.lax.cond(directed, lambda: policy_lib.greedy_scores(phi),
                                  lambda: net.apply(params, phi[None])[0][0])
            legal = game.legal_action_mask(state)
            i = state.board.cursor
            b = best_actions[jnp.minimum(i, n - 1)]
            on_path = explore & legal[b]
            outside = (i < prefix) | (i >= prefix + window)
            keep = on_path & (outside | (jax.random.uniform(k_dev) >= rate))
            other = legal & ~((jnp.arange(3) == b) & on_path & (jnp.sum(legal) > 1))
            sampled = jax.random.categorical(k_act, _deviation_logits(logits, other, temp))
            greedy = jnp.argmax(jnp.where(legal, logits, -jnp.inf))
            action = jnp.where(keep, b, jnp.where((index == 0) & ~explore, greedy, sampled))
            # (a directed game: ES's member around the center, greedy's scores its mean)
            leaning = logits + jnp.append(phi[:NUM_FEATURES], 1.0) @ direction + CENTER_BONUS * (
                (jnp.arange(3) == b) & on_path)
            led = jnp.where(on_path & outside, b, jnp.argmax(jnp.where(legal, leaning, -jnp.inf)))
            action = jnp.where(directed, led, action)
            deviated = on_path & (action != b) & (jnp.sum(other) > 1) & (record["count"] < DEVIATIONS)
            at = jnp.minimum(record["count"], DEVIATIONS - 1)
            write = lambda table, value: jnp.where(deviated, table.at[at].set(value), table)  # noqa: E731
            record = dict(features=write(record["features"], phi),
                          allowed=write(record["allowed"], other),
                          action=write(record["action"], action.astype(jnp.int32)),
                          count=record["count"] + deviated)
            same = same & on_path & (action == b)
            state = game.step(state, action.astype(jnp.int32), pack_floor)
            # (a copy of the center ends there: done, so that in a batch its moves cost nothing more)
            copy = prune & explore & same & ~state.done & (state.board.cursor >= prefix + window)
            return state.replace(done=state.done | copy), record, same

        state, record, same = jax.lax.while_loop(cond, body, (game_state.replace(instance=instance), record, same))
        return state.replace(instance=None), record, same

    if one_by_one is None:
        one_by_one = games_one_by_one(n)
    if one_by_one:  # each game's loop unbatched: no move selects over every game's state; the
        # restarted games start from the fork instead of replaying their prefixes
        games = fork(games, instance, best, moves)
    args = (games.states, games.keys, games.record, games.prefix, games.window, games.rate, games.explore,
            games.direction, games.index, games.ready | (not one_by_one),
            games.same & (best.restores == 0))  # (replaying a center that restored may take another path)
    if one_by_one:
        states, record, same = jax.lax.map(lambda a: one(*a), args)
    else:  # (a batch runs until its last game ends: starting some later would not shorten it)
        with restores_together():  # (the games share the center's prefix: they restore together)
            states, record, same = jax.vmap(one)(*args)
    return games.replace(states=states, record=record, same=same)


#: Padded buffers above which, on a CPU, a generation plays its games one after the other.
ONE_BY_ONE_ABOVE = 1024


def games_one_by_one(buffers: int) -> bool:
    """Whether a generation's games on a program of `buffers` (padded) buffers play one after
    the other (`lax.map`) rather than as one batch (`vmap`): on a CPU above ONE_BY_ONE_ABOVE.
    A batched loop runs until its last game ends, and each of its moves selects every game's
    state (whose size grows with the program) between the old and the new; a game alone updates
    its state in place. An accelerator runs the batch's games in parallel: it keeps `vmap`."""
    return jax.default_backend() == "cpu" and buffers > ONE_BY_ONE_ABOVE


def duplicate(games: Games, instance: Instance) -> jax.Array:
    """bool[G]: the games stopped because they could only replay the center (`Games.same`): done
    before their last buffer, not lost; their return is the center's."""
    states = games.states
    return games.same & states.done & ~states.lost & (states.board.cursor < instance.num_buffers)


def ended(games: Games, instance: Instance) -> jax.Array:
    """bool[G]: the games that will make no more move."""
    return games.states.done | (games.states.moves >= _move_limit(instance))
