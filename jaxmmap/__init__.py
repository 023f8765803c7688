"""jaxmmap: the memory mapping game (MMapGame) in JAX.

The public names, by use (`import jaxmmap`, then `jaxmmap.NAME`):

Files:       load_problem, save_problem, load_solution, save_solution (docs/formats.md);
             validate (the independent check of a solution, docs/promises.md)
The game:    Rules, make_instance, init, step, legal_action_mask (pure JAX functions, docs/game.md);
             Environment (reset/step -> TimeStep, Jumanji style)
Playing:     play (a solver's best game as a validated solution), rollout, rollouts (a batch of
             games), random_policy, nth_game, to_solution
Instances:   generate (random programs), bundled (shipped with the package), from_jax and
             from_hlo_text (real programs, docs/importer.md), benchmarks (the bundled suite)
Results:     latency (the simulated run of a solution), place (a solution's decisions placed
             physically: never worse), solvers (`solvers.solve(problem, name, budget_s)`)

Everything else lives in its package:

jaxmmap.core      problem (Problem, Solution, LatencyTable, ProblemError, COPY/NOCOPY/DROP),
                  validator (Report, Violation, check_solution, SolutionRejected), simulator
                  (Timeline), files (UserError: every mistake of the user's), rules, suite, io
jaxmmap.env       Observation, TimeStep; game (State, action_rewards), instance (Instance,
                  bucket), rollout (greedy_policy), reference (ReferenceGame: the executable
                  specification), generator, observation (the featurizer)
jaxmmap.importer  HLO text and JAX functions as problems; hardware presets
jaxmmap.solvers   the registry (solve, SOLVERS) and every solver
jaxmmap.agent     MMap-MuZero (fit, AgentConfig) and the pretrained generalist (docs/agent.md)
jaxmmap.harness   comparisons, reports, plots; jaxmmap.plots is the README's path to its plots
"""

from jaxmmap import benchmarks, solvers  # benchmarks: the bundled suite (core.suite)
from jaxmmap.core.io import bundled
from jaxmmap.core.problem import load_problem, load_solution, save_problem, save_solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.simulator import latency
from jaxmmap.core.validator import validate
from jaxmmap.env import Environment
from jaxmmap.env.game import init, legal_action_mask, step
from jaxmmap.env.generator import generate
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import nth_game, play, random_policy, rollout, rollouts, to_solution
from jaxmmap.importer import from_hlo_text, from_jax
from jaxmmap.solvers.placer import place

__version__ = "0.1.0"

__all__ = [
    # files
    "load_problem", "save_problem", "load_solution", "save_solution", "validate",
    # the game
    "Rules", "make_instance", "init", "step", "legal_action_mask", "Environment",
    # playing
    "play", "rollout", "rollouts", "random_policy", "nth_game", "to_solution",
    # instances
    "generate", "bundled", "from_jax", "from_hlo_text", "benchmarks",
    # results
    "latency", "place", "solvers",
]
