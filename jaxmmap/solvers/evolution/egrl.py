"""EGRL (Khadka et al. 2021), the agent of the MARL paper, adapted to the MMapGame.

A mixed population of *neural policies* (the scorer of `jaxmmap.solvers.evolution.policy`, argmax
actions) and *Boltzmann chromosomes* (per-buffer action prior logits float32[N, 3] and one
temperature per chromosome; actions are sampled from softmax(logits[buffer] / temperature) over
the legal ones) evolves by elitism, tournament selection, single-point crossover and Gaussian
mutation, while a policy-gradient learner (discrete soft actor-critic) trains on a replay buffer
shared by every game played (population and learner) and is periodically copied into the
population (migration). The best game ever played is kept (`Anytime`).

One generation is three jitted functions (`make_generation`): `ask` sets up all games of the
generation (neural, Boltzmann and the learner's sampled games), `play` plays them as one
`vmap`ped batch of recorded rollouts (Drop-backup on; `recorded`) for a slice of moves, called
with the clock looked at between slices (a generation of a large program takes minutes), and
`tell` puts a random subset of their transitions into the replay, takes a fixed number of the
learner's gradient steps and breeds the next generation. The host loop converts the best game
to a `Solution`.

Where this departs from the MARL/EGRL papers, and why:
* No graph neural network: the game is sequential (one buffer per move), and the policy scores
  the three actions from the features of the current decision (`observation.features`), the same
  network the ES baseline evolves. Features are computed inside the rollout, so nothing leaves
  the accelerator.
* Boltzmann chromosomes have one prior per *buffer* (the game's decision unit, the paper's
  "node") and one temperature per chromosome (CERL keeps one per node).
* Mixed crossover (a neural elite with a Boltzmann parent, the paper's "use a = pi(s) to encode
  the prior"): the actions the neural elite took in its own game this generation, per buffer,
  are encoded as one-hot prior logits (times `encode_logit`) and crossed at a single point with
  the Boltzmann parent. Slots keep their kind (fixed shapes for `jit`), so only Boltzmann
  children are made this way; neural children come from neural parents.
* Learner: discrete SAC with twin critics, target networks (Polyak averaging) and a fixed
  entropy weight `alpha`. The paper's Eq. (3) action noise and Eq. (4) deterministic gradient
  belong to a continuous relaxation of the actions; with three discrete actions the expectation
  over actions is exact, so the discrete-SAC losses are used instead. Illegal actions are masked
  in the actor and in the critic's targets. The actor is only trained after `warmup` critic
  updates (a random critic would otherwise undo the greedy start). Rewards are divided by the
  instance's reward scale (`observation.Context.scale`).
* Updates: `updates` gradient steps per generation (not one per environment step, as in the
  paper's Algorithm 1, which a CPU budget of seconds cannot afford); the replay receives
  `record` random transitions of each game, not all of them, so that it holds many generations.
* Seeding (EGRL starts from random networks and priors): the first neural member and the
  learner's actor are the greedy policy, the other members noisy copies; the Boltzmann
  chromosomes play at random in the first generation, then restart from the greedy game's
  actions (one-hot logits) with their random temperatures, or start from the heuristic's plan
  (`from_heuristic`). They are a sampled local search around that game, where most of the
  improvements come from.
* Migration: every `migrate_every` generations the learner's actor takes the last neural slot
  of the next generation, one of the children that replace the weakest members (elites are
  never overwritten); it is evaluated like every member in the next generation.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import game, observation
from jaxmmap.env.instance import Instance, make_instance
from jaxmmap.env.rollout import nth_game, to_solution, won_returns
from jaxmmap.solvers.base import Anytime, CountedJit, Result, finish_furthest, in_slices, moves_left, packing_s, strong_types
from jaxmmap.solvers.evolution import breeding, policy, sac
from jaxmmap.solvers.evolution.recorded import (
    BOLTZMANN,
    NEURAL_ARGMAX,
    NEURAL_SAMPLE,
    Games,
    empty_record,
    recorded_rollout,
)
from jaxmmap.solvers.heuristic import plan_start
from jaxmmap.solvers.spec import FROM_HEURISTIC, MAX_GENERATIONS, PADDING, Option, declare


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration of a generation (hashable: one compile per Config and shape).

    Attributes:
      neural, boltzmann: population slots of each kind.
      learner_games: games the learner's actor plays per generation (sampled actions).
      elite_frac: share of each kind kept unchanged (at least one).
      tournament: tournament size of the selection.
      crossover_prob, mutation_prob: per child.
      mix_prob: chance that a Boltzmann child's crossover partner is a neural elite.
      neural_sigma, mutation_frac: Gaussian mutation of a neural child: N(0, neural_sigma) on a
        random `mutation_frac` of its weights.
      boltzmann_sigma: the same on a `mutation_frac` of a chromosome's buffers' logits; the log
        temperature gets N(0, 0.2).
      encode_logit: prior logit of an encoded action (greedy seeding, mixed crossover).
      temperature: (low, high) range of the chromosomes' initial temperatures (log-uniform).
      hidden: MLP width of the neural policies (0: linear).
      critic_hidden: width of the critics' two hidden layers.
      record: transitions of each game written to the replay.
      capacity: replay size.
      updates, batch: learner gradient steps per generation and their minibatch size.
      gamma, alpha, tau: discount, entropy weight, target-network averaging.
      actor_lr, critic_lr: Adam learning rates.
      warmup: critic updates before the actor is trained.
      migrate_every: generations between migrations of the learner into the population.
    """

    neural: int = 16
    boltzmann: int = 32
    learner_games: int = 4
    elite_frac: float = 0.125
    tournament: int = 3
    crossover_prob: float = 0.5
    mutation_prob: float = 0.9
    mix_prob: float = 0.25
    neural_sigma: float = 0.2
    mutation_frac: float = 0.1
    boltzmann_sigma: float = 1.0
    encode_logit: float = 2.0
    temperature: tuple[float, float] = (0.1, 1.0)
    hidden: int = 0
    critic_hidden: int = 64
    record: int = 64
    capacity: int = 32768
    updates: int = 32
    batch: int = 256
    gamma: float = 0.99
    alpha: float = 0.05
    tau: float = 0.01
    actor_lr: float = 1e-3
    critic_lr: float = 1e-3
    warmup: int = 256
    migrate_every: int = 2

    def __post_init__(self):
        if self.neural < 2 or self.boltzmann < 2 or self.learner_games < 0:
            raise ValueError("EGRL needs at least 2 neural and 2 Boltzmann slots "
                             f"(got {self.neural}, {self.boltzmann}) and learner_games >= 0")
        if self.games * self.record > self.capacity:  # one generation's writes must not collide
            raise ValueError(f"the replay ({self.capacity}) must hold one generation's "
                             f"transitions ({self.games} games x {self.record})")
        if not self.temperature[0] <= self.temperature[1]:
            raise ValueError(f"temperature is a range (low, high), got {self.temperature}")

    @property
    def games(self) -> int:
        return self.neural + self.boltzmann + self.learner_games


