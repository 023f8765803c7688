"""The XLA-style heuristic: valid plans, XLA's rules on hand-made cases, exact copy checks."""

from __future__ import annotations

import dataclasses
import heapq

import numpy as np
import pytest
from builders import RULES, make_problem

from jaxmmap import Rules, generate, validate
from jaxmmap.core import suite
from jaxmmap.core.io import bundled
from jaxmmap.core.problem import COPY, DROP, NOCOPY
from jaxmmap.core.rules import discretize
from jaxmmap.solvers import solve
from jaxmmap.solvers.exhaustive import exhaustive
from jaxmmap.solvers.heuristic import Memory, benefit_estimate, heuristic, plan, play_plan, removal_order
from jaxmmap.solvers.heuristic._items import ranked_items, sums_like_numpy, work_item_groups


@pytest.mark.parametrize("seed", range(12))
def test_plans_are_valid_on_generated_problems(seed):
    problem = generate(seed, num_instructions=30 + 5 * seed, inplace_prob=0.2, loop_prob=0.1,
                       memory_fraction=0.3, latency_tables=seed % 2 == 1)
    result = heuristic(problem, 10, 0, rules=RULES)
    report = validate(problem, result.solution)
    assert report.ok, str(report)
    assert result.solution.ret == pytest.approx(report.recomputed_return)
    assert result.info["placed"] == int(np.sum(result.solution.action != DROP))
    assert result.solution.ret >= result.info["plan_return"]
    assert result.info["moves"][1] == 64  # the budget allowed every move


def test_game_replay_is_a_game_solution_and_best_takes_the_better():
    problem = bundled("tiny")
    plan_only = heuristic(problem, 10, 0, rules=RULES)
    both = heuristic(problem, 10, 0, rules=RULES, mode="best")
    game = play_plan(problem, plan(problem, RULES, pins=both.info["chosen"]).action, RULES)  # the best plan's
    assert validate(problem, game).ok
    assert both.info["game_return"] == pytest.approx(game.ret)
    assert both.solution.ret == pytest.approx(max(game.ret, plan_only.solution.ret))
    assert 0 < both.info["followed"] <= problem.num_buffers
    with pytest.raises(ValueError, match="mode"):
        heuristic(problem, 1, 0, mode="xla")


def test_a_planned_copy_of_an_output_falls_back_to_drop_not_to_a_pin():
    """In the replay, a planned Copy of an output that the game cannot play is dropped: its
    NoCopy would pin the tensor for its whole life (with the pin next, 24 to 30 of these outputs
    were pinned here)."""
    problem = generate(0, num_instructions=60, memory_fraction=0.15, inplace_prob=0.0)  # (no alias
    # groups: only a pin forbids Drop, and an output is its tensor's first buffer)
    played = play_plan(problem, np.full(problem.num_buffers, COPY, np.int32),
                       Rules(columns=128, placement="deferred")).action
    out = np.asarray(problem.is_output)
    assert not np.any(out & (played == NOCOPY)) and np.sum(out & (played == DROP)) > 10


@pytest.mark.parametrize("seed", [0, 1, 2, 4])
def test_game_replay_never_beats_the_game_optimum(seed):
    problem = generate(seed, num_instructions=4 + seed % 3, inplace_prob=0.3,
                       memory_fraction=0.4, copy_bandwidth=1e6)
    best = exhaustive(problem, 60, 0, rules=RULES).solution.ret
    game = heuristic(problem, 10, 0, rules=RULES, mode="game").solution
    assert validate(problem, game).ok
    assert game.ret <= best + 1e-9


def test_beats_random_on_the_bundled_instance():
    problem = bundled("tiny")
    rules = Rules(columns=64)
    ours = solve(problem, "heuristic", budget_s=10, rules=rules).solution.ret
    rand = solve(problem, "random", budget_s=1e-6, seed=0, rules=rules).solution.ret  # 256 games
    assert ours > rand


# ----------------------------------------------------------------------------- XLA's rules


def _one_weight(gap_supply, *, demand=1.0, benefit=1.0):
    """One weight (a program input) read at steps 2 and 2 + len(gap_supply) + 1."""
    supply = [1.0, 1.0, 1.0] + list(gap_supply) + [1.0]
    second = len(supply) - 1
    return make_problem([dict(t=2, tensor=1, demand=demand, benefit=benefit),
                         dict(t=second, tensor=1, demand=demand, benefit=benefit)],
                        memory=100, supply=supply)


