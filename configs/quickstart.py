"""Quick start: MMap-MuZero on the bundled instance, a few minutes on a 2-core CPU.

    python train.py --config configs/quickstart.py --workdir runs/quickstart
    python train.py --config configs/quickstart.py --config.agent.games=64 --workdir runs/x

`agent` holds every field of `jaxmmap.agent.AgentConfig` at its default (the quick-start agent;
its docstring says where and why it departs from Table 6, which is configs/paper.py).
"""

import dataclasses

import ml_collections

from jaxmmap.agent import AgentConfig


def get_config() -> ml_collections.ConfigDict:
    config = ml_collections.ConfigDict()
    config.problem = "bundled:tiny"  # a file, bundled:NAME or suite:NAME
    config.seed = 0
    config.columns = "auto"  # grid columns of the fast memory; auto: <= 5% lost to rounding
    config.nocopy_offset = "same"
    config.output_nocopy = True  # NoCopy of an output pins it (the paper); False: the older game
    # the game (docs/game.md): unset, muzero-prod's own (deferred placement, early copy supply;
    # docs/solvers.md, Rules); "grid" and "near" are the paper's
    config.placement = ml_collections.config_dict.placeholder(str)  # "grid" or "deferred"
    config.copy_supply = ml_collections.config_dict.placeholder(str)  # "near" or "early"
    config.budget_s = 300.0  # wall-clock budget of one invocation, compilation included
    config.training_steps = 20_000  # iterations in all, across resumes (moves + one update each)
    config.checkpoint_every = 10  # chunks
    config.prod = True  # also run the heuristic and report the better (MMap-MuZero-prod)
    config.agent = ml_collections.ConfigDict(dataclasses.asdict(AgentConfig()))
    return config