@struct.dataclass
class Population:
    """The evolving population (Pn neural slots, Pb Boltzmann slots, N buffers, D = policy
    parameters).

    Attributes:
      neural: float32[Pn, D] flat policy parameters.
      logits: float32[Pb, N, 3] Boltzmann priors. log_temp: float32[Pb] log temperatures.
    """

    neural: jax.Array
    logits: jax.Array
    log_temp: jax.Array


@struct.dataclass
class EgrlState:
    """Everything a generation carries to the next: population, learner, replay, generation
    counter int32[]."""

    population: Population
    learner: sac.SacLearner
    replay: sac.Transitions
    generation: jax.Array


# ---------------------------------------------------------------------------- generation


def _ravel(params) -> jax.Array:
    """The policy's parameters as one flat vector (a neural chromosome)."""
    return jax.flatten_util.ravel_pytree(params)[0]


def _init_state(cfg: Config, key: jax.Array, instance: Instance, actor_tx, critic_tx,
                plan: jax.Array | None = None) -> EgrlState:
    """Generation 0: the neural population around the greedy policy, uniform Boltzmann
    chromosomes (or, given a `plan`, int32[N], chromosomes that encode it), a fresh SAC learner
    whose actor is the greedy policy, an empty replay."""
    pn, pb = cfg.neural, cfg.boltzmann
    n = instance.width.shape[0]
    ks = jax.random.split(key, 6)
    greedy = policy.init_params(ks[0], hidden=cfg.hidden)
    flat = _ravel(greedy)
    noise = cfg.neural_sigma * jax.random.normal(ks[1], (pn, flat.shape[0]))
    neural = flat[None, :] + noise.at[0].set(0.0)
    # Until the greedy game has been played (generation 0), the chromosomes are uniform:
    # their first games are random play; then they are seeded with the greedy game.
    logits = jnp.zeros((pb, n, 3), jnp.float32) if plan is None else jnp.broadcast_to(breeding.encode(cfg, plan), (pb, n, 3))
    low, high = cfg.temperature
    log_temp = jax.random.uniform(ks[3], (pb,), minval=jnp.log(low), maxval=jnp.log(high))
    f = observation.NUM_FEATURES
    critics = tuple(sac.mlp_init(k, (f, cfg.critic_hidden, cfg.critic_hidden, 3))
                    for k in jax.random.split(ks[4], 2))
    learner = sac.SacLearner(actor=greedy, critics=critics, targets=critics,
                      actor_opt=actor_tx.init(greedy), critic_opt=critic_tx.init(critics),
                      updates=jnp.int32(0))
    c = cfg.capacity
    replay = sac.Transitions(phi=jnp.zeros((c, f)), next_phi=jnp.zeros((c, f)),
                    action=jnp.zeros(c, jnp.int32), reward=jnp.zeros(c),
                    done=jnp.zeros(c), size=jnp.int32(0), ptr=jnp.int32(0))
    population = Population(neural=neural, logits=logits, log_temp=log_temp)
    return strong_types(EgrlState(population=population, learner=learner, replay=replay,
                               generation=jnp.int32(0)))


