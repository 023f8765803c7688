"""AlphaZero-style ablation: the search runs the true game (the State is the tree's embedding)
with the network's priors and values; no learned dynamics, so no reward loss, no unroll and
no Reanalyse (the replay holds observations, not game states).

    python train.py --config configs/alphazero.py --workdir runs/alphazero

Everything else is the quick start's (configs/quickstart.py).
"""

import ml_collections

from configs import quickstart


def get_config() -> ml_collections.ConfigDict:
    config = quickstart.get_config()
    config.agent.mode = "alphazero"
    return config
