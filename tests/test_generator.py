"""Tests of the random problem generator and the bundled problems (`jaxmmap.env.generator`)."""

from __future__ import annotations

import gzip
import itertools
import time

import jax
import numpy as np
import pytest

from jaxmmap.core.io import bundled
from jaxmmap.core.problem import Problem, ProblemError, check_problem, load_problem, save_problem
from jaxmmap.env.generator import BUNDLED_OPTIONS, Generator, GeneratorConfig, generate, make_bundled

FIELDS = ("size", "is_output", "target_time", "tensor_id", "alias_id", "live_start", "live_end",
          "demand", "benefit")

SEEDS = list(range(12))
OPTIONS = {
    "default": {},
    "latency_tables": dict(latency_tables=True),
    "latency_tables_wide": dict(latency_tables=True, max_inputs=10, skip_prob=0.9),
    "zero_demand": dict(zero_demand_prob=0.5),
    "oversize": dict(oversize_prob=0.3),
    "zero_supply": dict(zero_supply_prob=0.4),
    "all_zero": dict(zero_demand_prob=1.0, zero_supply_prob=1.0),
    "aliasing": dict(inplace_prob=0.8, loop_prob=0.3),
    "all_aliased": dict(inplace_prob=1.0, loop_prob=1.0, skip_prob=1.0),
    "no_skip": dict(skip_prob=0.0, max_inputs=1),
    "tight": dict(memory_fraction=0.05, size_sigma=3.0),
    "tiny_program": dict(num_instructions=1),
    "two_steps": dict(num_instructions=2, max_inputs=4, num_params=1),
    "everything": dict(num_instructions=100, latency_tables=True, zero_demand_prob=0.2,
                       oversize_prob=0.1, zero_supply_prob=0.2, inplace_prob=0.3,
                       loop_prob=0.1),
}


def assert_same(a: Problem, b: Problem) -> None:
    assert a.name == b.name
    assert a.memory_size == b.memory_size
    np.testing.assert_array_equal(a.supply, b.supply)
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype, f
        np.testing.assert_array_equal(x, y, err_msg=f)
    assert len(a.latency_tables) == len(b.latency_tables)
    for s, t in zip(a.latency_tables, b.latency_tables):
        assert s.step == t.step
        np.testing.assert_array_equal(s.buffers, t.buffers)
        np.testing.assert_array_equal(s.latency, t.latency)
    assert a.metadata == b.metadata


def tensor_ranges(p: Problem):
    """tensor -> (producing step or None for a parameter, sorted read steps, live range)."""
    out = {}
    for t in np.unique(p.tensor_id).tolist():
        m = p.tensor_id == t
        prod = p.target_time[m & p.is_output]
        reads = np.sort(p.target_time[m & ~p.is_output])
        rng = (int(p.live_start[m][0]), int(p.live_end[m][0]))
        out[t] = (int(prod[0]) if prod.size else None, reads, rng)
    return out


# ----------------------------------------------------------------------------- validity