def _stats(returns: jax.Array, moves: jax.Array, best: jax.Array, pn: int, pb: int, losses: dict) -> dict:
    """A generation's figures (float32[] each)."""
    stats = {"best": returns[best], "best_neural": jnp.max(returns[:pn]),
             "best_boltzmann": jnp.max(returns[pn:pn + pb]),
             "best_learner": jnp.max(returns[pn + pb:], initial=-jnp.inf),
             "moves_neural": jnp.max(moves[:pn]),
             "moves_boltzmann": jnp.max(moves[pn:pn + pb]),
             "moves_learner": jnp.max(moves[pn + pb:], initial=0),
             "critic_loss": losses["critic_loss"], "actor_loss": losses["actor_loss"]}
    return stats


def _learn(cfg: Config, actor_tx, critic_tx, learner: sac.SacLearner, replay: sac.Transitions, key: jax.Array):
    """The learner: `updates` SAC steps on minibatches of the replay; (learner, mean losses)."""
    def one(learner, k):
        i = jax.random.randint(k, (cfg.batch,), 0, jnp.maximum(replay.size, 1))
        batch = (replay.phi[i], replay.next_phi[i], replay.action[i], replay.reward[i], replay.done[i])
        return sac.step(actor_tx, critic_tx, learner, batch, alpha=cfg.alpha, gamma=cfg.gamma,
                        tau=cfg.tau, warmup=cfg.warmup)

    learner, losses = jax.lax.scan(one, learner, jax.random.split(key, cfg.updates))
    return learner, {k: jnp.mean(v) if cfg.updates else jnp.float32(0) for k, v in losses.items()}


class Generation(NamedTuple):
    """One configuration's pure functions (not jitted: `egrl` jits them).

    init(key, instance) -> EgrlState; ask(search, key, instance) -> Games (the generation's
    games, not played yet); play(games, moves, instance) -> Games (at most `moves` more moves of each);
    tell(search, games, key, instance) -> (search, best_state, stats) (once every game ended; the
    same key as `ask`), with `best_state` this generation's best game and `stats` a
    dict of float32[] figures (best, best_neural, best_boltzmann, best_learner, critic_loss,
    actor_loss). `generation(search, key, instance)` is the three in one.
    """

    init: Callable
    ask: Callable
    play: Callable
    tell: Callable
    generation: Callable


