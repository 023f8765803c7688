"""The paper's first ablation: tree search over the true game with flat priors and zero leaf
values, no learning (the games still fill the replay; no learner step runs).

    python train.py --config configs/mcts.py --workdir runs/mcts

Everything else is the quick start's (configs/quickstart.py).
"""

import ml_collections

from configs import quickstart


def get_config() -> ml_collections.ConfigDict:
    config = quickstart.get_config()
    config.agent.mode = "mcts"
    return config
