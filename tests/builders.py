"""Hand-made problems and solutions for the tests (one builder, shared by the test files)."""

from __future__ import annotations

import jax
import numpy as np

from jaxmmap.core.problem import DROP, LatencyTable, Problem, Solution
from jaxmmap.core.rules import Rules
from jaxmmap.env.generator import generate
from jaxmmap.env.rollout import greedy_policy, rollout

RULES = Rules(columns=32)  # the grid of the small programs below

_GREEDY = jax.jit(lambda instance, key: rollout(instance, key, greedy_policy, backup=True))


def greedy_game(instance):
    """Greedy's finished game on `instance` (Drop-backup on): compiled once per shape, the
    instance an argument (a constant instance would be compiled, and folded, per call)."""
    return _GREEDY(instance, jax.random.key(0))


def tiny(seed: int, tables: bool = False) -> Problem:
    """Small programs with a fast copy engine, so that placing buffers is possible but contested;
    some with alias groups, with `tables` a roofline latency table per instruction."""
    return generate(seed, num_instructions=4 + seed % 3, inplace_prob=0.3, memory_fraction=0.4,
                    copy_bandwidth=1e6, latency_tables=tables)


def make_problem(buffers, *, memory=200, supply=None, steps=10, tables=(), name="p",
                 metadata=None):
    """`buffers`: dicts with keys size, t, out, tensor, alias, live, demand, benefit (defaults:
    size 10, input, own tensor, no alias group, live range = the whole program, demand 0,
    benefit 1)."""
    supply = np.full(steps, 1.0) if supply is None else np.asarray(supply, np.float64)
    T = supply.shape[0]
    rows = []
    for i, b in enumerate(buffers):
        live = b.get("live", (0, T - 1))
        rows.append(dict(size=b.get("size", 10), is_output=b.get("out", False), target_time=b["t"],
                         tensor_id=b.get("tensor", 1000 + i), alias_id=b.get("alias", -1),
                         live_start=live[0], live_end=live[1], demand=b.get("demand", 0.0),
                         benefit=b.get("benefit", 1.0)))
    cols = {k: [r[k] for r in rows] for k in rows[0]}
    dtypes = dict(size=np.int64, is_output=np.bool_, target_time=np.int64, tensor_id=np.int64,
                  alias_id=np.int64, live_start=np.int64, live_end=np.int64,
                  demand=np.float64, benefit=np.float64)
    arrays = {k: np.asarray(v, dtype=dtypes[k]) for k, v in cols.items()}
    tables = tuple(LatencyTable(step=s, buffers=np.asarray(b, np.int64),
                                latency=np.asarray(lat, np.float64)) for s, b, lat in tables)
    return Problem(name=name, memory_size=memory, supply=supply, latency_tables=tables,
                   metadata=dict(metadata or {}), **arrays)


def make_solution(problem, rows, ret=None, *, rules=None, name=None):
    """`rows`: (action, offset, (alloc_start, alloc_end), (copy_start, copy_end)) per buffer.
    The default return is the sum of the benefits of the placed buffers (no latency tables)."""
    action = np.asarray([r[0] for r in rows], np.int64)
    if ret is None:
        ret = float(problem.benefit[action != DROP].sum())
    return Solution(
        problem=problem.name if name is None else name, solver="hand", ret=float(ret),
        action=action,
        offset=np.asarray([r[1] for r in rows], np.int64),
        alloc_start=np.asarray([r[2][0] for r in rows], np.int64),
        alloc_end=np.asarray([r[2][1] for r in rows], np.int64),
        copy_start=np.asarray([r[3][0] for r in rows], np.int64),
        copy_end=np.asarray([r[3][1] for r in rows], np.int64),
        rules=rules or {})


# Options that keep the learned solvers small in tests. Every problem is padded to PAD, so each
# solver configuration compiles once per test session (their generation functions are cached).
PAD = (128, 64, 1)  # (buffers, steps, tables): the bundled tiny problem and the small ones fit
ES_OPTIONS = dict(population=8, padding=PAD)
EGRL_OPTIONS = dict(neural=4, boltzmann=4, learner_games=2, record=16, capacity=1024, updates=4,
                    batch=64, warmup=8, padding=PAD)


def agent_config(**changes):
    """A tiny agent for the tests: every test that trains uses it (with PAD), so `run_chunk`
    compiles once per mode in a test session."""
    from jaxmmap.agent.config import AgentConfig
    from jaxmmap.agent.networks import NetworkConfig

    network = NetworkConfig(grid_channels=(4, 8), profile_channels=(4,), profile_strides=(4,),
                            profile_bins=4, feature_width=16, torso=(32,), embedding=32, head=(32,),
                            dynamics=(32,), support_size=31)
    base = dict(mode="muzero", games=8, num_simulations=8, replay_size=8 * 32, batch_size=16, learning_rate=3e-3,
                unroll_steps=3, td_steps=5, min_replay_moves=8, updates_per_chunk=10,
                target_update_interval=10, network=network)
    if changes.get("mode", "muzero") == "muzero":
        base["reanalyse_fraction"] = 0.5
    return AgentConfig(**{**base, **changes})


def agent_options(max_iterations: int, **changes) -> dict:
    """Options of the `muzero` solvers for the tests (with the tests' padding): the default
    (expert) mode with 8 games, or `agent_config(**changes)` when `changes` name a mode."""
    import dataclasses

    if changes.get("mode", "expert") == "expert":
        fields = dict(games=8, elites=2, batch_size=16, generations_per_chunk=2, **changes)
    else:
        config = agent_config(**changes)
        fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    return dict(fields, padding=PAD, max_iterations=max_iterations)


def expert_config(**changes):
    """A small expert-mode agent (the default mode): every test that trains it uses this and PAD,
    so its chunk compiles once per worker; those tests share the xdist group "expert"."""
    from jaxmmap.agent.config import AgentConfig

    return AgentConfig(**{**dict(games=8, elites=2, batch_size=16, generations_per_chunk=2), **changes})
