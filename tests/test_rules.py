"""The game's units: ticks, columns, dense ids, copy_from and latency gains."""

import math

import numpy as np
import pytest

from jaxmmap import Rules, generate
from jaxmmap.core.problem import COPY, DROP, NOCOPY
from jaxmmap.core.rules import TICK_BUDGET, auto_columns, capacity_loss, discretize, exact_return, tick_scale


@pytest.mark.parametrize("total", [5e-324, 1e-300, 1e-9, 1.0, 12.5, 1e9, 1e300])
def test_tick_scale_is_a_power_of_two_within_budget(total):
    s = tick_scale(total)
    assert math.isfinite(s) and s > 0 and math.log2(s) == int(math.log2(s))
    assert s * total <= TICK_BUDGET
    if 1e-200 < total < 1e200:
        assert 2 * s * total > TICK_BUDGET  # the largest such power


def test_ticks_round_conservatively():
    p = generate(2, num_instructions=30, zero_demand_prob=0.2)
    d = discretize(p)
    assert np.all(d.supply <= p.supply * d.tick_scale)  # supply rounded down
    assert np.all(d.demand >= np.minimum(p.demand * d.tick_scale, TICK_BUDGET))  # demand up
    assert d.supply.sum() <= TICK_BUDGET and np.all(d.demand[p.demand == 0] == 0)


def test_columns_widths_and_usable_tail():
    p = generate(1, num_instructions=20, oversize_prob=0.2)
    for columns in (3, 64, 256):
        d = discretize(p, Rules(columns=columns))
        assert d.col_bytes == -(-p.memory_size // columns)
        assert d.usable_columns * d.col_bytes <= p.memory_size
        fits = d.width <= d.usable_columns
        assert np.all(d.width[fits] * d.col_bytes >= p.size[fits])
        assert np.all(p.size[~fits] > d.usable_columns * d.col_bytes)


def test_dense_ids_copy_from_and_gains():
    p = generate(4, num_instructions=30, inplace_prob=0.4, latency_tables=True)
    d = discretize(p)
    # Same alias id <=> same group; unaliased buffers each in a group of their own.
    for i in range(0, p.num_buffers, 7):
        same = (p.alias_id == p.alias_id[i]) if p.alias_id[i] >= 0 else (np.arange(p.num_buffers) == i)
        np.testing.assert_array_equal(d.group == d.group[i], same)
        np.testing.assert_array_equal(d.tensor == d.tensor[i], p.tensor_id == p.tensor_id[i])
    written = np.isin(p.tensor_id, p.tensor_id[p.is_output])
    np.testing.assert_array_equal(d.copy_from, p.live_start + written)
    for j, t in enumerate(p.latency_tables):
        np.testing.assert_allclose(d.gain[j, : t.latency.size], t.latency[0] - t.latency)


def test_capacity_loss_and_auto_columns():
    p = generate(0, num_instructions=400, memory_fraction=1.0)
    losses = [capacity_loss(p, c)["size_rounding"] for c in (128, 256, 512, 1024)]
    assert all(a >= b for a, b in zip(losses, losses[1:])) and losses[0] > 0
    c = auto_columns(p, max_loss=0.05)
    assert capacity_loss(p, c)["size_rounding"] <= 0.05 or c == 4096
    assert c == 256 or capacity_loss(p, c // 2)["size_rounding"] > 0.05


@pytest.mark.parametrize("seed", range(3))
def test_the_exact_return_is_the_sum_over_tables_in_their_order(seed):
    """`exact_return` builds every latency table's mask in one pass; it equals, to the last bit,
    the benefits of the placed buffers in no table plus each table's gain added in table order."""
    problem = generate(seed, num_instructions=150, latency_tables=True)
    d = discretize(problem)
    assert d.gain.shape[0] > 0
    rng = np.random.default_rng(seed)
    for _ in range(10):
        action = rng.choice([COPY, NOCOPY, DROP], problem.num_buffers)
        placed = action != DROP
        want = float(np.sum(problem.benefit[placed & (d.table < 0)]))
        for j in range(d.gain.shape[0]):
            want += float(d.gain[j, int(np.sum(np.left_shift(1, d.table_bit[placed & (d.table == j)])))])
        assert exact_return(problem, action, d) == want