@functools.lru_cache(maxsize=16)
def make_generation(cfg: Config, seeded: bool = False) -> Generation:  # (seeded: by `init`'s plan)
    template = policy.init_params(jax.random.key(0), hidden=cfg.hidden)
    _, unravel = jax.flatten_util.ravel_pytree(template)
    actor_tx = optax.adam(cfg.actor_lr)
    critic_tx = optax.adam(cfg.critic_lr)
    pn, pb, pl = cfg.neural, cfg.boltzmann, cfg.learner_games

    def init(key: jax.Array, instance: Instance, plan: jax.Array | None = None) -> EgrlState:
        return _init_state(cfg, key, instance, actor_tx, critic_tx, plan if seeded else None)

    def ask(search: EgrlState, key: jax.Array, instance: Instance) -> Games:
        # Every game of the generation, one batch: neural (argmax), Boltzmann, learner; each
        # records `record` random moves among the first N.
        n = instance.width.shape[0]
        pop, learner = search.population, search.learner
        k_play, k_rec, *_ = jax.random.split(key, 5)
        kinds = jnp.concatenate([jnp.full(pn, NEURAL_ARGMAX), jnp.full(pb, BOLTZMANN),
                                 jnp.full(pl, NEURAL_SAMPLE)]).astype(jnp.int32)
        actor_flat = _ravel(learner.actor)
        flat = jnp.concatenate([pop.neural, jnp.zeros((pb, pop.neural.shape[1])),
                                jnp.broadcast_to(actor_flat, (pl, actor_flat.shape[0]))])
        many = lambda x: jnp.broadcast_to(x, (cfg.games, *jnp.shape(x)))  # noqa: E731
        return Games(kinds=kinds, flat=flat,
                     logits=jnp.concatenate([jnp.zeros((pn, n, 3)), pop.logits, jnp.zeros((pl, n, 3))]),
                     log_temp=jnp.concatenate([jnp.zeros(pn), pop.log_temp, jnp.zeros(pl)]),
                     positions=(jax.random.uniform(k_rec, (cfg.games, cfg.record)) * instance.num_buffers).astype(jnp.int32),
                     states=jax.tree.map(many, game.init(instance, backup=True).replace(instance=None)),
                     keys=jax.random.split(k_play, cfg.games),
                     record=jax.tree.map(many, empty_record(cfg.record)))

    def play(games: Games, moves, instance: Instance) -> Games:
        ctx = observation.context(instance)

        def one(state, key, record, kind, w, lg, lt, pos):
            carry = (state.replace(instance=instance), key, record)
            state, key, record = recorded_rollout(instance, ctx, kind, unravel(w), lg, lt, pos, carry, moves)
            return state.replace(instance=None), key, record

        states, keys, record = jax.vmap(one)(games.states, games.keys, games.record, games.kinds, games.flat,
                                             games.logits, games.log_temp, games.positions)
        return games.replace(states=states, keys=keys, record=record)

    def tell(search: EgrlState, games: Games, key: jax.Array, instance: Instance):
        pop, learner = search.population, search.learner
        *_, k_learn, k_nb, k_bb = jax.random.split(key, 5)
        states = games.states
        returns = won_returns(states)
        phis, nexts, actions, rewards, dones, recorded = games.record

        # The shared replay (a ring buffer) receives the recorded transitions.
        replay = sac.add_transitions(search.replay, recorded, (phis, nexts, actions, rewards, dones), cfg.capacity)

        learner, losses = _learn(cfg, actor_tx, critic_tx, learner, replay, k_learn)

        # Evolution, each kind in its slots; then migration of the learner's actor.
        fit_n, fit_b = returns[:pn], returns[pn:pn + pb]
        neural = breeding.breed_neural(cfg, k_nb, pop.neural, fit_n)
        encoded = breeding.encode(cfg, states.board.action[:pn])
        logits_b, temps_b = breeding.breed_boltzmann(cfg, k_bb, pop.logits, pop.log_temp, fit_b, encoded,
                                             fit_n, instance.num_buffers)
        first = (search.generation == 0) & (not seeded)  # seed the chromosomes with the greedy game (slot 0)
        logits_b = jnp.where(first, jnp.broadcast_to(encoded[0], logits_b.shape), logits_b)
        temps_b = jnp.where(first, pop.log_temp, temps_b)
        migrate = (search.generation + 1) % cfg.migrate_every == 0
        neural = neural.at[-1].set(jnp.where(migrate, _ravel(learner.actor), neural[-1]))  # (elites come first)

        best = jnp.argmax(returns)
        stats = _stats(returns, states.moves, best, pn, pb, losses)
        search = EgrlState(population=Population(neural=neural, logits=logits_b, log_temp=temps_b),
                           learner=learner, replay=replay, generation=search.generation + 1)
        best_state = jax.tree.map(lambda x: x[best], states).replace(instance=instance)
        return strong_types(search), best_state, stats

    def generation(search: EgrlState, key: jax.Array, instance: Instance):
        return tell(search, play(ask(search, key, instance), jnp.int32(2 ** 31 - 1), instance), key, instance)

    return Generation(init, ask, play, tell, generation)


