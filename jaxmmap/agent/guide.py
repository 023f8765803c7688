"""The generalist's guide: which uses the network wants in fast memory, beyond what the game fits.

The game places by its own fixed rules, and a use it cannot fit there is dropped, so a game's
decisions say little of where a better placement would put things: the heuristic's own decisions,
as the game plays them, lose 10-20% of their uses and place below the placement of no decisions
on most programs, while the placer, placing the same decisions, keeps the heuristic's return
(docs/agent.md, What is weak). So the network also learns the teacher's *intent*: at every state of a game, the
heuristic's own decision for the buffer decided there (Copy, NoCopy or Drop, the plan the placer
made, `heuristic.heuristic`), learned over all three moves, legal in the game or not
(`intent_rows`), by an intent network of its own (`fit`: the policy network and its games stay
as they were; trained beside it, sharing its layers, the intents pulled its games down:
docs/decisions.md, "One network for policy and intent"). The network's greedy game then records, per
buffer, the intent network's probabilities of the three moves at the state that decided it
(`play`): the guide. The placer reads it
(`placer.place(guide=...)`): the placement of no decisions with the uses the guide confidently
disagrees with flipped is one more start for its local moves.

    rows = intent_rows(problem, rules, played, intents)      # training (`fit`)
    state, guide = play(params, intent, ctx, state, guide, moves, finish, config=config)   # the solver
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.agent import generalist, selfplay
from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import game
from jaxmmap.env import observation as obs_lib
from jaxmmap.env.instance import make_instance
from jaxmmap.env.observation import decision_features
from jaxmmap.env.rollout import drop_first_policy

__all__ = ["fit", "intent_rows", "no_guide", "own_intent_rows", "play"]


def intent_rows(problem: Problem, rules: Rules, played: np.ndarray, intents: np.ndarray) -> dict[str, np.ndarray]:
    """The intent rows of the game that plays `played` (an action per buffer, a won game's: the
    teacher's, or the network's own for a round), one per move that decides a buffer: its decision
    features ("intent_phi", float32[R, F]) and `intents[buffer]` ("intent", int32[R]: the
    teacher's own decision for it, e.g. the heuristic's plan, whether the game could play it or
    not)."""
    instance = make_instance(problem, rules)  # (as `teacher_rows` and the solver: the same features)
    phi, _, _, _, buffer, real = (np.asarray(x) for x in generalist.replayed(
        instance, selfplay.padded_actions(instance, played)))
    return {"intent_phi": phi[real], "intent": np.asarray(intents, np.int32)[buffer[real]]}


def own_intent_rows(params, problem: Problem, rules: Rules, intents: np.ndarray,
                    config: generalist.GeneralistConfig) -> dict[str, np.ndarray]:
    """The intent rows of the network's own greedy game (a round after the imitation, beside
    `generalist.own_rows`): the states it visits, labelled by the teacher's `intents`."""
    own = generalist._policy_game(make_instance(problem, rules), params, config)
    return intent_rows(problem, rules, np.asarray(own)[:problem.num_buffers], intents)


def no_guide(num_buffers: int) -> jax.Array:
    """float32[N, 3] of NaN: no opinion on any buffer (`play` fills in the buffers it decides)."""
    return jnp.full((num_buffers, 3), jnp.nan, jnp.float32)


def fit(rows: dict[str, np.ndarray], config: generalist.GeneralistConfig, *, workdir: str | None = None,
        log=print) -> dict:
    """Trains the intent network (a `generalist.network` of the same config, its own parameters)
    on intent rows (`intent_rows`, several programs' concatenated): `generalist.fit`, with every
    move legal, so that its cross-entropy is over all three moves."""
    data = {"phi": rows["intent_phi"], "legal": np.ones((len(rows["intent"]), 3), bool), "action": rows["intent"]}
    return generalist.fit(data, config, workdir=workdir, log=log)


@functools.partial(jax.jit, static_argnames=("config",))
def play(params, intent, ctx: obs_lib.Context, state: game.State, guide: jax.Array, moves, finish,
         *, config: generalist.GeneralistConfig) -> tuple[game.State, jax.Array]:
    """At most `moves` (int32[]) more moves of the network's greedy game (`generalist.policy`,
    temperature 0: the same moves), one game without a batch axis; with `finish` (bool[]) the moves
    of `drop_first_policy` instead (a game the budget cuts), one compile for both. Each move of the
    network also writes the intent network's probabilities (`intent`, its parameters) of Copy,
    NoCopy and Drop for the buffer it decides into that row of `guide` (float32[N, 3], the padded
    buffers; `no_guide` at the start): a buffer decided again after a restore keeps the last."""
    net, played = generalist.network(config), generalist.with_correction(params, config.correction)

    def body(carry):
        state, guide, done = carry
        phi = decision_features(state, ctx)[None]
        logits = net.apply(played, phi)[0][0]
        legal = game.legal_action_mask(state)
        mine = jnp.argmax(jnp.where(legal, logits, -jnp.inf)).astype(jnp.int32)
        action = jnp.where(finish, drop_first_policy(None, state), mine)
        i = jnp.minimum(state.board.cursor, guide.shape[0] - 1)
        wanted = jax.nn.softmax(net.apply(intent, phi)[0][0])
        guide = guide.at[i].set(jnp.where(finish, guide[i], wanted))
        return game.step(state, action), guide, done + 1

    state, guide, _ = jax.lax.while_loop(lambda c: ~c[0].done & (c[2] < moves), body,
                                         (state, guide, jnp.int32(0)))
    return state, guide