def test_near_uses_keep_the_tensor_and_far_uses_prefetch_again():
    near = plan(_one_weight([1.0] * 4), RULES).solution  # gap of 5 copies <= 10: keep
    assert list(near.action) == [COPY, NOCOPY]
    far = plan(_one_weight([1.0] * 20), RULES).solution  # 21 copies > 10: evict, prefetch
    assert list(far.action) == [COPY, COPY]
    assert validate(_one_weight([1.0] * 20), far).ok


def test_prefetch_starts_at_the_preferred_overlap():
    # Uniform supply 1 per step, demand 2: the preferred overlap 1.5 * 2 = 3 steps of copy.
    problem = make_problem([dict(t=9, demand=2.0)], memory=100, supply=[1.0] * 10)
    solution = plan(problem, RULES).solution
    assert (solution.copy_start[0], solution.copy_end[0]) == (6, 8)
    assert solution.alloc_start[0] == 6
    tight = plan(problem, RULES, preferred_overlap=1.0).solution
    assert (tight.copy_start[0], tight.copy_end[0]) == (7, 8)


def test_more_memory_bound_buffers_go_first():
    # Two inputs at the same step, room for one: benefit per sqrt(size) decides.
    problem = make_problem([dict(t=3, size=60, benefit=4.0), dict(t=3, size=30, benefit=3.0)],
                           memory=80, supply=[1.0] * 5)
    solution = plan(problem, RULES).solution
    assert list(solution.action) == [DROP, COPY]  # 3 / sqrt(30) > 4 / sqrt(60)


def test_best_fit_takes_the_smallest_hole():
    memory = Memory(discretize(make_problem([dict(t=0)], memory=32, supply=[1.0] * 4),
                                Rules(columns=32)), 4)
    memory.take(0, 3, 0, 4)     # columns 0-3 used: hole 4-9 (6 columns) before the next use
    memory.take(0, 3, 10, 12)   # columns 10-21 used: hole 22-31 (10 columns)
    assert memory.best_fit(np.arange(4), 5) == 4
    assert memory.best_fit(np.arange(4), 7) == 22
    assert memory.best_fit(np.arange(4), 11) == -1


@pytest.mark.parametrize("seed,steps", [(0, 6), (1, 6), (2, 6), (3, 400), (4, 400), (5, 400)])
def test_best_fit_matches_a_scan_of_the_columns(seed, steps):
    """Short programs read the rows; long spans (400 steps) read the block summaries, which
    `release` keeps exact."""
    rng = np.random.default_rng(seed)
    memory = Memory(discretize(make_problem([dict(t=0)], memory=40, supply=[1.0] * steps),
                               Rules(columns=40)), steps)
    taken = []
    for _ in range(int(rng.integers(0, 12 if steps < 64 else 60))):
        a = int(rng.integers(steps))
        taken.append((a, int(rng.integers(a, min(steps, a + 1 + int(rng.integers(1, 300))))),
                      int(rng.integers(40)), int(rng.integers(1, 8))))
        memory.take(*taken[-1])
    for k in rng.permutation(len(taken))[: len(taken) // 3]:  # taken back, as `undo` does
        memory.release(*taken[k])
        for other in taken[:k] + taken[k + 1:]:  # (overlapping takes keep their cells)
            memory.take(*other)
    for _ in range(50):
        a = int(rng.integers(steps))
        span = np.arange(a, int(rng.integers(a, steps)) + 1)
        span = span if rng.integers(3) else np.sort(rng.choice(steps, min(steps, 5), replace=False))
        width, lowest = int(rng.integers(1, 42)), bool(rng.integers(2))
        free = ~memory.occ[span, :40].any(axis=0)
        runs = [(s, e - s) for s in range(40) for e in [s + int(np.argmin(np.append(free[s:], False)))]
                if free[s] and (s == 0 or not free[s - 1])]  # (start, length) of each free run
        fits = [(n, s) for s, n in runs if n >= width]
        want = -1 if not fits else (min(s for _, s in fits) if lowest else min(fits)[1])
        assert memory.best_fit(span, width, lowest=lowest) == want
        if span[-1] - span[0] + 1 == span.size:  # (`span_fit`: the same over a step range)
            assert memory.span_fit(int(span[0]), int(span[-1]), width, lowest=lowest) == want
    assert memory.span_fit(3, 2, 40) == memory.best_fit(np.arange(0), 40) == 0  # no steps: all free


def test_plans_sharing_a_problem_match_a_plan_of_their_own():
    """The plans of one `prepared` problem share what depends on it alone (prefetch starts,
    worths, work items): a plan made after others equals one made from scratch."""
    problem = generate(3, num_instructions=200)
    rules = Rules(columns=64)
    d = discretize(problem, rules)
    prepared = (d, benefit_estimate(problem, d))
    first = plan(problem, rules, prepared=prepared)
    plan(problem, rules, prepared=prepared, pins="never", preferred_overlap=2.0)
    decisions = first.action.copy()
    decisions[::3] = DROP
    shared = plan(problem, rules, prepared=prepared, decisions=decisions)
    alone = plan(problem, rules, decisions=decisions)
    for field in ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end"):
        np.testing.assert_array_equal(getattr(shared.solution, field), getattr(alone.solution, field))
    assert shared.solution.ret == alone.solution.ret


def test_sums_like_numpy_equal_numpy_to_the_last_bit():
    """Runs of 1 to 20 values, summed together, equal NumPy's sum of each run alone (which adds
    8 or more in pairs, and fewer in a row)."""
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 21, 400)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    values = rng.lognormal(0, 2, int(counts.sum())) * rng.choice([-1.0, 1.0], int(counts.sum()))
    sums = sums_like_numpy(values, starts, counts)
    assert [float(x) for x in sums] == [float(np.sum(values[a:a + n])) for a, n in zip(starts, counts)]