@functools.lru_cache(maxsize=16)
def _jitted(cfg: Config, seeded: bool = False) -> Generation:
    made = make_generation(cfg, seeded)
    return made._replace(init=jax.jit(made.init), ask=CountedJit(made.ask), play=CountedJit(made.play),
                         tell=CountedJit(made.tell))


def egrl(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
         from_heuristic: bool | None = None, max_generations: int | None = None,
         padding: tuple[int, int, int] | None = None, **options) -> Result:
    """EGRL under a wall-clock budget. A generation's games are played in slices of about a
    second with the clock looked at between them (`base.in_slices`); a generation the budget cuts
    does not count, and if none has finished by then, its furthest game is ended Drop-first, so
    the run still ends on time with a valid solution.

    Args:
      from_heuristic: start from the heuristic's plan (`heuristic.plan_start`, `PLAN_SHARE` of
        the budget): its game is the first solution, and every Boltzmann chromosome starts as
        that plan (one-hot logits, `encode_logit`), so their sampled games search around it.
        None (default): in the deferred game only (as `es`). Unlike `es`, EGRL always replays the
        plan's game apart first (`plan_start` without `games`): its first generation compiles
        about twice as long as ES's, and a first batch that cannot end within a short budget
        then leaves the plan's game standing and the rest of the budget to the placer
        (docs/solvers.md, `egrl`).
      max_generations: stop after this many generations even if time is left (runs of one
        seed are then identical if they fit the budget).
      padding: (buffers, steps, tables) to pad the instance to (default: `instance.bucket`);
        instances of one padding share one compile.
      **options: fields of `Config` (population sizes, learner and evolution settings).

    info: generations, games, traces (compiles of ask, play and tell in this call),
    improvements_by (which kind played each improving game), learner_updates, and figures of
    the last generation: best return of each kind (best_neural, best_boltzmann, best_learner),
    most moves of a game of each kind (moves_*: more than N means Drop-backup restores), the
    learner's mean critic and actor losses.
    """
    clock = Anytime(budget_s)
    cfg = _config(options)
    n, t, k = padding if padding is not None else (None, None, None)
    instance = make_instance(problem, rules, num_buffers=n, num_steps=t, num_tables=k)
    # (the plan's game apart: its first generation compiles far longer; `ended` where none fits)
    from_heuristic, plan, _, ended = plan_start(clock, problem, rules, instance.width.shape[0], "egrl",
                                                from_heuristic)
    if ended is not None:  # (no time left for a generation: the plan's game stands)
        return ended
    made = _jitted(cfg, from_heuristic)
    compiles = lambda: made.ask.traces + made.play.traces + made.tell.traces  # noqa: E731
    traces = compiles()
    key_init, key = jax.random.split(jax.random.key(seed))
    search = made.init(key_init, instance, plan)
    sources = collections.Counter()
    generations, stats, best_seen = 0, {}, -float("inf")
    while max_generations is None or generations < max_generations:
        key, sub = jax.random.split(key)
        tail = (lambda g, rate, first: moves_left(g.states, rate, first, compile_again=True)) if clock.best is None \
            else None  # (before a first solution, time to end the furthest game Drop-first)
        games, whole = in_slices(clock, lambda games, moves: made.play(games, moves, instance),
                                 made.ask(search, sub, instance), lambda games: games.states.done, tail=tail,
                                 end=lambda games, rate, within: packing_s(instance, rate, cfg.games, games.states,
                                                                           within))
        if not whole:  # the budget ended inside the generation: it does not count
            if clock.best is None:
                states = games.states.replace(instance=instance)
                clock.offer(to_solution(problem, nth_game(finish_furthest(states, games.keys), 0), rules,
                                        solver="egrl"))
            break
        if clock.best is None or clock.out_of_time():  # (before `tell`: its first call compiles the learner)
            returns = np.asarray(won_returns(games.states))
            states = games.states.replace(instance=instance)
            clock.offer(to_solution(problem, nth_game(states, int(np.argmax(returns))), rules, solver="egrl"))
            if clock.out_of_time():
                break
        search, state, stats = made.tell(search, games, sub, instance)
        generations += 1
        if float(stats["best"]) > best_seen:
            best_seen = float(stats["best"])
            if clock.offer(to_solution(problem, state, rules, solver="egrl")):
                # which kind of game found the improvement
                sources[max(("neural", "boltzmann", "learner"), key=lambda s: float(stats[f"best_{s}"]))] += 1
        if clock.out_of_time():
            break
    figures = {k: float(v) for k, v in stats.items()}
    return clock.result(generations=generations, games=generations * cfg.games, traces=compiles() - traces,
                        improvements_by=dict(sources), learner_updates=int(search.learner.updates),
                        from_heuristic=from_heuristic, **figures)


