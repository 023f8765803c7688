"""The agent's configuration: one frozen (hashable) dataclass, so that it can be a static argument
of the jitted training chunk and every run with the same configuration and padded shapes shares
one compilation.

`AgentConfig()` is the quick start (`configs/quickstart.py`): the expert mode
(`jaxmmap.agent.expert`), the best mode on a 2-core CPU, with 64 games (docs/decisions.md, The agent).
`AgentConfig.paper()` is Table 6 of the paper in the `muzero` mode (`configs/paper.py`). Where
the `muzero` defaults depart from Table 6 it is for the CPU (docs/decisions.md, "The `muzero`
mode's Table 6 settings on a CPU"): Reanalyse off (it slowed the learner more than it helped),
60 TD steps instead of 10, a 5x larger learning rate, the feature network instead of the grid
ResNet, and a temperature decay at half of the run.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

from jaxmmap.agent.networks import NetworkConfig

Mode = Literal["expert", "muzero", "alphazero", "mcts", "no_search"]
MODES = ("expert", "muzero", "alphazero", "mcts", "no_search")
# Fields that count something (>= 1), and plain numbers (finite): checked before anything else.
_COUNTS = ("games", "num_simulations", "replay_size", "batch_size", "unroll_steps", "td_steps",
           "target_update_interval", "moves_per_update", "min_replay_moves", "updates_per_chunk",
           "elites", "learner_steps", "generations_per_chunk")
_FRACTIONS = ("dirichlet_fraction", "dirichlet_alpha", "init_temperature", "final_temperature",
              "temperature_decay", "discount", "learning_rate", "weight_decay", "reanalyse_fraction",
              "demonstration_fraction", "value_loss_weight", "entropy_weight", "restart_fraction",
              "deviation_min", "deviation_max", "deviation_window", "directed_share", "direction_scale",
              "restart_stall")


@dataclasses.dataclass(frozen=True)
class AgentConfig:
    """Everything that shapes the training computation.

    Acting:
      mode: "expert" (the default: expert iteration, a search over the true game around the
        best game, most games directed around it by greedy's scores and the others' deviations
        chosen by the network, the network learning from the elite games;
        `jaxmmap.agent.expert`), "muzero" (learned dynamics in the search, the
        paper), "alphazero" (the true game in the search, learned priors and values), "mcts"
        (the true game, flat priors, no learning: the paper's first ablation), "no_search" (the
        network's policy acts alone and learns by policy gradient: the paper's second ablation).
      games: games played in parallel (vmap; a multiple of the number of devices).
      num_simulations: simulations per search. gumbel: Gumbel MuZero instead of PUCT + noise.
      dirichlet_fraction, dirichlet_alpha: root noise (PUCT search only).
      init_temperature, final_temperature, temperature_decay: the action temperature follows
        the run's progress p (the larger of the budget's and the iterations' shares, so short
        and long runs both anneal): `init` until p = `temperature_decay`, then `final` (Table
        6's piecewise constant schedule: 400,000 of 1,000,000 steps is 0.4); the expert mode
        goes geometrically from `init` to `final` instead.
      restart_fraction, deviation_min, deviation_max, elites, learner_steps,
        generations_per_chunk: the expert mode (`jaxmmap.agent.expert`): the share of games
        that restart from a prefix of the best game, the range of the per-game deviation rate
        (log-uniform), the games of a generation the network learns from, the learner steps
        per generation and the generations in one jitted chunk.
      deviation_window: the share of the expert's games that deviate only inside a window of
        buffers from their prefix on (its length log-uniform in [1, N]; the rate's lower end
        rises as the window shrinks, so that a window holds a deviation or more) and follow
        the center after it: a local ruin and recreate. The others may deviate anywhere after
        their prefix.
      directed_share, direction_scale: the share of the expert's games whose deviations follow
        one random direction of their own instead of a rate: a game plays the argmax of
        greedy's scores (not the network's), plus a linear function of the features drawn for
        the game (its weights normal, scaled by a per-game factor log-uniform in [scale / 3, 3 * scale]),
        plus a bonus of 1 for the center's move, as an ES population member plays around its
        plan; its deviations are then the decisions whose features lean its way.
      restart_stall: the expert mode's search starts again from its first center (the
        demonstration's game, or the first one found) once its center has not risen for this many
        times the generations its climb took since it began (at least
        `expert.RESTART_MIN_GENERATIONS`); the best game stays (0: never).
      stagger: game g of the first batch starts g * N / games moves late, so that the replay
        holds all phases of the game from the start instead of one band of moves.
    Learning:
      discount: the return's discount factor.
      replay_size: positions kept; the replay is a ring of `replay_size // games` moves of every
        game.
      batch_size, learning_rate, weight_decay, max_grad_norm (None: no clipping).
      unroll_steps: K of the K-step unrolled model losses (muzero mode; 0 in the others).
      td_steps: n of the n-step value targets, bootstrapped from the search's root value stored
        at acting time (or from the target network's value, for reanalysed samples); an episode's
        end within n moves makes the target its exact (discounted) return.
      reanalyse_fraction: this part of every batch gets fresh search targets from the current
        parameters (muzero mode only: the replay holds observations, which the learned model can
        search from but the true game cannot).
      demonstration_fraction: this part of every batch comes from the demonstration, a whole
        won game replayed: the best game found so far (self-imitation), or the game given to
        `train.init(demonstration=...)` (the heuristic's, for MMap-MuZero-prod) until the agent
        beats it. Its policy targets are the moves it played and its value targets its exact
        returns-to-go (the paper's Reanalyse section: learning from demonstrations). With a
        fraction, the learner waits for the first won game.
      target_update_interval: learner steps between copies of the parameters into the target
        network.
      value_loss_weight, entropy_weight (no_search's policy-gradient bonus).
      moves_per_update: self-play moves (of all games) per learner step.
      min_replay_moves: the learner waits until the replay holds this many moves per game.
      pretrained: the expert mode's network starts from the shipped generalist's parameters
        (`agent.generalist.load()`, pretrained across programs), its correction at the share
        the generalist's games play with (`generalist.with_correction`: its argmax game is
        the `generalist` solver's), instead of fresh ones; its widths must be the generalist's
        (`network.decision`). The directed games do not use the network (greedy's scores
        are their mean): it shapes the first game, the evaluation games and the games that
        deviate at a rate.
    Execution:
      updates_per_chunk: learner steps in one jitted `lax.scan` chunk (the host logs and
        checkpoints between chunks).
      network: the sizes of the networks.
    """

    mode: Mode = "expert"
    games: int = 64
    num_simulations: int = 16
    gumbel: bool = False
    dirichlet_fraction: float = 0.25
    dirichlet_alpha: float = 0.03
    init_temperature: float = 1.0
    final_temperature: float = 0.2
    temperature_decay: float = 0.5
    stagger: bool = True
    discount: float = 0.9999
    replay_size: int = 8192
    batch_size: int = 64
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    max_grad_norm: float | None = None
    unroll_steps: int = 5
    td_steps: int = 60
    reanalyse_fraction: float = 0.0
    demonstration_fraction: float = 0.0
    pretrained: bool = False
    target_update_interval: int = 100
    value_loss_weight: float = 0.25
    entropy_weight: float = 0.01
    moves_per_update: int = 1
    min_replay_moves: int = 16
    updates_per_chunk: int = 50
    restart_fraction: float = 0.9
    deviation_min: float = 0.02
    deviation_max: float = 0.6
    deviation_window: float = 0.5
    directed_share: float = 0.9
    direction_scale: float = 0.1
    restart_stall: float = 1.0
    elites: int = 4
    learner_steps: int = 4
    generations_per_chunk: int = 4
    network: NetworkConfig = NetworkConfig.small()

    def __post_init__(self):
        for name in _COUNTS:  # first: the checks below divide by some of them
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        for name in _FRACTIONS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; modes: {', '.join(MODES)}")
        if self.pretrained and self.mode != "expert":
            raise ValueError("pretrained is for the expert mode (its network is the generalist's)")
        if self.reanalyse_fraction and self.mode != "muzero":
            raise ValueError(f"reanalyse needs the learned model (mode muzero), not {self.mode!r}:"
                             " set reanalyse_fraction=0")
        if self.rows <= self.horizon:
            raise ValueError(f"replay_size // games = {self.rows} must exceed unroll_steps +"
                             f" td_steps = {self.horizon}")
        if not 0 <= self.reanalyse_fraction <= 1:
            raise ValueError("reanalyse_fraction must be in [0, 1]")
        if not 0 <= self.deviation_window <= 1:
            raise ValueError("deviation_window must be in [0, 1]")
        if not 0 <= self.directed_share <= 1:
            raise ValueError("directed_share must be in [0, 1]")
        if not self.direction_scale > 0:
            raise ValueError("direction_scale must be > 0")
        if not self.restart_stall >= 0:
            raise ValueError("restart_stall must be >= 0")
        if not 0 < self.deviation_min <= self.deviation_max <= 1:
            raise ValueError("need 0 < deviation_min <= deviation_max <= 1")
        if self.mode == "expert" and not 1 <= self.elites <= self.games:
            raise ValueError(f"elites must be in [1, games = {self.games}], got {self.elites}")
        if not 0 <= self.demonstration_fraction < 1:
            raise ValueError("demonstration_fraction must be in [0, 1)")
        if self.reanalysed + self.demonstrated > self.batch_size:
            raise ValueError("reanalyse_fraction + demonstration_fraction must not exceed 1")

    @property
    def rows(self) -> int:
        """Moves of every game that the replay ring holds."""
        return self.replay_size // self.games

    @property
    def unroll(self) -> int:
        """K: the model is unrolled only in muzero mode."""
        return self.unroll_steps if self.mode == "muzero" else 0

    @property
    def horizon(self) -> int:
        """Moves after a sampled position that its targets read."""
        return self.unroll + self.td_steps

    @property
    def reanalysed(self) -> int:
        """Samples of each batch with reanalysed targets."""
        return int(round(self.batch_size * self.reanalyse_fraction))

    @property
    def demonstrated(self) -> int:
        """Samples of each batch from the demonstration (the last ones)."""
        return int(round(self.batch_size * self.demonstration_fraction))

    @property
    def learns(self) -> bool:
        return self.mode != "mcts"

    def replace(self, **changes) -> AgentConfig:
        return dataclasses.replace(self, **changes)

    @classmethod
    def paper(cls, **changes) -> AgentConfig:
        """Table 6 of the paper (the network sizes, which it does not give, are
        `NetworkConfig.paper()`; the number of parallel games, unroll and TD steps neither)."""
        table6 = dict(discount=0.9999, num_simulations=400, init_temperature=1.0,
                      temperature_decay=0.4, final_temperature=0.2,
                      dirichlet_fraction=0.25, dirichlet_alpha=0.03, batch_size=512,
                      learning_rate=2e-4, weight_decay=1e-4, replay_size=20_000,
                      reanalyse_fraction=0.5, games=128, td_steps=10,
                      network=NetworkConfig.paper())
        return cls(**{**dict(mode="muzero"), **table6, **changes})