@pytest.mark.parametrize("opts", list(OPTIONS.values()), ids=list(OPTIONS))
@pytest.mark.parametrize("seed", SEEDS)
def test_valid_problem(seed, opts):
    p = generate(seed, **opts)
    check_problem(p)  # raises on any broken rule
    T = opts.get("num_instructions", 64)
    assert p.num_steps == T
    assert p.num_buffers >= T  # at least one output buffer per instruction
    assert isinstance(p.memory_size, int) and p.memory_size >= 1
    assert np.all(np.diff(p.target_time) >= 0)
    # Exactly one output buffer per instruction, after its input buffers.
    np.testing.assert_array_equal(np.bincount(p.target_time[p.is_output], minlength=T),
                                  np.ones(T, dtype=np.int64))
    last_of_step = np.r_[p.target_time[1:] != p.target_time[:-1], True]
    np.testing.assert_array_equal(p.is_output, last_of_step)
    # Inputs of an instruction are distinct tensors, 1..max_inputs of them, all earlier ones.
    max_inputs = opts.get("max_inputs", 3)
    for t in range(T):
        m = (p.target_time == t) & ~p.is_output
        ins = p.tensor_id[m]
        assert 1 <= ins.size <= max_inputs
        assert len(set(ins.tolist())) == ins.size
        out_tensor = p.tensor_id[(p.target_time == t) & p.is_output][0]
        assert out_tensor not in set(ins.tolist())
    # Live ranges: [producer (0 for parameters), last read].
    for prod, reads, (ls, le) in tensor_ranges(p).values():
        assert ls == (0 if prod is None else prod)
        assert le == (reads[-1] if reads.size else ls)
        if prod is not None:
            assert np.all(reads > prod)
    # Tensor ids are dense, in order of first appearance.
    _, first = np.unique(p.tensor_id, return_index=True)
    np.testing.assert_array_equal(p.tensor_id[np.sort(first)], np.arange(first.size))
    # Sizes, demand, supply, benefit.
    assert np.all(p.size >= 256) and np.all(p.size % 256 == 0)
    assert np.all(p.demand >= 0) and np.all(np.isfinite(p.demand))
    assert np.all(p.supply >= 0) and np.all(np.isfinite(p.supply))
    assert np.all(p.benefit >= 0) and np.all(np.isfinite(p.benefit))
    # The supply is the step's time with its own buffers fast: at most its all-slow time.
    assert np.all(p.supply <= np.asarray(p.metadata["step_latency"]) * (1 + 1e-12))
    # Alias ids are dense 0..G-1 and every group has one size and at least two tensors.
    groups = np.unique(p.alias_id[p.alias_id >= 0])
    np.testing.assert_array_equal(groups, np.arange(groups.size))
    for g in groups.tolist():
        m = p.alias_id == g
        assert np.unique(p.size[m]).size == 1
        assert np.unique(p.tensor_id[m]).size >= 2
    # All buffers of a tensor share one alias id.
    for t in np.unique(p.tensor_id).tolist():
        assert np.unique(p.alias_id[p.tensor_id == t]).size == 1
    assert p.metadata["generator"] == "jaxmmap.generator"
    assert p.metadata["seed"] == seed
    for k, v in opts.items():
        assert p.metadata[k] == v


@pytest.mark.parametrize("seed", SEEDS)
def test_latency_tables(seed):
    p = generate(seed, latency_tables=True, max_inputs=10, skip_prob=0.8)
    assert len(p.latency_tables) == p.num_steps
    wide = 0
    for j, tab in enumerate(p.latency_tables):
        assert tab.step == j
        step_bufs = np.flatnonzero(p.target_time == j)
        k = tab.buffers.size
        assert k == min(8, step_bufs.size)
        wide += step_bufs.size > 8
        assert set(tab.buffers.tolist()) <= set(step_bufs.tolist())
        # The listed ones are the largest buffers of the instruction.
        left_out = np.setdiff1d(step_bufs, tab.buffers)
        if left_out.size:
            assert p.size[left_out].max() <= p.size[tab.buffers].min()
        lat = tab.latency
        assert lat.shape == (2 ** k,)
        assert np.all(np.isfinite(lat)) and np.all(lat >= 0)
        # Monotone: putting one more buffer in fast memory never makes it slower.
        for b in range(k):
            without = np.flatnonzero((np.arange(2 ** k) >> b) & 1 == 0)
            assert np.all(lat[without | (1 << b)] <= lat[without] + 1e-12)
        # All slow is the roofline of the original instruction; the supply is its time with
        # every buffer of the step fast (the table's, less the others' static benefits).
        assert lat[0] == pytest.approx(p.metadata["step_latency"][j], rel=1e-12)
        others = p.benefit[left_out].sum() if left_out.size else 0.0
        assert p.supply[j] == pytest.approx(lat[-1] - others, rel=1e-9, abs=1e-12)
    assert wide > 0  # some instruction had more than 8 buffers
    # Non-additive: the roofline saturates somewhere (compute bound with enough in fast memory).
    nonadditive = 0
    for tab in p.latency_tables:
        k = tab.buffers.size
        singles = np.array([tab.latency[0] - tab.latency[1 << b] for b in range(k)])
        nonadditive += not np.isclose(tab.latency[0] - tab.latency[-1], singles.sum())
    assert nonadditive > 0


