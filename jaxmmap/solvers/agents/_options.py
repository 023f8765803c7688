"""The options of the agent's solvers (`muzero`, `muzero-prod`): `AgentConfig`'s fields and
`NetworkConfig`'s, declared for `solvers.spec` (checked before any work;
`solvers.describe_options` lists them)."""

from __future__ import annotations

import numpy as np

from jaxmmap.agent.config import MODES
from jaxmmap.agent.networks import NetworkConfig
from jaxmmap.solvers.spec import PADDING, Option

COUNT, _SHARE, _RATE = "[1, inf)", "[0, 1]", "(0, inf)"
_NETWORK = {  # NetworkConfig's fields (lists: widths per layer or stage)
    "grid_channels": Option(int, COUNT, "channels of the grid ResNet's stages", length=0),
    "grid_blocks": Option(int, COUNT, "residual blocks per stage"),
    "profile_channels": Option(int, COUNT, "channels of the convolutions over the memory profile", length=0),
    "profile_strides": Option(int, COUNT, "their strides", length=0),
    "profile_bins": Option(int, COUNT, "positions the profile is pooled to"),
    "feature_width": Option(int, COUNT, "width of the feature embeddings"),
    "torso": Option(int, COUNT, "hidden widths of the torso MLP", length=0),
    "embedding": Option(int, COUNT, "size of the hidden state"),
    "head": Option(int, COUNT, "hidden widths of the policy, value and reward MLPs", length=0),
    "dynamics": Option(int, COUNT, "hidden widths of the dynamics MLP", length=0),
    "support_size": Option(int, COUNT, "atoms of the value and reward supports"),
    "normalize": Option(str, choices=("minmax", "layernorm")),
    "grid": Option(bool, doc="encode the grid window and the profile (else the feature groups only)"),
    "decision": Option(int, COUNT, "hidden widths of the expert mode's network", length=0),
}
#: `AgentConfig`'s fields, the options of `muzero` and `muzero-prod` (the config's docstring says more).
AGENT_OPTIONS = {
    "mode": Option(str, doc="expert iteration, the paper's agent, or its ablations", choices=MODES),
    "games": Option(int, COUNT, "games played in parallel"),
    "num_simulations": Option(int, COUNT, "simulations per search"),
    "gumbel": Option(bool, doc="Gumbel MuZero instead of PUCT and noise"),
    "dirichlet_fraction": Option(float, _SHARE, "share of the root's noise"),
    "dirichlet_alpha": Option(float, _RATE, "concentration of the root's noise"),
    "init_temperature": Option(float, _RATE, "the action temperature at the start"),
    "final_temperature": Option(float, "[0, inf)", "the action temperature at the end (0: greedy)"),
    "temperature_decay": Option(float, _SHARE, "the run's share at which the temperature falls"),
    "stagger": Option(bool, doc="the first batch's games start at staggered moves"),
    "discount": Option(float, _SHARE, "the return's discount factor"),
    "replay_size": Option(int, COUNT, "positions the replay keeps"),
    "batch_size": Option(int, COUNT, "the learner's batch"),
    "learning_rate": Option(float, "[0, inf)", "the learner's (0: no learning)"),
    "weight_decay": Option(float, "[0, inf)"),
    "max_grad_norm": Option(float, _RATE, "gradients clipped to this norm (null: not clipped)", null=True),
    "unroll_steps": Option(int, COUNT, "K of the K-step unrolled model losses (mode muzero)"),
    "td_steps": Option(int, COUNT, "n of the n-step value targets"),
    "reanalyse_fraction": Option(float, _SHARE, "share of every batch reanalysed (mode muzero)"),
    "demonstration_fraction": Option(float, "[0, 1)", "share of every batch from the demonstration"),
    "pretrained": Option(bool, doc="the expert mode's network starts from the shipped generalist's"),
    "target_update_interval": Option(int, COUNT, "learner steps between copies into the target network"),
    "value_loss_weight": Option(float, "[0, inf)"),
    "entropy_weight": Option(float, "[0, inf)", "no_search's policy-gradient bonus"),
    "moves_per_update": Option(int, COUNT, "self-play moves per learner step"),
    "min_replay_moves": Option(int, COUNT, "moves per game the replay holds before the learner starts"),
    "updates_per_chunk": Option(int, COUNT, "learner steps in one jitted chunk"),
    "restart_fraction": Option(float, _SHARE, "share of the expert's games that restart from the best's prefix"),
    "deviation_min": Option(float, "(0, 1]", "lowest deviation rate of an expert's game"),
    "deviation_max": Option(float, "(0, 1]", "highest deviation rate of an expert's game"),
    "deviation_window": Option(float, _SHARE, "share of the expert's games that deviate inside a window only"),
    "directed_share": Option(float, _SHARE, "share of the expert's games that deviate along a random direction"),
    "direction_scale": Option(float, "(0, inf)", "typical scale of a directed game's direction"),
    "restart_stall": Option(float, "[0, inf)", "the expert's search starts again from its first center once stalled"
                            " this many times its climb (0: never)"),
    "elites": Option(int, COUNT, "games of a generation the network learns from (expert mode)"),
    "learner_steps": Option(int, COUNT, "learner steps per generation (expert mode)"),
    "generations_per_chunk": Option(int, COUNT, "generations in one jitted chunk (expert mode)"),
    "network": Option(NetworkConfig, doc="the networks' sizes", fields=_NETWORK),
}
RUN_OPTIONS = {  # options of `muzero` that `muzero-prod` passes on
    "max_iterations": Option(int, "[0, inf)", "stop after this many learner iterations", null=True),
    "padding": PADDING,
    "demonstration": Option(np.ndarray, doc="a won game's actions, to learn from", null=True),
    "progress": Option(bool, doc="a progress bar on stderr"),
}
