"""The MMap-MuZero agent (issue 5, in progress): what it observes, its networks, search and
learning. So far: `observe` (the observation of Section 4.3.1, built inside jit)."""

from jaxmmap.agent.observation import Observation, observe

__all__ = ["Observation", "observe"]
