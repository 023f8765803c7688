"""The core: what a problem is and what makes a solution right, in plain NumPy.

problem    Problem, Solution, LatencyTable; file I/O and the loader's checks
rules      Rules; discretize(): a problem in the game's exact units (shared by both games)
validator  validate(): the independent check of a solution (imports only `problem`)
simulator  latency(): a solution's simulated run
files      UserError, atomic writes, folder checks
suite      the bundled benchmark suite (data/suite): names(), load(), info()

Nothing here imports JAX or any other layer of the package.
"""
