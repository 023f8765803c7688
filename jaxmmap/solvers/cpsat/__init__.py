"""CP-SAT and the LP bound.

    result = cpsat(problem, budget_s=60, seed=0)   # Result; info: status, bound, proven_optimal
    upper_bound(problem)                           # a proven bound for any size, in seconds

model   the exact CP-SAT model of the physical problem
solve   the `cpsat` solver on it (warm start, budget, fixed decisions)
bound   the LP relaxation (`upper_bound`, `relaxation`)
"""

from jaxmmap.solvers.cpsat._shared import all_drop
from jaxmmap.solvers.cpsat.bound import PDLP_ITERATIONS, relaxation, upper_bound
from jaxmmap.solvers.cpsat.solve import MAX_BUFFERS, cpsat

__all__ = ["MAX_BUFFERS", "PDLP_ITERATIONS", "all_drop", "cpsat", "relaxation", "upper_bound"]
