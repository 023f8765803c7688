"""The MMap-MuZero agent (issue 5, in progress).

So far: `observe` (the observation of Section 4.3.1, built inside jit), `networks` (the flax
representation, prediction and dynamics networks, categorical value/reward supports) and
`search` (mctx over the true game; the `mcts` solver, the paper's search-without-learning
ablation). Self-play, replay, the losses and `train.py` come next.
"""

from jaxmmap.agent.observation import Observation, observe

__all__ = ["Observation", "observe"]