def _config(options: dict) -> Config:
    """`Config` of the options (from the command line: lists as tuples)."""
    return Config(**{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})


def _check_config(options: dict) -> None:
    """`Config`'s own checks (slots, the replay's size, the temperatures' order) on its fields among `options`."""
    _config({k: v for k, v in options.items() if k in _FIELDS})


_FIELDS = frozenset(f.name for f in dataclasses.fields(Config))
_SHARE, _RATE = "[0, 1]", "(0, inf)"
declare(egrl, {
    "from_heuristic": FROM_HEURISTIC,
    "max_generations": MAX_GENERATIONS,
    "padding": PADDING,
    # `Config`'s fields
    "neural": Option(int, "[2, inf)", "population slots of neural policies"),
    "boltzmann": Option(int, "[2, inf)", "population slots of Boltzmann chromosomes"),
    "learner_games": Option(int, "[0, inf)", "games the learner's actor plays per generation"),
    "elite_frac": Option(float, "(0, 1]", "share of each kind kept unchanged (one at least)"),
    "tournament": Option(int, "[1, inf)", "tournament size of the selection"),
    "crossover_prob": Option(float, _SHARE, "chance of a crossover, per child"),
    "mutation_prob": Option(float, _SHARE, "chance of a mutation, per child"),
    "mix_prob": Option(float, _SHARE, "chance that a Boltzmann child's crossover partner is a neural elite"),
    "neural_sigma": Option(float, _RATE, "standard deviation of a neural child's mutation"),
    "mutation_frac": Option(float, _SHARE, "share of the weights (or of the buffers' logits) a mutation changes"),
    "boltzmann_sigma": Option(float, _RATE, "standard deviation of a chromosome's mutation"),
    "encode_logit": Option(float, "[0, inf)", "prior logit of an encoded action"),
    "temperature": Option(float, _RATE, "(low, high) of the chromosomes' initial temperatures", length=2),
    "hidden": Option(int, "[0, inf)", "MLP width of the neural policies (0: linear)"),
    "critic_hidden": Option(int, "[1, inf)", "width of the critics' two hidden layers"),
    "record": Option(int, "[1, inf)", "transitions of each game written to the replay"),
    "capacity": Option(int, "[1, inf)", "replay size (one generation's transitions at least)"),
    "updates": Option(int, "[0, inf)", "learner gradient steps per generation"),
    "batch": Option(int, "[1, inf)", "the learner's minibatch size"),
    "gamma": Option(float, _SHARE, "discount"),
    "alpha": Option(float, "[0, inf)", "entropy weight"),
    "tau": Option(float, _SHARE, "target-network averaging"),
    "actor_lr": Option(float, _RATE, "Adam learning rate of the actor"),
    "critic_lr": Option(float, _RATE, "Adam learning rate of the critics"),
    "warmup": Option(int, "[0, inf)", "critic updates before the actor is trained"),
    "migrate_every": Option(int, "[1, inf)", "generations between migrations of the learner into the population"),
}, check=_check_config)
