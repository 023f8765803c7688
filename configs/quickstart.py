"""Quick start: minutes on a 2-core CPU, on the bundled instance.

Until the MMap-MuZero agent lands, the main job plays the game with simple policies (many
random games in parallel, and the greedy policy), keeps the best, validates it and writes it.
"""

import ml_collections


def get_config() -> ml_collections.ConfigDict:
    config = ml_collections.ConfigDict()
    config.problem = "bundled:tiny"  # a file, or bundled:NAME
    config.seed = 0
    config.columns = "auto"  # grid columns of the fast memory; auto: <= 5% lost to rounding
    config.nocopy_offset = "same"
    config.backup = True  # the Drop-backup of Section 4.3.2
    config.policies = ("greedy", "random")
    config.games = 1024  # games per policy, played in parallel with vmap
    return config