def test_no_latency_tables_by_default():
    assert generate(0).latency_tables == ()


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("opts", [{}, OPTIONS["everything"]], ids=["default", "everything"])
def test_same_seed_same_problem(opts):
    assert_same(generate(5, **opts), generate(5, **opts))


def test_different_seeds_differ():
    problems = [generate(s) for s in range(8)]
    for i in range(len(problems)):
        for j in range(i + 1, len(problems)):
            a, b = problems[i], problems[j]
            assert a.name != b.name
            assert a.num_buffers != b.num_buffers or not np.array_equal(a.size, b.size)


def test_name_default_and_override():
    assert generate(3, num_instructions=10).name == "random-3-10"
    assert generate(3, name="mine").name == "mine"


def test_fast_and_large():
    generate(0, num_instructions=100)  # warm up
    t0 = time.perf_counter()
    p = generate(1, num_instructions=6000, latency_tables=True)
    elapsed = time.perf_counter() - t0
    assert p.num_buffers >= 16000
    assert elapsed < 2.0, elapsed  # typically ~0.05 s


# ----------------------------------------------------------------------------- structure


def test_skip_connections():
    def nonadjacent_reads(p):
        return sum(prod is not None and bool(np.any(reads > prod + 1))
                   for prod, reads, _ in tensor_ranges(p).values())

    for seed in range(6):
        with_skips = generate(seed, skip_prob=0.5, inplace_prob=0.0, loop_prob=0.0)
        assert nonadjacent_reads(with_skips) >= 3
        # Without skip connections, an output is read only by the next instruction (and
        # further operands are parameters).
        plain = generate(seed, skip_prob=0.0, inplace_prob=0.0, loop_prob=0.0)
        assert nonadjacent_reads(plain) == 0
        for prod, reads, _ in tensor_ranges(plain).values():
            if prod is not None:
                assert reads.size <= 1 and np.all(reads == prod + 1)


def test_parameters_live_from_step_zero():
    p = generate(2, num_instructions=50, num_params=4)
    params = [t for t, (prod, _, _) in tensor_ranges(p).items() if prod is None]
    assert 1 <= len(params) <= 4
    for t in params:
        assert np.all(p.live_start[p.tensor_id == t] == 0)
        assert not np.any(p.is_output[p.tensor_id == t])


def test_results_are_the_outputs_nobody_reads():
    p = generate(3, num_instructions=60, skip_prob=0.3)
    for t in np.unique(p.tensor_id):
        mine = p.tensor_id == t
        read = np.any(mine & ~p.is_output)
        assert np.all(p.live_out[mine] == (p.is_output[mine].any() and not read)), t
    assert p.live_out.any() and not p.live_out.all()


def test_no_aliasing_when_disabled():
    for seed in SEEDS:
        assert np.all(generate(seed, inplace_prob=0.0, loop_prob=0.0).alias_id == -1)


@pytest.mark.parametrize("opts", [dict(inplace_prob=0.9, loop_prob=0.0),
                                  dict(inplace_prob=0.0, loop_prob=0.5)],
                         ids=["inplace", "loops"])
def test_aliasing_when_likely(opts):
    for seed in SEEDS:
        p = generate(seed, **opts)
        groups = np.unique(p.alias_id[p.alias_id >= 0])
        assert groups.size >= 1
        for g in groups.tolist():
            m = p.alias_id == g
            assert np.unique(p.size[m]).size == 1
            # Every group holds the output of some instruction aliased to an operand of it.
            outs = np.flatnonzero(m & p.is_output)
            assert outs.size >= 1
            assert any(np.any(m & ~p.is_output & (p.target_time == p.target_time[o]))
                       for o in outs)


