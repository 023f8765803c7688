"""Quick start: MMap-MuZero on the bundled instance, a few minutes on a 2-core CPU.

    python train.py --config configs/quickstart.py --workdir runs/quickstart

A small network, 32 games in parallel and 16 simulations per move; the rest as in Table 6 of
the paper (configs/paper.py) except the replay and batch sizes, scaled down with the games.
"""

import ml_collections


def get_config() -> ml_collections.ConfigDict:
    config = ml_collections.ConfigDict()
    config.problem = "bundled:tiny"  # a file, or bundled:NAME
    config.seed = 0
    config.columns = "auto"  # grid columns of the fast memory; auto: <= 5% lost to rounding
    config.nocopy_offset = "same"
    config.budget_s = 300.0  # wall-clock budget of one invocation, compilation included
    config.training_steps = 5_000  # learner iterations (each: moves of all games + one update)
    config.checkpoint_every = 10  # chunks
    config.prod = True  # also run the heuristic and report the better (MMap-MuZero-prod)

    agent = ml_collections.ConfigDict()
    agent.mode = "muzero"
    agent.games = 32
    agent.num_simulations = 16
    agent.gumbel = False
    agent.dirichlet_fraction = 0.25
    agent.dirichlet_alpha = 0.03
    agent.init_temperature = 1.0
    agent.final_temperature = 0.2
    agent.temperature_decay_steps = 2_000
    agent.stagger = True
    agent.discount = 0.9999
    agent.replay_size = 4_096
    agent.batch_size = 64
    agent.learning_rate = 1e-3
    agent.weight_decay = 1e-4
    agent.max_grad_norm = None
    agent.unroll_steps = 5
    agent.td_steps = 10
    agent.reanalyse_fraction = 0.5
    agent.target_update_interval = 100
    agent.value_loss_weight = 0.25
    agent.entropy_weight = 0.01
    agent.moves_per_update = 1
    agent.min_replay_moves = 16
    agent.updates_per_chunk = 50
    agent.network = ml_collections.ConfigDict(dict(
        grid_channels=(8, 16), grid_blocks=1, profile_channels=(8,), profile_strides=(4,),
        profile_bins=8, feature_width=32, torso=(128,), embedding=64, head=(64,),
        dynamics=(128,), support_size=51, normalize="minmax"))
    config.agent = agent
    return config
