"""CP-SAT on the physical problem and the LP upper bound: valid solutions, optimum at least the
game's, bounds that no solver beats."""

import copy
import dataclasses

import numpy as np
import pytest
from builders import RULES, tiny
from ortools.sat.python import cp_model

from jaxmmap import Rules, generate, validate
from jaxmmap.core.io import bundled
from jaxmmap.core.problem import DROP, NOCOPY, Solution
from jaxmmap.core.suite import load
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.solvers import SOLVERS, solve
from jaxmmap.solvers.cpsat import all_drop, cpsat, relaxation, upper_bound
from jaxmmap.solvers.cpsat import bound as cpsat_bound
from jaxmmap.solvers.cpsat import model as cpsat_model
from jaxmmap.solvers.cpsat.bound import _LP
from jaxmmap.solvers.cpsat.model import _Model
from jaxmmap.solvers.exhaustive import exhaustive

OLD = Rules(columns=32, output_nocopy=False)  # the older game: no pins



def small(seed):
    """Somewhat larger programs, slow copies and latency tables: CP-SAT still proves them."""
    return generate(seed, num_instructions=10, inplace_prob=0.3, loop_prob=0.2,
                    memory_fraction=0.4, copy_bandwidth=2e5, latency_tables=seed % 2 == 0,
                    zero_supply_prob=0.1)


def pinning(seed):
    """Like `tiny`, with slower copies and more memory: pinning outputs often pays. On seeds
    `PINS_PAY` the game's optimum (and CP-SAT's) is higher with pins than without."""
    return generate(seed, num_instructions=4 + seed % 3, inplace_prob=0.3, memory_fraction=0.7,
                    copy_bandwidth=2e5, latency_tables=seed % 2 == 1)


PINS_PAY = (0, 1, 2, 3, 5, 6)


def instance(family, seed):
    return {"tiny": lambda: tiny(seed, tables=seed % 2 == 1), "small": lambda: small(seed),
            "pinning": lambda: pinning(seed)}[family]()


def pins(solution, problem):
    """How many tensors `solution` pins (NoCopy of an output)."""
    return int(np.sum((solution.action == NOCOPY) & problem.is_output))


def all_pins(problem):
    """A valid solution made of pins only, by a tiny greedy: every output that may pin (not
    live-out, its tensor in no alias group), in order, is pinned over its live range at the lowest
    byte offset free there, its later buffers served from the pin; everything else is dropped.
    Checked by the validator."""
    n = problem.num_buffers
    cols = {k: np.full(n, -1, np.int64) for k in ("offset", "alloc_start", "alloc_end", "copy_start",
                                                   "copy_end")}
    action = np.full(n, DROP, np.int64)
    aliased = set(problem.tensor_id[problem.alias_id >= 0].tolist())
    boxes = []  # (first step, last step, first byte, end byte)
    for i in np.flatnonzero(problem.is_output & ~problem.live_out).tolist():
        k, size = int(problem.tensor_id[i]), int(problem.size[i])
        start, end = int(problem.live_start[i]), int(problem.live_end[i])
        if k in aliased:
            continue
        offset = 0
        for lo, hi in sorted((lo, hi) for s0, s1, lo, hi in boxes if s0 <= end and start <= s1):
            if offset + size <= lo:
                break
            offset = max(offset, hi)
        if offset + size > problem.memory_size:
            continue
        boxes.append((start, end, offset, offset + size))
        uses = np.flatnonzero(problem.tensor_id == k)
        action[uses], cols["offset"][uses] = NOCOPY, offset
        cols["alloc_start"][i], cols["alloc_end"][i] = start, end
    sol = Solution(problem=problem.name, solver="all-pins", ret=0.0, action=action, **cols)
    sol = dataclasses.replace(sol, ret=validate(problem, sol).recomputed_return)
    report = validate(problem, sol)
    assert report.ok, str(report)
    return sol