def test_loops_chain_several_instructions():
    p = generate(0, num_instructions=64, inplace_prob=0.0, loop_prob=0.2, max_loop_length=6)
    longest = 0
    for g in np.unique(p.alias_id[p.alias_id >= 0]).tolist():
        # Instructions writing into the group; a loop carry is updated by consecutive ones
        # (a group may join several loops, when a loop starts from another loop's value).
        steps = np.unique(p.target_time[(p.alias_id == g) & p.is_output])
        run = 1
        for a, b in zip(steps[:-1], steps[1:]):
            run = run + 1 if b == a + 1 else 1
            longest = max(longest, run)
    assert longest >= 3
    assert np.all(generate(0, inplace_prob=0.0, loop_prob=0.0).alias_id == -1)


def test_oversize():
    p = generate(0, oversize_prob=0.3)
    assert np.any(p.size > p.memory_size)
    assert np.all(generate(0).size <= generate(0).metadata["peak_live_bytes"])
    assert not np.any(generate(0, oversize_prob=0.0).size > generate(0).memory_size * 10)


def test_zero_demand_and_supply():
    p = generate(4, zero_demand_prob=0.5, zero_supply_prob=0.5)
    assert 0 < np.count_nonzero(p.demand == 0) < p.num_buffers
    assert 0 < np.count_nonzero(p.supply == 0) < p.num_steps
    q = generate(4)
    assert np.all(q.demand > 0) and np.all(q.supply > 0)
    # Zeroing does not disturb the rest of the draws.
    keep = p.demand > 0
    np.testing.assert_array_equal(p.demand[keep], q.demand[keep])
    keep = p.supply > 0
    np.testing.assert_array_equal(p.supply[keep], q.supply[keep])


def test_demand_and_supply_scales():
    p = generate(0, num_instructions=200)
    # Copying a typical buffer takes about one to a few instructions' worth of supply.
    ratio = np.median(p.demand) / np.median(p.supply)
    assert 0.5 < ratio < 10
    # Demand proportional to size; benefit at most the memory time saved (times the noise),
    # zero on compute-bound steps, scaled down where the step saturates at its compute time.
    np.testing.assert_allclose(p.demand, p.size / p.metadata["copy_bandwidth"])
    gain = p.size * (1 / p.metadata["slow_bandwidth"] - 1 / p.metadata["fast_bandwidth"])
    share = p.benefit / gain
    assert 0.1 < np.mean(share == 0) < 0.5 and 0.2 < np.median(share[share > 0]) < 1.5


def test_memory_fraction_orders_memory_size():
    fractions = [0.05, 0.2, 0.4, 0.7, 1.0, 2.0]
    for seed in range(6):
        sizes = [generate(seed, memory_fraction=f).memory_size for f in fractions]
        assert all(a < b for a, b in zip(sizes, sizes[1:])), sizes
        # 1.0 is the peak of live bytes: the everything-in-memory size.
        p = generate(seed, memory_fraction=1.0)
        assert p.memory_size == p.metadata["peak_live_bytes"]
        # Everything else is the same.
        q = generate(seed, memory_fraction=0.2)
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(p, f), getattr(q, f))


def test_peak_live_bytes():
    # Recompute the peak from the buffers: each alias group (or lone tensor) counted once over
    # the hull of its live ranges.
    for seed in range(4):
        p = generate(seed, inplace_prob=0.3, loop_prob=0.1)
        key = np.where(p.alias_id >= 0, p.alias_id, p.alias_id.max() + 1 + p.tensor_id)
        live = np.zeros(p.num_steps)
        for k in np.unique(key).tolist():
            m = key == k
            live[p.live_start[m].min():p.live_end[m].max() + 1] += p.size[m][0]
        assert p.metadata["peak_live_bytes"] == int(live.max())
        assert p.memory_size == int(0.5 * live.max())


