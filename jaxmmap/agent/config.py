"""The agent's configuration: one frozen (hashable) dataclass, so that it can be a static argument
of the jitted training chunk and every run with the same configuration and padded shapes shares
one compilation.

`AgentConfig()` is the quick start: a small agent that learns within minutes on a 2-core CPU
(`configs/quickstart.py`); `AgentConfig.paper()` is Table 6 of the paper (`configs/paper.py`).
Where the defaults depart from Table 6 it is for the CPU, measured on the bundled instance (one
seed, 150 s budgets, in `docs/agent.md`): Reanalyse off (it made a learner step 2.6x slower, and
the best return at 150 s fell from 2.24 to 1.61), 60 TD steps instead of 10 (1.77 against 1.61
with Reanalyse), a 5x larger learning rate and a temperature decay after 2,000 steps.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from jaxmmap.agent.networks import NetworkConfig

Mode = Literal["muzero", "alphazero", "mcts", "no_search"]
MODES = ("muzero", "alphazero", "mcts", "no_search")


@dataclasses.dataclass(frozen=True)
class AgentConfig:
    """Everything that shapes the training computation.

    Acting:
      mode: "muzero" (learned dynamics in the search, the paper), "alphazero" (the true game in
        the search, learned priors and values), "mcts" (the true game, flat priors, no learning:
        the paper's first ablation), "no_search" (the network's policy acts alone and learns by
        policy gradient: the paper's second ablation).
      games: games played in parallel (vmap; a multiple of the number of devices).
      num_simulations: simulations per search. gumbel: Gumbel MuZero instead of PUCT + noise.
      dirichlet_fraction, dirichlet_alpha: root noise (PUCT search only).
      init_temperature, final_temperature, temperature_decay_steps: the action temperature is
        `init` until `decay_steps` learner steps, then `final` (Table 6; MuZero's piecewise
        constant schedule).
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
    Execution:
      updates_per_chunk: learner steps in one jitted `lax.scan` chunk (the host logs and
        checkpoints between chunks).
      network: the sizes of the networks.
    """

    mode: Mode = "muzero"
    games: int = 32
    num_simulations: int = 16
    gumbel: bool = False
    dirichlet_fraction: float = 0.25
    dirichlet_alpha: float = 0.03
    init_temperature: float = 1.0
    final_temperature: float = 0.2
    temperature_decay_steps: int = 2_000
    stagger: bool = True
    discount: float = 0.9999
    replay_size: int = 4096
    batch_size: int = 64
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    max_grad_norm: float | None = None
    unroll_steps: int = 5
    td_steps: int = 60
    reanalyse_fraction: float = 0.0
    demonstration_fraction: float = 0.0
    target_update_interval: int = 100
    value_loss_weight: float = 0.25
    entropy_weight: float = 0.01
    moves_per_update: int = 1
    min_replay_moves: int = 16
    updates_per_chunk: int = 50
    network: NetworkConfig = NetworkConfig.small()

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; modes: {', '.join(MODES)}")
        if self.reanalyse_fraction and self.mode != "muzero":
            raise ValueError(f"reanalyse needs the learned model (mode muzero), not {self.mode!r}:"
                             " set reanalyse_fraction=0")
        if self.rows <= self.horizon:
            raise ValueError(f"replay_size // games = {self.rows} must exceed unroll_steps +"
                             f" td_steps = {self.horizon}")
        if not 0 <= self.reanalyse_fraction <= 1:
            raise ValueError("reanalyse_fraction must be in [0, 1]")
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
                      temperature_decay_steps=400_000, final_temperature=0.2,
                      dirichlet_fraction=0.25, dirichlet_alpha=0.03, batch_size=512,
                      learning_rate=2e-4, weight_decay=1e-4, replay_size=20_000,
                      reanalyse_fraction=0.5, games=128, td_steps=10,
                      network=NetworkConfig.paper())
        return cls(**{**table6, **changes})