def game_solutions(problem, rules, limit):
    """Up to `limit` complete (not lost) games, depth first: every legal action sequence."""
    game = ReferenceGame(problem, rules)
    found = []

    def walk():
        if len(found) >= limit:
            return
        if game.done:
            if not game.lost:
                found.append(game.solution())
            return
        for action in np.flatnonzero(game.legal_actions()):
            saved = copy.deepcopy(game.board)
            game.step(int(action))
            walk()
            game.board, game.lost = saved, False

    walk()
    return found


def check_result(problem, result, rules=Rules()):
    report = validate(problem, result.solution, allow_nocopy_move=rules.nocopy_offset == "lowest")
    assert report.ok, str(report)
    assert result.solution.ret == report.recomputed_return  # the exact return, not CP-SAT's
    assert result.solution.solver == "cpsat"
    info = result.info
    assert info["bound"] == min(info["cpsat_bound"], info["relaxation_bound"])
    assert info["bound"] >= result.solution.ret
    assert "invalid_solutions" not in info
    times = [t for t, _ in result.trace]
    returns = [r for _, r in result.trace]
    assert times == sorted(times) and returns == sorted(returns)
    assert returns[-1] == result.solution.ret


@pytest.mark.parametrize("family,seed", [("tiny", s) for s in range(10)] + [("pinning", s) for s in range(8)])
def test_optimum_is_at_least_the_games_and_bounds_hold(family, seed):
    problem = instance(family, seed)
    game = exhaustive(problem, 60, 0, rules=RULES)
    assert game.info["proven_optimal"]
    if family == "pinning" and seed in PINS_PAY:  # the game's optimum pins: the new action is covered
        assert pins(game.solution, problem) >= 1
    result = cpsat(problem, 30, 0, hint=None)
    check_result(problem, result)
    assert result.info["status"] == "optimal" and result.info["proven_optimal"]
    assert result.solution.ret >= game.solution.ret - 1e-9
    # Proven optimal: the bound is the optimum up to the objective's rounding.
    assert result.info["cpsat_bound"] - result.solution.ret <= 1e-6 * max(1.0, result.solution.ret)
    assert upper_bound(problem) >= result.info["bound"] >= result.solution.ret


def test_the_physics_can_beat_the_game():
    # Seed 3: the game's copy timings and lowest offsets leave nothing placeable, the physics
    # does not (an instance found while testing; a regression check of the search space).
    problem = tiny(3)
    assert exhaustive(problem, 60, 0, rules=RULES).solution.ret == 0.0
    result = cpsat(problem, 30, 0, hint=None)
    check_result(problem, result)
    assert result.solution.ret > 0.0  # the game finds nothing


@pytest.mark.parametrize("family,seed,columns,nocopy_offset,output_nocopy", [
    ("tiny", 0, 32, "same", True), ("tiny", 2, 8, "lowest", True), ("tiny", 2, 256, "same", True),
    ("tiny", 5, 32, "same", True), ("tiny", 7, 256, "same", True), ("small", 1, 32, "same", True),
    ("pinning", 2, 32, "same", True), ("pinning", 5, 8, "lowest", True), ("pinning", 7, 32, "same", False)])
def test_every_game_solution_fits_the_model(family, seed, columns, nocopy_offset, output_nocopy):
    """The model admits every game solution (its bound is then >= the game's optimum): each
    complete game (all of them, or the first 150 for the larger instances) is completed into a
    full assignment of the model's variables. Games pin iff the rules allow it, and the model
    without pins rejects the games that pin."""
    problem = instance(family, seed)
    rules = Rules(columns=columns, nocopy_offset=nocopy_offset, output_nocopy=output_nocopy)
    model = _Model(problem, rules)
    games = game_solutions(problem, rules, limit=150)
    assert len(games) >= 13
    if (family, seed) in (("tiny", 2), ("tiny", 5), ("small", 1)):  # NoCopies with allocations of their own
        assert any(((s.action == 1) & (s.alloc_start >= 0)).any() for s in games)
    pinned = [s for s in games if pins(s, problem)]
    assert bool(pinned) == output_nocopy
    for sol in games:
        assert model.complete(sol, 5.0) is not None, sol.to_json()
    if pinned:
        older = _Model(problem, dataclasses.replace(rules, output_nocopy=False))
        assert all(older.complete(sol, 5.0) is None for sol in pinned[:5])