def test_bad_options():
    for bad in (dict(num_instructions=0), dict(max_inputs=0), dict(skip_prob=1.5),
                dict(memory_fraction=0.0), dict(zero_demand_prob=-0.1),
                dict(fast_bandwidth=1.0, slow_bandwidth=2.0)):
        with pytest.raises(ValueError):
            generate(0, **bad)


# ----------------------------------------------------------------------------- files


@pytest.mark.parametrize("opts", [{}, OPTIONS["everything"]], ids=["default", "everything"])
def test_round_trip(tmp_path, opts):
    p = generate(11, **opts)
    path = tmp_path / "p.json.gz"
    save_problem(p, path)
    with gzip.open(path, "rt") as f:  # really gzipped
        assert f.read(1) == "{"
    assert_same(p, load_problem(path))


def test_bundled_tiny():
    p = bundled("tiny")
    check_problem(p)
    assert p.name == "tiny"
    assert 60 <= p.num_buffers <= 200
    assert 30 <= p.num_steps <= 50
    assert np.any(p.alias_id >= 0)
    # Skip connections: some output is read more than one step after it is produced.
    assert any(prod is not None and np.any(reads > prod + 1)
               for prod, reads, _ in tensor_ranges(p).values())
    # Fairly tight memory.
    assert p.memory_size < p.metadata["peak_live_bytes"]
    assert p.metadata["memory_fraction"] == 0.4
    # The bundled file is what its options generate (up to float printing).
    opts = dict(BUNDLED_OPTIONS["tiny"])
    q = generate(opts.pop("seed"), **opts)
    assert p.memory_size == q.memory_size
    np.testing.assert_allclose(p.supply, q.supply, rtol=1e-12)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(p, f), getattr(q, f), rtol=1e-12, err_msg=f)
    assert p.metadata == q.metadata


def test_bundled_missing():
    with pytest.raises(FileNotFoundError):
        bundled("no-such-problem")


def test_make_bundled(tmp_path):
    path = make_bundled("tiny", tmp_path)
    again = load_problem(path)
    assert_same(again, bundled("tiny"))
    # Reproducible bytes (no time stamp in the gzip header).
    first = open(path, "rb").read()
    make_bundled("tiny", tmp_path)
    assert open(path, "rb").read() == first


@pytest.mark.parametrize("seed", range(20))
def test_in_place_never_overwrites_a_live_value(seed):
    """Two tensors of one alias group share memory, so they may be live together only at the
    step where one is written over the other."""
    p = generate(seed, inplace_prob=0.5, loop_prob=0.3, skip_prob=0.5)
    ranges = {}
    for tid, a, s, e in zip(p.tensor_id, p.alias_id, p.live_start, p.live_end):
        if a >= 0:
            ranges.setdefault(int(a), {})[int(tid)] = (int(s), int(e))
    assert ranges
    for group in ranges.values():
        for (s1, e1), (s2, e2) in itertools.combinations(group.values(), 2):
            assert min(e1, e2) - max(s1, s2) <= 0, (group, seed)


def test_a_generator_is_called_with_a_seed_or_a_key_as_in_jumanji():
    config = GeneratorConfig(num_instructions=12, inplace_prob=0.4, latency_tables=True)
    make = Generator(config)
    assert make(3).to_json() == generate(3, num_instructions=12, inplace_prob=0.4, latency_tables=True).to_json()
    key = jax.random.key(5)
    assert make(key).to_json() == make(key).to_json()
    assert make(jax.random.key(6)).to_json() != make(key).to_json()
    with pytest.raises(ProblemError, match="inplace_prob"):
        Generator(GeneratorConfig(inplace_prob=1.5))
    with pytest.raises(ProblemError, match="no_such_option"):
        generate(0, no_such_option=1)
