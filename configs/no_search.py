"""The paper's second ablation: learning without MCTS. The network's policy plays alone (sampled
at the action temperature) and learns by policy gradient on replayed moves (advantage =
n-step return minus the predicted value); the value head learns as in MuZero.

    python train.py --config configs/no_search.py --workdir runs/no_search

Everything else is the quick start's (configs/quickstart.py).
"""

import ml_collections

from configs import quickstart


def get_config() -> ml_collections.ConfigDict:
    config = quickstart.get_config()
    config.agent.mode = "no_search"
    return config