@pytest.mark.parametrize("seed", range(6))
def test_group_pieces_are_the_disjoint_union_of_the_members_allocations(seed):
    """`union_pieces` on random allocations (each containing its member's target, some
    members without one): disjoint pieces covering exactly the union."""
    from jaxmmap.solvers.cpsat._shared import union_pieces
    from jaxmmap.solvers.cpsat.model import _Buffer

    rng = np.random.default_rng(seed)
    T, k = 12, 7
    targets = np.sort(rng.integers(0, T, k))
    model = _Model.__new__(_Model)
    model.m, model.T = cp_model.CpModel(), T
    model.B, expected = [], set()
    for v in targets.tolist():
        has = bool(rng.random() < 0.8)
        a0, a1 = int(rng.integers(0, v + 1)), int(rng.integers(v, T))
        model.B.append(_Buffer(has_alloc=model.m.new_constant(int(has)),
                               alloc_start=model.m.new_constant(a0 if has else v),
                               alloc_end=model.m.new_constant(a1 if has else v)))
        expected |= set(range(a0, a1 + 1)) if has else set()
    pieces = union_pieces(model.m, model.B, np.arange(k), targets, T)
    solver = cp_model.CpSolver()
    assert solver.solve(model.m) == cp_model.OPTIMAL
    covered = []
    for start, _, end, present in pieces:
        s, e = solver.value(start), solver.value(end)
        assert e >= s and bool(solver.value(present)) == (e > s)
        covered += range(s, e)
    assert sorted(covered) == sorted(expected)  # disjoint (no step twice) and the union


def test_a_solution_outside_the_model_is_not_completed():
    problem = tiny(2)
    best = exhaustive(problem, 60, 0, rules=RULES).solution
    model = _Model(problem, Rules())
    assert model.complete(best, 5.0) is not None
    placed = np.flatnonzero(best.alloc_start >= 0)
    # Move one allocation onto another one's bytes at the same steps: an overlap.
    i, j = placed[0], placed[1]
    moved = dataclasses.replace(best, offset=best.offset.copy(), alloc_start=best.alloc_start.copy(),
                                alloc_end=best.alloc_end.copy())
    moved.offset[j] = best.offset[i]
    moved.alloc_start[j], moved.alloc_end[j] = best.alloc_start[i], best.alloc_end[i]
    assert not validate(problem, moved).ok
    assert model.complete(moved, 5.0) is None
    result = cpsat(problem, 10, 0, hint=moved)
    assert result.info["hint_accepted"] is False
    check_result(problem, result)


# (every solver against the bounds on tiny(0) by default: test_solvers.py; tiny(2) here with -m slow)
@pytest.mark.parametrize("family,seed", [pytest.param("tiny", 2, marks=pytest.mark.slow), ("pinning", 2)])
def test_no_solver_beats_the_bounds(family, seed):
    problem = tiny(seed) if family == "tiny" else pinning(seed)
    bound = upper_bound(problem)
    result = cpsat(problem, 30, 0, hint=None)
    for name in ("exhaustive", "greedy", "random"):
        other = solve(problem, name, budget_s=0.3, seed=seed, rules=RULES,
                      **({"batch": 32} if name == "random" else {}))
        assert other.solution.ret <= result.info["bound"] + 1e-9, name
        assert other.solution.ret <= bound + 1e-9, name
    assert result.solution.ret > 0


