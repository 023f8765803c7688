"""Tests of the independent validator (`jaxmmap.core.validator`) on small hand-made problems."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest
from builders import make_problem, make_solution

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.validator import MAX_LISTED, Report, Violation, validate

C, N_, D = COPY, NOCOPY, DROP
NONE = (-1, -1)


def all_drop(problem):
    return make_solution(problem, [(D, -1, NONE, NONE)] * problem.num_buffers, ret=0.0)


def rules(report: Report) -> set[str]:
    return {v.rule for v in report.violations}


# The base case: memory 200 bytes, 10 steps with supply 1 each.
BASE_BUFFERS = [
    dict(size=40, t=3, tensor=0, demand=2.0, benefit=5.0),                         # 0
    dict(size=30, t=4, out=True, tensor=1, live=(4, 9), demand=1.5, benefit=2.5),  # 1
    dict(size=40, t=5, tensor=0, demand=1.0, benefit=1.0),                         # 2
    dict(size=40, t=5, tensor=0, demand=1.0, benefit=0.5),                         # 3
    dict(size=50, t=6, tensor=2, demand=1.0, benefit=4.0),                         # 4
    dict(size=20, t=7, tensor=3, alias=7, benefit=1.5),                            # 5
    dict(size=20, t=8, tensor=4, alias=7, benefit=0.5),                            # 6
]
BASE_ROWS = [
    (C, 0, (1, 3), (1, 2)),    # input copied in over steps 1-2 (demand 2 = supply 2)
    (C, 40, (4, 6), (5, 6)),   # output copied out after its write
    (N_, 0, (4, 5), NONE),     # extends buffer 0's allocation at the same offset
    (N_, 0, NONE, NONE),       # tensor 0 is in fast memory at step 5 (buffer 2)
    (D, -1, NONE, NONE),
    (C, 70, (7, 7), NONE),     # alias group 7, zero demand: no copy
    (C, 70, (8, 8), NONE),
]


@pytest.fixture
def base():
    return make_problem(BASE_BUFFERS)


def mutate(problem, rows_changes, ret=None, allow_nocopy_move=False, **kwargs):
    rows = list(BASE_ROWS)
    for i, row in rows_changes.items():
        rows[i] = row
    return validate(problem, make_solution(problem, rows, ret, **kwargs),
                    allow_nocopy_move=allow_nocopy_move)


# ----------------------------------------------------------------------------- valid solutions


def test_valid_hand_made_solution(base):
    report = validate(base, make_solution(base, BASE_ROWS))
    assert report.ok, str(report)
    assert report.violations == ()
    assert report.recomputed_return == pytest.approx(11.0)
    assert str(report) == "valid (return 11)"


def test_return_is_recomputed_even_when_declared_wrong(base):
    report = validate(base, make_solution(base, BASE_ROWS, ret=3.0))
    assert rules(report) == {"return"}
    assert report.recomputed_return == pytest.approx(11.0)
    assert not report.ok
    assert "return" in str(report)


def test_return_tolerance(base):
    assert validate(base, make_solution(base, BASE_ROWS, ret=11.0 + 1e-7)).ok
    assert not validate(base, make_solution(base, BASE_ROWS, ret=11.0 + 1e-3)).ok
    assert validate(base, make_solution(base, BASE_ROWS, ret=11.0 + 1e-3), rtol=1e-3).ok


def test_latency_tables():
    # Buffers 0 and 1 at step 2 share a table; their file benefits (100) are not used.
    p = make_problem(
        [dict(t=2, benefit=100.0), dict(t=2, benefit=100.0), dict(t=3, benefit=2.0),
         dict(t=4, benefit=7.0)],
        tables=[(2, [0, 1], [10.0, 7.0, 6.0, 2.0]), (4, [3], [5.0, 1.5])])
    rows = [(C, 0, (2, 2), NONE), (D, -1, NONE, NONE), (C, 10, (3, 3), NONE),
            (D, -1, NONE, NONE)]
    report = validate(p, make_solution(p, rows, ret=(10.0 - 7.0) + 2.0))
    assert report.ok, str(report)
    assert report.recomputed_return == pytest.approx(5.0)

    rows = [(C, 0, (2, 2), NONE), (C, 10, (2, 2), NONE), (D, -1, NONE, NONE),
            (C, 0, (4, 4), NONE)]
    report = validate(p, make_solution(p, rows, ret=(10.0 - 2.0) + (5.0 - 1.5)))
    assert report.ok, str(report)
    assert report.recomputed_return == pytest.approx(11.5)

    # Declaring the static benefits instead is wrong.
    report = validate(p, make_solution(p, rows, ret=207.0))
    assert rules(report) == {"return"}


def test_all_drop_is_valid_with_return_zero(base):
    p2 = make_problem([dict(t=2, benefit=100.0), dict(t=2, benefit=-3.0)],
                      tables=[(2, [0, 1], [10.0, 7.0, 6.0, 2.0])])
    for p in (base, p2):
        report = validate(p, all_drop(p))
        assert report.ok, str(report)
        assert report.recomputed_return == 0.0
        assert str(report) == "valid (return 0)"


def test_overlap_allowed_within_alias_group(base):
    # Buffers 5 and 6 (alias group 7, one offset) overlap in time at step 8.
    report = mutate(base, {5: (C, 70, (7, 8), NONE)})
    assert report.ok, str(report)


def test_overlap_allowed_for_same_tensor_at_same_offset():
    p = make_problem([dict(size=40, t=3, tensor=0, demand=2.0),
                      dict(size=40, t=5, tensor=0, demand=0.0)])
    rows = [(C, 0, (1, 3), (1, 2)), (C, 0, (2, 5), NONE)]
    assert validate(p, make_solution(p, rows)).ok
    # The same tensor at another, overlapping, offset is two copies of the data: an overlap.
    rows = [(C, 0, (1, 3), (1, 2)), (C, 10, (2, 5), NONE)]
    assert rules(validate(p, make_solution(p, rows))) == {"overlap"}


def test_zero_size_buffers_overlap_nothing():
    p = make_problem([dict(size=40, t=3), dict(size=0, t=3)])
    rows = [(C, 0, (3, 3), NONE), (C, 10, (3, 3), NONE)]
    assert validate(p, make_solution(p, rows)).ok


def test_touching_allocations_do_not_overlap():
    p = make_problem([dict(size=40, t=3), dict(size=40, t=3), dict(size=40, t=4)])
    # Adjacent in bytes at the same step, and adjacent in time at the same bytes.
    rows = [(C, 0, (3, 3), NONE), (C, 40, (3, 3), NONE), (C, 0, (4, 4), NONE)]
    assert validate(p, make_solution(p, rows)).ok


def test_copies_may_share_one_step():
    p = make_problem([dict(t=5, demand=1.0), dict(t=6, demand=1.0)], supply=[10.0] * 10)
    rows = [(C, 0, (2, 5), (2, 4)), (C, 10, (4, 6), (4, 5))]
    assert validate(p, make_solution(p, rows)).ok


def test_another_solvers_choices_pass(base):
    # Copy earlier than the game would, with a larger allocation, at other offsets.
    rows = list(BASE_ROWS)
    rows[0] = (C, 100, (0, 3), (0, 1))
    rows[2] = (N_, 100, (4, 5), NONE)
    rows[3] = (N_, 100, NONE, NONE)
    rows[1] = (C, 0, (4, 8), (6, 7))
    assert validate(base, make_solution(base, rows)).ok


def _pin_case():
    # Output 0 (tensor 0, live [2, 7]) is written into fast memory and kept: no copy at all. Its
    # uses at steps 4 and 7 are served from that allocation.
    p = make_problem([dict(t=2, out=True, tensor=0, live=(2, 7), demand=1.0, benefit=2.0),
                      dict(t=4, tensor=0, live=(2, 7), demand=1.0),
                      dict(t=7, tensor=0, live=(2, 7), demand=1.0)])
    rows = [(N_, 0, (2, 7), NONE), (N_, 0, NONE, NONE), (N_, 0, NONE, NONE)]
    return p, rows


def test_pinned_output_and_its_uses():
    p, rows = _pin_case()
    report = validate(p, make_solution(p, rows))
    assert report.ok, report
    assert report.recomputed_return == 4.0


PIN_VIOLATIONS = {
    "later Copy": ({1: (C, 20, (3, 4), (3, 3))}, {}, {"slow_memory"}),
    "later Drop": ({2: (D, -1, NONE, NONE)}, {}, {"slow_memory"}),
    "live-out": ({}, dict(live_out=True), {"slow_memory"}),
    "short pin": ({0: (N_, 0, (2, 5), NONE)}, {}, {"alloc", "nocopy_predecessor"}),
    "pin before its write": ({0: (N_, 0, (3, 7), NONE)}, {}, {"alloc", "nocopy_predecessor"}),
    "pin with a copy": ({0: (N_, 0, (2, 7), (3, 4))}, {}, {"nocopy_copy"}),
}


@pytest.mark.parametrize("case", PIN_VIOLATIONS)
def test_planted_pin_violations(case):
    p, rows = _pin_case()
    changes, problem_changes, expected = PIN_VIOLATIONS[case]
    if problem_changes:
        p = dataclasses.replace(p, live_out=np.full(3, problem_changes["live_out"]))
    for i, row in changes.items():
        rows[i] = row
    report = validate(p, make_solution(p, rows))
    assert rules(report) == expected, report
    first = {"later Copy": 1, "later Drop": 2}.get(case, 0)
    assert report.violations[0].buffer == first


# ----------------------------------------------------------------------------- planted violations


def test_problem_name_and_lengths(base):
    report = mutate(base, {}, name="other")
    assert rules(report) == {"problem_name"}
    sol = make_solution(base, BASE_ROWS[:-1], ret=10.5)
    report = validate(base, sol)
    assert "length" in rules(report)
    assert not report.ok


def test_invalid_action(base):
    report = mutate(base, {4: (7, -1, NONE, NONE)}, ret=11.0)
    assert rules(report) == {"action"}
    assert report.violations[0].buffer == 4


def test_drop_with_offset(base):
    report = mutate(base, {4: (D, 100, NONE, NONE)})
    assert rules(report) == {"drop"}
    assert report.violations[0].buffer == 4
    report = mutate(base, {4: (D, -1, (5, 6), (5, 5))})
    assert rules(report) == {"drop"}


@pytest.mark.parametrize("offset", [180, -10])
def test_offset_out_of_memory(base, offset):
    report = mutate(base, {1: (C, offset, (4, 6), (5, 6))})
    assert rules(report) == {"offset"}
    assert report.violations[0].buffer == 1


def test_alias_group_split_placed_and_dropped(base):
    report = mutate(base, {6: (D, -1, NONE, NONE)})
    assert rules(report) == {"alias_mixed"}
    assert report.violations[0].buffer == 5


def test_alias_group_two_offsets(base):
    report = mutate(base, {6: (C, 100, (8, 8), NONE)})
    assert rules(report) == {"alias_offset"}


def test_overlap_of_different_groups(base):
    # Buffer 1 at bytes [30, 60) over steps 4-6 hits buffer 2 at [0, 40) over steps 4-5.
    report = mutate(base, {1: (C, 30, (4, 6), (5, 6))})
    assert rules(report) == {"overlap"}
    (v,) = report.violations
    assert v.buffer == 1
    assert "buffers 1 and 2" in v.message


def test_overlap_listing_is_capped():
    n = 20
    p = make_problem([dict(t=0) for _ in range(n)])
    report = validate(p, make_solution(p, [(C, 0, (0, 0), NONE)] * n))
    overlaps = [v for v in report.violations if v.rule == "overlap"]
    assert len(overlaps) == MAX_LISTED + 1
    assert overlaps[-1].buffer == -1
    assert str(n * (n - 1) // 2) in overlaps[-1].message
    listed = {(v.buffer, int(v.message.split()[3])) for v in overlaps[:-1]}
    assert len(listed) == MAX_LISTED


def test_alloc_of_copy_must_contain_target(base):
    report = mutate(base, {0: (C, 0, (1, 2), (1, 2))})
    assert "alloc" in rules(report)
    report = mutate(base, {0: (C, 0, (3, 1), (1, 2))})
    assert "alloc" in rules(report)


def test_copy_interval_wrong_shape(base):
    assert rules(mutate(base, {0: (C, 0, (1, 3), (2, 1))})) == {"copy_interval"}
    # Missing although the demand is positive.
    assert rules(mutate(base, {0: (C, 0, (1, 3), NONE)})) == {"copy_interval"}
    # Before the allocation starts.
    assert rules(mutate(base, {0: (C, 0, (2, 3), (1, 2))})) == {"copy_interval"}


def test_copy_after_target_for_an_input(base):
    report = mutate(base, {0: (C, 0, (1, 4), (3, 4))})
    assert "copy_interval" in rules(report)
    assert report.violations[0].buffer == 0


def test_copy_before_write_for_an_output(base):
    report = mutate(base, {1: (C, 40, (4, 6), (4, 6))})
    assert rules(report) == {"copy_interval"}
    # After the allocation ends.
    report = mutate(base, {1: (C, 40, (4, 6), (6, 7))})
    assert rules(report) == {"copy_interval"}


def test_input_copy_while_its_tensor_is_written():
    """A tensor written at step 2 can be copied from step 3 on; a parameter from its live start."""
    p = make_problem([dict(t=2, out=True, tensor=0, live=(2, 9)), dict(t=5, tensor=0, live=(2, 9),
                                                                       demand=2.0),
                      dict(t=5, tensor=1, live=(0, 9), demand=2.0)], supply=np.full(10, 1.0))
    early = [(D, -1, NONE, NONE), (C, 0, (2, 5), (2, 4)), (D, -1, NONE, NONE)]
    report = validate(p, make_solution(p, early))
    assert rules(report) == {"copy_early"} and report.violations[0].buffer == 1
    fine = [(D, -1, NONE, NONE), (C, 0, (3, 5), (3, 4)), (C, 40, (0, 5), (0, 1))]
    assert validate(p, make_solution(p, fine)).ok


def test_outside_live_range():
    p = make_problem([dict(t=5, live=(3, 9), demand=2.0), dict(t=5, out=True, live=(5, 6),
                                                               demand=1.0)])
    rows = [(C, 0, (2, 5), (2, 3)), (C, 20, (5, 6), (6, 6))]
    report = validate(p, make_solution(p, rows))
    assert rules(report) == {"live_range"}
    assert {v.buffer for v in report.violations} == {0}
    rows = [(C, 0, (3, 5), (3, 4)), (C, 20, (5, 7), (6, 7))]
    report = validate(p, make_solution(p, rows))
    assert rules(report) == {"live_range"}
    assert {v.buffer for v in report.violations} == {1}


def test_copies_overlapping_in_two_steps():
    p = make_problem([dict(t=5, demand=1.0), dict(t=6, demand=1.0)], supply=[10.0] * 10)
    rows = [(C, 0, (2, 5), (2, 4)), (C, 10, (3, 6), (3, 5))]
    report = validate(p, make_solution(p, rows))
    assert rules(report) == {"copy_engine"}
    assert "buffers 0 [2, 4] and 1 [3, 5]" in report.violations[0].message


def test_demand_exceeding_supply_together_but_not_alone():
    # Supply 1 per step. Buffer 0 copies 2.5 over steps 0-2, buffer 1 copies 1.6 over steps 2-3:
    # each alone fits (3 >= 2.5, 2 >= 1.6) but together they need 4.1 > 4.
    buffers = [dict(t=3, demand=2.5), dict(t=4, demand=1.6)]
    rows = [(C, 0, (0, 3), (0, 2)), (C, 10, (2, 4), (2, 3))]
    p = make_problem(buffers)
    report = validate(p, make_solution(p, rows))
    assert rules(report) == {"copy_supply"}
    assert report.violations[0].buffer == 1
    # Each alone is fine.
    for keep in (0, 1):
        alone = [r if i == keep else (D, -1, NONE, NONE) for i, r in enumerate(rows)]
        assert validate(p, make_solution(p, alone)).ok
    # With exactly enough supply (2.5 + 1.5 = 4) it fits.
    p = make_problem([dict(t=3, demand=2.5), dict(t=4, demand=1.5)])
    assert validate(p, make_solution(p, rows)).ok


def test_supply_uses_earliest_deadline_first():
    # Nested copies (a copy_engine violation) still fit the supply if buffer 1 is served first
    # at steps 1-2: serving in order of start time would starve it.
    p = make_problem([dict(t=4, demand=2.0), dict(t=4, demand=2.0)])
    rows = [(C, 0, (0, 4), (0, 3)), (C, 10, (1, 4), (1, 2))]
    report = validate(p, make_solution(p, rows))
    assert rules(report) == {"copy_engine"}


def test_supply_tolerance():
    # The game rounds: a copy short by a relative 1e-9 passes, by 1e-3 fails.
    p = make_problem([dict(t=3, demand=2.0 * (1 + 1e-9))])
    assert validate(p, make_solution(p, [(C, 0, (1, 3), (1, 2))])).ok
    p = make_problem([dict(t=3, demand=2.0 * (1 + 1e-3))])
    report = validate(p, make_solution(p, [(C, 0, (1, 3), (1, 2))]))
    assert rules(report) == {"copy_supply"}


def test_copy_outside_program_gets_no_supply():
    p = make_problem([dict(t=9, out=True, demand=1.0)])
    report = validate(p, make_solution(p, [(C, 0, (9, 10), (10, 10))]))
    assert "copy_supply" in rules(report)
    assert "live_range" in rules(report)


def test_nocopy_without_predecessor(base):
    # Buffer 0's allocation ends at step 3: an allocation from step 5 does not continue it.
    report = mutate(base, {2: (N_, 0, (5, 5), NONE)})
    assert "nocopy_predecessor" in rules(report)
    assert report.violations[0].buffer == 2
    # The first use of an input tensor has no predecessor.
    report = mutate(base, {0: (N_, 0, (1, 3), NONE)})
    assert rules(report) == {"nocopy_predecessor"}
    # Without an allocation, nothing of tensor 0 covers step 5 if buffer 2 is dropped.
    report = mutate(base, {2: (D, -1, NONE, NONE)})
    assert rules(report) == {"nocopy_predecessor"}
    assert report.violations[0].buffer == 3


def test_nocopy_predecessor_must_be_earlier():
    p = make_problem([dict(t=3, tensor=0), dict(t=3, tensor=0)])
    rows = [(N_, 0, NONE, NONE), (C, 0, (3, 3), NONE)]
    assert rules(validate(p, make_solution(p, rows))) == {"nocopy_predecessor"}


def test_nocopy_not_covering_target(base):
    report = mutate(base, {2: (N_, 0, (4, 4), NONE)})
    assert rules(report) == {"nocopy_target", "nocopy_predecessor"}
    assert [v.buffer for v in report.violations] == [2, 3]


def test_nocopy_at_another_offset(base):
    # Buffer 2 continues buffer 0's tensor at offset 100 instead of 0 (and buffer 3 follows it).
    changes = {2: (N_, 100, (4, 5), NONE), 3: (N_, 100, NONE, NONE)}
    report = mutate(base, changes)
    assert rules(report) == {"nocopy_offset"}
    assert report.violations[0].buffer == 2
    # Allowed under the paper's literal rule, when the caller says so...
    assert mutate(base, changes, allow_nocopy_move=True).ok
    # ... but never because the solution claims it of itself.
    assert rules(mutate(base, changes, rules={"nocopy_offset": "lowest"})) == {"nocopy_offset"}
    # A NoCopy without an allocation must always be where the data is.
    report = mutate(base, {3: (N_, 100, NONE, NONE)}, allow_nocopy_move=True)
    assert rules(report) == {"nocopy_offset"}
    assert report.violations[0].buffer == 3


def test_nocopy_with_copy_interval(base):
    report = mutate(base, {2: (N_, 0, (4, 5), (4, 4))})
    assert rules(report) == {"nocopy_copy"}


def test_several_violations_listed_at_once(base):
    changes = {
        1: (C, 30, (4, 6), (4, 6)),   # overlap with buffer 2 and copy before the write
        4: (D, 100, NONE, NONE),      # a Drop with an offset
        6: (D, -1, NONE, NONE),       # alias group 7 split
    }
    report = mutate(base, changes, ret=99.0)
    assert rules(report) == {"overlap", "copy_interval", "drop", "alias_mixed", "return"}
    assert len(str(report).splitlines()) == len(report.violations)
    assert all(isinstance(v, Violation) for v in report.violations)


# ----------------------------------------------------------------------------- scale, isolation


def test_large_problem_is_fast():
    # 20,000 output buffers, each written at step i and copied out at step i + 1, alternating
    # between two offsets: valid, and checked quickly.
    n = 20_000
    size = np.full(n, 64, np.int64)
    t = np.arange(n, dtype=np.int64)
    p = Problem(name="big", memory_size=128, supply=np.ones(n + 1), size=size,
                is_output=np.ones(n, bool), target_time=t, tensor_id=t.copy(),
                alias_id=np.full(n, -1, np.int64), live_start=t.copy(), live_end=t + 1,
                demand=np.ones(n), benefit=np.ones(n))
    sol = Solution(problem="big", solver="hand", ret=float(n), action=np.zeros(n, np.int64),
                   offset=(t % 2) * 64, alloc_start=t.copy(), alloc_end=t + 1,
                   copy_start=t + 1, copy_end=t + 1)
    start = time.perf_counter()
    report = validate(p, sol)
    assert report.ok, str(report)[:1000]
    assert time.perf_counter() - start < 10.0

    # All at one offset: every consecutive pair overlaps at one step.
    sol = dataclasses.replace(sol, offset=np.zeros(n, np.int64))
    report = validate(p, sol)
    overlaps = [v for v in report.violations if v.rule == "overlap"]
    assert len(overlaps) == MAX_LISTED + 1
    assert f"{n - 1} overlapping pairs" in overlaps[-1].message


VALIDATOR = pathlib.Path(__file__).resolve().parent.parent / "jaxmmap" / "core" / "validator.py"
GAME_MODULES = ("jaxmmap.env.game", "jaxmmap.env.reference", "jaxmmap.env.instance", "jaxmmap.env")


def test_imports_only_problem_and_numpy():
    tree = ast.parse(VALIDATOR.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "use absolute imports"
            imported.add(node.module)
    jaxmmap_imports = {m for m in imported if m.split(".")[0] == "jaxmmap"}
    assert jaxmmap_imports == {"jaxmmap.core.problem"}
    assert not any(m.split(".")[0] == "jax" for m in imported)


def test_fresh_import_loads_no_game_module():
    # Load the package without its __init__ (which may import everything) and check which
    # modules the validator pulls in.
    code = f"""
import sys, types
pkg = types.ModuleType("jaxmmap")
pkg.__path__ = [{str(VALIDATOR.parent.parent)!r}]
sys.modules["jaxmmap"] = pkg
import jaxmmap.core.validator
bad = [m for m in sys.modules if m in {GAME_MODULES!r} or m == "jax" or m.startswith("jax.")]
print(bad)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
