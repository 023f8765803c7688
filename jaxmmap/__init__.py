"""jaxmmap: the memory mapping game (MMapGame) in JAX.

Files and checks:   load_problem, save_problem, load_solution, save_solution, validate,
                    check_solution (validate or refuse: SolutionRejected), UserError (a mistake
                    of the user's; ProblemError and SolutionRejected are ones), docs/promises.md
The game:           Rules, make_instance, init, step, legal_action_mask, State, Environment
Playing:            play, rollout, rollouts, nth_game, to_solution, random_policy, greedy_policy
Instances:          generate (random programs), bundled (instances shipped with the package),
                    from_jax / from_hlo_text (real programs), benchmarks (the bundled suite)
Results:            latency (the simulated run of a solution: Timeline), plots, report,
                    place (a solution's decisions placed physically, grown: never worse)
The specification:  ReferenceGame (plain NumPy), docs/game.md
"""

from jaxmmap import benchmarks, importer, solvers  # benchmarks: the bundled suite (core.suite)
from jaxmmap.core.files import UserError
from jaxmmap.core.io import bundled
from jaxmmap.core.problem import (
    COPY,
    DROP,
    NOCOPY,
    LatencyTable,
    Problem,
    ProblemError,
    Solution,
    load_problem,
    load_solution,
    save_problem,
    save_solution,
)
from jaxmmap.core.rules import Rules
from jaxmmap.core.simulator import Timeline, latency
from jaxmmap.core.validator import Report, SolutionRejected, Violation, check_solution, validate
from jaxmmap.env import Environment, Observation, TimeStep
from jaxmmap.env.game import State, action_rewards, init, legal_action_mask, step
from jaxmmap.env.generator import generate
from jaxmmap.env.instance import Instance, bucket, make_instance
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.env.rollout import greedy_policy, nth_game, play, random_policy, rollout, rollouts, to_solution
from jaxmmap.importer import from_hlo_text, from_jax
from jaxmmap.solvers.placer import place

__version__ = "0.1.0"

__all__ = [
    "COPY", "NOCOPY", "DROP", "Environment", "Instance", "LatencyTable", "Observation", "Problem",
    "ProblemError", "ReferenceGame", "Report", "Rules", "Solution", "State", "Timeline", "TimeStep",
    "Violation", "action_rewards", "bucket", "bundled", "generate", "greedy_policy", "init",
    "latency", "legal_action_mask", "load_problem", "load_solution", "make_instance", "play",
    "nth_game", "random_policy", "rollout", "rollouts", "save_problem", "save_solution", "step", "to_solution",
    "validate", "from_jax", "from_hlo_text", "benchmarks", "importer", "solvers",
    "SolutionRejected", "UserError", "check_solution", "place",
]