@pytest.mark.parametrize("seed", [0, 1, 4, 5])
def test_lp_bound_is_above_the_proven_optimum(seed):
    problem = small(seed)
    result = cpsat(problem, 30, 0, hint=None)
    assert result.info["proven_optimal"], result.info
    check_result(problem, result)
    bound, info = relaxation(problem)
    assert info["lp_solver"] == "highs"
    assert bound >= result.solution.ret - 1e-9
    assert bound == pytest.approx(info["lp_value"], rel=1e-6, abs=1e-9)  # certificate ~ LP value


def test_pdlp_certificate_is_a_valid_bound(monkeypatch):
    problem = small(0)
    exact, _ = relaxation(problem)
    monkeypatch.setattr(cpsat_bound, "HIGHS_NONZEROS", 0)
    bound, info = relaxation(problem, pdlp_iterations=200)
    assert info["lp_solver"] == "pdlp"
    assert exact - 1e-6 <= bound < np.inf


def test_the_certificate_bounds_the_lp_for_any_duals():
    # max x + y, x + y <= 1, 0 <= x, y <= 1: the optimum is 1; with no duals, the box gives 2.
    lp = _LP()
    x, y = lp.var(obj=1.0), lp.var(obj=1.0)
    lp.row("ub", [(x, 1.0), (y, 1.0)], 1.0)
    bound, info = lp.solve(1.0)
    assert info["lp_value"] == pytest.approx(1.0)
    assert 1.0 <= bound <= 1.0 + 1e-9


def test_all_drop_and_the_size_limit():
    problem = tiny(1, tables=True)
    drop = all_drop(problem)
    report = validate(problem, drop)
    assert report.ok and drop.ret == report.recomputed_return == 0.0
    assert np.all(drop.action == DROP) and np.all(drop.offset == -1)
    with pytest.raises(ValueError, match=f"not {problem.num_buffers}"):
        cpsat(problem, 10, 0, max_buffers=problem.num_buffers - 1)
    # No time at all: whatever CP-SAT has (at worst all-Drop) is valid.
    check_result(problem, cpsat(problem, 0.0, 0, hint=None))


def test_all_drop_when_cpsat_finds_nothing(monkeypatch):
    class Idle(cp_model.CpSolver):
        def solve(self, model, callback=None):
            return cp_model.UNKNOWN

    problem = tiny(2)
    monkeypatch.setattr(cpsat_model.cp_model, "CpSolver", Idle)
    result = cpsat(problem, 10, 0, hint=None)
    check_result(problem, result)
    assert np.all(result.solution.action == DROP) and result.solution.ret == 0.0
    assert result.info["status"] == "unknown" and not result.info["proven_optimal"]
    assert result.info["cpsat_bound"] == np.inf
    assert result.info["bound"] == result.info["relaxation_bound"] == upper_bound(problem) > 0


def test_lowest_nocopy_rule():
    problem = tiny(2)
    rules = Rules(columns=8, nocopy_offset="lowest")
    game = exhaustive(problem, 60, 0, rules=rules)
    result = cpsat(problem, 30, 0, rules=rules, hint=None)
    check_result(problem, result, rules)
    assert result.info["proven_optimal"]
    assert result.solution.ret >= game.solution.ret - 1e-9


@pytest.mark.parametrize("name", ["bundled:tiny", pytest.param("alexnet_infer_b32@gpu", marks=pytest.mark.slow)])
def test_real_instances(name):
    problem = bundled("tiny") if name == "bundled:tiny" else load(name)
    greedy = solve(problem, "greedy", rules=Rules()).solution
    bound = upper_bound(problem)
    assert bound >= greedy.ret
    # (tiny is not proven in 5 s either: 2 s; alexnet's 57 buffers are proven in about one, 5 s left for it)
    result = cpsat(problem, 2 if name == "bundled:tiny" else 5, 0, hint=greedy)
    assert result.info["hint_accepted"]
    check_result(problem, result)
    assert result.solution.ret >= greedy.ret - 1e-9
    assert result.info["relaxation_bound"] == bound
    if name != "bundled:tiny":  # 57 buffers: proven optimal in about a second
        assert result.info["proven_optimal"]
        assert bound >= result.solution.ret - 1e-9