@pytest.mark.parametrize("seed", range(3))
def test_the_items_are_ranked_as_one_key_an_item_ranks_them(seed):
    """`ranked_items` (the keys of all items at once) orders the items as sorting them by each
    item's own key does, with the noisy moves' estimates too (ties broken to the last bit: the
    suite program's items of three equal uses tie but for the sum's last bit)."""
    problem = suite.load("gpt_small_train@tpu_v4i-30") if seed == 0 else generate(seed, num_instructions=300,
                                                                                  inplace_prob=0.3)
    d = discretize(problem, RULES)
    rng = np.random.default_rng(seed)
    size = problem.size.astype(np.float64)

    def key(members, est):
        s = float(size[members].max())
        length = int(problem.live_end[members].max() - problem.live_start[members].min() + 1)
        return (-float(np.sum(est[members])) / np.sqrt(max(s, 1.0)), -s, -length, int(members[0]))

    for noise in (0.0, 0.35):
        est = benefit_estimate(problem, d) * rng.lognormal(0.0, noise, problem.num_buffers)
        expected = sorted(work_item_groups(problem, d)[1], key=lambda m: key(m, est))  # noqa: B023
        ranked = ranked_items(problem, d, est)
        assert [m.tolist() for m in ranked] == [m.tolist() for m in expected]


def _edf_feasible(supply, copies):
    """Reference: preemptive earliest-deadline-first over integer supply."""
    jobs = sorted(copies)
    heap, k, left = [], 0, {}
    for t, s in enumerate(supply):
        while k < len(jobs) and jobs[k][0] <= t:
            heapq.heappush(heap, (jobs[k][1], k))
            left[k] = jobs[k][2]
            k += 1
        while heap and s > 0:
            _, q = heap[0]
            give = min(s, left[q])
            left[q] -= give
            s -= give
            if left[q] == 0:
                heapq.heappop(heap)
        if heap and heap[0][0] <= t:
            return False
    return not heap and k == len(jobs)


