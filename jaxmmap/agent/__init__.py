"""MMap-MuZero (paper Section 4.3, Appendix C) and its ablations, end to end in JAX.

Modules, by concept:
What the agent sees of a `game.State` is `jaxmmap.env.observation` (the one featurizer).

* `networks`: representation, dynamics and prediction networks (flax), categorical supports;
* `search`: mctx over the true game (the `mcts` solver) or the learned model;
* `selfplay`: many games in parallel, one move of all of them per call;
* `replay`: the on-device ring of moves, compressed observations, n-step targets;
* `learner`: batches with Reanalyse, the unrolled MuZero losses, one Adam step;
* `train`: the jitted training chunk (`lax.scan`) and its data-parallel layout;
* `loop`: the host side (logs, orbax checkpoints, budgets) and the `muzero` solvers;
* `config`: `AgentConfig`, every knob of the above (`AgentConfig.paper()` is Table 6);
* `generalist`: one decision network pretrained across programs (imitation, DAgger), shipped;
* `guide`: its intent network, the uses it wants in fast memory, for the placer;
* `improvement`: a search in the generalist's parameters on the true game (off by default).
"""

from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.loop import Outcome, fit

__all__ = ["AgentConfig", "Outcome", "fit"]