def test_pins_raise_the_optimum():
    """CP-SAT's optimum with pins is at least the one without (the model without pins is the
    model with them, less the pin literals), and higher where pinning pays: the optimum then
    pins. Under the older rules nothing is pinned, and both optima pass the validator."""
    higher = 0
    for seed in range(8):
        problem = pinning(seed)
        new = cpsat(problem, 30, 0, rules=RULES, hint=None)
        old = cpsat(problem, 30, 0, rules=OLD, hint=None)
        check_result(problem, new)
        check_result(problem, old)
        assert new.info["proven_optimal"] and old.info["proven_optimal"]
        assert pins(old.solution, problem) == 0
        assert new.solution.ret >= old.solution.ret - 1e-9
        assert old.info["relaxation_bound"] <= new.info["relaxation_bound"] + 1e-9
        if new.solution.ret > old.solution.ret + 1e-6:
            higher += 1
            assert pins(new.solution, problem) >= 1
    assert higher >= 4


def test_a_pin_is_the_tensors_whole_live_range():
    """A pinned output's allocation is exactly its live range; the later buffers of its tensor are
    NoCopies at the pin's offset with no allocation or copy of their own."""
    problem = pinning(0)
    sol = cpsat(problem, 30, 0, rules=RULES, hint=None).solution
    pinned = np.flatnonzero((sol.action == NOCOPY) & problem.is_output)
    assert pinned.size
    for i in pinned.tolist():
        assert (sol.alloc_start[i], sol.alloc_end[i]) == (problem.live_start[i], problem.live_end[i])
        assert sol.copy_start[i] == sol.copy_end[i] == -1
        later = np.flatnonzero(problem.tensor_id == problem.tensor_id[i])
        later = later[later > i]
        assert np.all(sol.action[later] == NOCOPY) and np.all(sol.offset[later] == sol.offset[i])
        assert np.all(sol.alloc_start[later] == -1) and np.all(sol.copy_start[later] == -1)


def many_pins(seed):
    """Slow copies, tight memory, many outputs that may pin."""
    return generate(seed, num_instructions=24, inplace_prob=0.2 * (seed % 2), skip_prob=0.4,
                    memory_fraction=0.3 + 0.1 * (seed % 3), copy_bandwidth=2e4,
                    latency_tables=seed % 3 == 0)


@pytest.mark.parametrize("seed", [0, 1] + [pytest.param(s, marks=pytest.mark.slow) for s in range(2, 6)])
def test_lp_bound_holds_for_pins(seed):
    """The LP bound (pins in) is above a valid all-pins solution, the solvers' returns under the
    default rules (pins on) and CP-SAT's optimum, which it proves here from the hand-made pins
    (a physical solution the model admits as its hint)."""
    problem = many_pins(seed)
    by_hand = all_pins(problem)
    assert pins(by_hand, problem) >= 3
    bound = upper_bound(problem)
    assert bound >= by_hand.ret - 1e-9
    for name in ("greedy", "heuristic", "pinning"):
        if name in SOLVERS:  # solve() validates
            assert solve(problem, name, budget_s=2, seed=0).solution.ret <= bound + 1e-9, name
    result = cpsat(problem, 20, 0, hint=by_hand)
    check_result(problem, result)
    assert result.info["hint_accepted"] and result.info["proven_optimal"]
    assert by_hand.ret - 1e-9 <= result.solution.ret <= bound + 1e-9
    assert upper_bound(problem, rules=OLD) <= bound + 1e-9


@pytest.mark.parametrize("seed", [0, 5])
def test_the_bound_without_pins_is_cut_by_pins(seed):
    """Slow copies leave the older game little: the all-pins solution is above the bound without
    pins (so a bound that ignored pins would fail `test_lp_bound_holds_for_pins`)."""
    problem = many_pins(seed)
    assert all_pins(problem).ret > upper_bound(problem, rules=OLD) + 1e-6
