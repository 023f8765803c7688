"""Evolutionary solvers: es (evosax CMA-ES/OpenES over a policy's weights) and egrl
(evolution + policy gradient, the MARL paper's agent), on the featurizer of `jaxmmap.env.observation`."""