@pytest.mark.parametrize("seed", range(20))
def test_copy_check_is_exact_edf(seed):
    rng = np.random.default_rng(seed)
    T = 8
    problem = make_problem([dict(t=0)], memory=32, supply=rng.integers(0, 4, T).astype(float))
    d = discretize(problem, RULES)
    memory = Memory(d, T)
    accepted = []
    for _ in range(12):
        a = int(rng.integers(0, T))
        b = min(T - 1, a + int(rng.integers(0, 3)))
        demand = int(rng.integers(1, 3)) * int(d.supply.max() // 3 + 1)
        # a copy may not share an edge (two steps) with a multi-step one (equation 6)
        shares = [max(a, a2) < min(b, b2) for a2, b2, _ in accepted]
        if a < b:
            assert (memory.uncovered_from(b) > a) == any(shares)
        if any(shares):
            assert not memory.copy_fits(a, b, demand)
            continue
        expected = _edf_feasible(d.supply, accepted + [(a, b, demand)])
        assert memory.copy_fits(a, b, demand) == expected
        if expected:
            memory.add_copy(a, b, demand)
            accepted.append((a, b, demand))


def test_removing_copies_restores_the_engine():
    memory = Memory(discretize(make_problem([dict(t=0)], memory=32, supply=[2.0] * 8), RULES), 8)

    def engine():
        return [list(x) for x in (memory.cover, memory.start_of, memory.singles, memory.copies)]

    before = engine()
    memory.add_copy(1, 3, 1)
    memory.add_copy(5, 5, 1)
    memory.add_copy(4, 6, 1)
    assert not memory.copy_fits(2, 4, 1) and memory.uncovered_from(6) == 6
    memory.remove_copy(4, 6, 1)
    memory.remove_copy(5, 5, 1)
    memory.remove_copy(1, 3, 1)
    assert engine() == before and memory.uncovered_from(8) == 0
    assert memory.copy_fits(2, 4, 1)


# ----------------------------------------------------------------------------- pins


def _pinned(problem, solution) -> np.ndarray:
    """The outputs a solution pins (NoCopy of an output)."""
    return (solution.action == NOCOPY) & problem.is_output


def _generated(seed, **changes):
    options = dict(num_instructions=20 + 4 * seed, inplace_prob=0.3, loop_prob=0.1,
                   memory_fraction=0.5, copy_bandwidth=2e5, latency_tables=seed % 2 == 1)
    return generate(seed, **{**options, **changes})


@pytest.mark.parametrize("pins", ["never", "compare", "first", "first-kept", "only"])
@pytest.mark.parametrize("seed", range(6))
def test_every_pin_mode_plans_validly(seed, pins):
    problem = _generated(seed)
    solution = plan(problem, RULES, pins=pins).solution
    report = validate(problem, solution)
    assert report.ok, str(report)
    assert solution.ret == pytest.approx(report.recomputed_return)
    assert not np.any(_pinned(problem, solution) & problem.live_out)
    if pins == "never":
        assert not _pinned(problem, solution).any()


@pytest.mark.parametrize("seed", range(6))
def test_heuristic_returns_at_least_the_pinning_greedy(seed):
    problem = _generated(seed)
    ours = solve(problem, "heuristic", budget_s=30, rules=RULES)
    greedy = solve(problem, "pinning", budget_s=30, rules=RULES)
    assert ours.solution.ret >= greedy.solution.ret - 1e-9
    assert ours.info["plan_returns"]["only"] == pytest.approx(greedy.solution.ret)
    assert ours.info["plan_return"] == pytest.approx(max(ours.info["plan_returns"].values()))
    assert ours.solution.ret >= ours.info["plan_return"]  # local moves only ever improve


def test_heuristic_beats_the_pinning_greedy_and_the_older_plan_on_the_bundled_instance():
    problem = bundled("tiny")
    ours = solve(problem, "heuristic", budget_s=30).solution
    greedy = solve(problem, "pinning", budget_s=30).solution
    older = solve(problem, "heuristic", budget_s=30, rules=Rules(output_nocopy=False)).solution
    assert ours.ret > greedy.ret and ours.ret > older.ret
    assert _pinned(problem, ours).any()


def _long_lived_output():
    """One tensor written at step 1 and read at steps 2, 4, 6 and 8, with copies far too slow to
    copy it out or back in: only a pin places it (and it then places all four buffers)."""
    return make_problem([dict(t=1, out=True, tensor=7, live=(1, 8), demand=50.0, benefit=1.0)]
                        + [dict(t=t, tensor=7, live=(1, 8), demand=50.0, benefit=2.0) for t in (2, 4, 6, 8)],
                        memory=100, supply=[1.0] * 10)


def test_pins_the_tensor_when_no_copy_can_serve_it():
    problem = _long_lived_output()
    result = heuristic(problem, 10, 0, rules=RULES)
    solution = result.solution
    assert validate(problem, solution).ok
    assert list(solution.action) == [NOCOPY] * 5
    assert (solution.alloc_start[0], solution.alloc_end[0]) == (1, 8)  # the whole live range
    assert np.all(solution.alloc_start[1:] == -1) and np.all(solution.copy_start == -1)
    assert solution.ret == pytest.approx(9.0) and result.info["pins"] == 1
    assert plan(problem, RULES, pins="never").solution.ret == 0.0  # without the pin: nothing


def test_pins_what_xla_would_keep_and_copies_what_it_would_evict():
    # Both tensors can be copied out and back in (fast copies); the first is read right after
    # its write (XLA keeps it: pinned), the second after a gap of 20 copy times (evicted).
    kept = [dict(t=1, out=True, tensor=1, live=(1, 2), demand=0.5), dict(t=2, tensor=1, live=(1, 2), demand=0.5)]
    far = [dict(t=3, out=True, tensor=2, live=(3, 24), demand=1.0), dict(t=24, tensor=2, live=(3, 24), demand=1.0)]
    problem = make_problem(kept + far, memory=100, supply=[1.0] * 26)
    solution = plan(problem, RULES).solution
    assert validate(problem, solution).ok
    assert list(solution.action) == [NOCOPY, NOCOPY, COPY, COPY]


def test_never_pins_a_live_out_tensor():
    problem = _long_lived_output()
    live_out = dataclasses.replace(problem, live_out=np.ones(problem.num_buffers, bool))
    solution = heuristic(live_out, 10, 0, rules=RULES).solution
    assert validate(live_out, solution).ok
    assert not _pinned(live_out, solution).any() and solution.ret == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_never_pins_under_the_older_rules(seed):
    older = Rules(columns=32, output_nocopy=False)
    problem = _generated(seed)
    result = heuristic(problem, 10, 0, rules=older)
    assert validate(problem, result.solution).ok
    assert not _pinned(problem, result.solution).any()
    assert list(result.info["plan_returns"]) == ["never"]
    assert result.info["plan_return"] == pytest.approx(plan(problem, older, pins="never").solution.ret)
    assert result.solution.ret >= result.info["plan_return"]
    with_pins = heuristic(problem, 10, 0, rules=RULES)
    assert with_pins.solution.ret >= plan(problem, RULES, pins="never").solution.ret - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_the_removal_order_is_the_per_item_order_to_the_last_bit(seed):
    """`removal_order` sums each work item's estimates vectorised, as NumPy sums them one item at a
    time: its order equals that of the per-item loop it replaced, ties included (the local moves
    ruin these items, so a different tie-break would be a different search). The suite's
    gpt_small_train has items whose scores differ in the last bit only: a sum in another order
    (`np.add.reduceat`'s) orders them otherwise."""
    problem = suite.load("gpt_small_train@tpu_v4i-30") if seed == 0 else generate(
        seed, num_instructions=120 + 40 * seed, inplace_prob=0.3, latency_tables=seed % 2 == 1)
    d = discretize(problem, RULES)
    rng = np.random.default_rng(seed)
    key = np.where(problem.alias_id >= 0, d.group, -1 - d.tensor)
    for k in range(20):
        action = rng.choice([COPY, NOCOPY, DROP], problem.num_buffers, p=[0.3, 0.2, 0.5] if k % 2 else [0.7, 0.2, 0.1])
        estimate = benefit_estimate(problem, d) * np.exp(0.35 * rng.standard_normal(problem.num_buffers) * (k % 3 > 0))
        if k % 4 == 0:  # equal estimates within items: many ties
            estimate = np.round(estimate, 1)
        placed, scored = action != DROP, []
        for members in (np.flatnonzero(key == g) for g in np.unique(key)):
            if placed[members].any():
                area = float(problem.size[members].max()) * float(
                    problem.live_end[members].max() - problem.live_start[members].min() + 1)
                scored.append((float(estimate[members][placed[members]].sum()) / max(area, 1.0), int(members[0]),
                               members))
        want = [m for _, _, m in sorted(scored, key=lambda row: row[:2])]
        got = removal_order(problem, d, estimate, action)
        assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want))
