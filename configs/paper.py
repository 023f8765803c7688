"""MMap-MuZero as in the paper: Table 6 (Appendix C) exactly, for a GPU.

    python train.py --config configs/paper.py --config.problem=suite:NAME --workdir runs/paper

Table 6 does not give the network sizes (these are `NetworkConfig.paper()`, MuZero-like), the
number of parallel games, the unroll or TD steps, nor the value loss weight; those are marked
"not in Table 6". `tests/test_training.py` checks this file against `AgentConfig.paper()`.
"""

import ml_collections

from configs import quickstart


def get_config() -> ml_collections.ConfigDict:
    config = quickstart.get_config()
    config.budget_s = 24 * 3600.0
    config.training_steps = 1_000_000  # num_training_steps
    config.checkpoint_every = 20
    config.placement, config.copy_supply = "grid", "near"  # the paper's game

    agent = config.agent
    agent.discount = 0.9999  # discount_factor
    agent.num_simulations = 400  # num_mcts_simulations
    agent.init_temperature = 1.0  # init_temperature
    agent.mode = "muzero"  # the paper's agent (the quick start's default is "expert")
    agent.temperature_decay = 0.4  # temperature_decay_steps 400,000 of num_training_steps
    agent.final_temperature = 0.2  # final_temperature
    agent.dirichlet_fraction = 0.25  # noise_fraction
    agent.dirichlet_alpha = 0.03  # noise_alpha
    agent.batch_size = 512  # batch_size
    agent.learning_rate = 2e-4  # lr (optimizer: adam)
    agent.weight_decay = 1e-4  # weight_decay
    agent.replay_size = 20_000  # replay_size
    agent.reanalyse_fraction = 0.5  # reanalyse_fraction
    agent.games = 128  # not in Table 6
    agent.unroll_steps = 5  # not in Table 6 (MuZero's)
    agent.td_steps = 10  # not in Table 6 (MuZero's Atari value)
    agent.network = ml_collections.ConfigDict(dict(  # not in Table 6: NetworkConfig.paper()
        grid_channels=(64, 128, 128, 256), grid_blocks=2, profile_channels=(32, 64, 128),
        profile_strides=(4, 4, 2), profile_bins=16, feature_width=256, torso=(1024, 1024),
        embedding=512, head=(512, 512), dynamics=(1024, 1024), support_size=601,
        normalize="minmax"))
    return config
