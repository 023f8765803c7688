"""The bundled benchmark suite: real programs, every instance valid and playable."""

import jax
import pytest

from jaxmmap import Rules, make_instance, to_solution, validate
from jaxmmap.core import suite as benchmarks
from jaxmmap.env.instance import stack
from jaxmmap.env.rollout import greedy_policy, rollout

FAMILIES = {"alexnet", "resnet", "mnasnet", "wavenet", "transformer", "lstm", "gru", "nmt",
            "alphatensor", "gpt"}


def test_suite_covers_the_paper_families_sizes_and_hardware():
    rows = benchmarks.info()
    assert len(rows) >= 20
    assert {r["family"] for r in rows} == FAMILIES
    assert len({r["hardware"] for r in rows}) >= 3
    sizes = [r["buffers"] for r in rows]
    assert min(sizes) <= 200 and max(sizes) >= 16000
    assert any(r["workload"].endswith("donated") for r in rows)
    assert all(r["memory_pressure"] > 1 for r in rows)  # every instance has decisions to make


def test_every_instance_loads_and_matches_the_index():
    for row in benchmarks.info():
        problem = benchmarks.load(row["name"])  # the loader checks every rule of the format
        assert (problem.num_buffers, problem.num_steps) == (row["buffers"], row["steps"])
        assert problem.metadata["hardware"]["name"] == row["hardware"]
    with pytest.raises(KeyError):
        benchmarks.load("no-such-instance")


def _play_all(names, rules):
    problems = [benchmarks.load(n) for n in names]
    shape = dict(num_buffers=max(p.num_buffers for p in problems),
                 num_steps=max(p.num_steps for p in problems),
                 num_tables=max(len(p.latency_tables) for p in problems))
    instances = stack([make_instance(p, rules, **shape) for p in problems])
    key = jax.random.key(0)
    states = jax.jit(jax.vmap(lambda inst: rollout(inst, key, greedy_policy, backup=True)))(instances)
    for k, problem in enumerate(problems):
        state = jax.tree.map(lambda x, k=k: x[k], states)
        assert bool(state.done) and not bool(state.lost), problem.name
        report = validate(problem, to_solution(problem, state, rules))
        assert report.ok, f"{problem.name}: {report}"
        assert float(state.board.ret) > 0, problem.name


def test_small_instances_play_to_the_end_with_valid_solutions():
    small = [r["name"] for r in benchmarks.info() if r["buffers"] <= 800]
    assert len(small) >= 5
    _play_all(small, Rules(columns=256))


@pytest.mark.slow
def test_every_instance_plays_to_the_end():
    for row in benchmarks.info():
        _play_all([row["name"]], Rules(columns=row["columns"]))
