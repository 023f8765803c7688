"""Problem and solution files: round trips, and one clear error for each broken rule."""

import copy
import gzip
import json
import re

import numpy as np
import pytest

from jaxmmap import bundled, generate, load_problem, load_solution, save_problem
from jaxmmap.core.problem import Problem, ProblemError, Solution


def _base():
    return {
        "format": "jaxmmap.problem/2", "name": "p", "memory_size": 1000,
        "supply": [1.0, 2.0, 0.0, 1.0],
        "buffers": {"size": [100, 100, 200, 200], "is_output": [True, False, True, False],
                    "target_time": [0, 1, 1, 3], "tensor_id": [0, 0, 1, 1],
                    "alias_id": [-1, -1, 5, 5], "live_start": [0, 0, 1, 1],
                    "live_end": [1, 1, 3, 3], "demand": [0.5, 0.5, 1.0, 1.0],
                    "benefit": [1.0, 2.0, 3.0, 4.0], "live_out": [False, False, True, True]},
        "latency_tables": [{"step": 1, "buffers": [1, 2], "latency": [4.0, 3.0, 2.0, 1.0]}],
        "metadata": {"source": "test"},
    }


def _write(tmp_path, data, name="p.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_valid_file_loads_with_every_field(tmp_path):
    p = load_problem(_write(tmp_path, _base()))
    assert (p.num_buffers, p.num_steps, p.memory_size) == (4, 4, 1000)
    np.testing.assert_array_equal(p.alias_id, [-1, -1, 5, 5])
    assert p.is_output.dtype == bool and p.size.dtype == np.int64
    assert p.latency_tables[0].step == 1 and p.latency_tables[0].latency.tolist() == [4, 3, 2, 1]
    assert p.metadata == {"source": "test"}
    assert p.live_out.tolist() == [False, False, True, True]


def test_version_1_files_load_with_no_tensor_live_out(tmp_path):
    data = _base()
    data["format"] = "jaxmmap.problem/1"
    del data["buffers"]["live_out"]
    p = load_problem(_write(tmp_path, data))
    assert p.live_out.dtype == bool and not p.live_out.any()
    assert p.to_json()["format"] == "jaxmmap.problem/2"  # written in the current version


@pytest.mark.parametrize("name", ["p.json", "p.json.gz"])
def test_round_trip(tmp_path, name):
    p = generate(3, num_instructions=30, latency_tables=True, inplace_prob=0.3)
    save_problem(p, tmp_path / name)
    q = load_problem(tmp_path / name)
    assert p.live_out.any() and not p.live_out.all()
    for field in ("supply", "size", "is_output", "target_time", "tensor_id", "alias_id",
                  "live_start", "live_end", "demand", "benefit", "live_out"):
        np.testing.assert_array_equal(getattr(q, field), getattr(p, field), err_msg=field)
    assert len(q.latency_tables) == len(p.latency_tables)
    assert q.name == p.name and q.memory_size == p.memory_size
    if name.endswith(".gz"):
        with gzip.open(tmp_path / name, "rt") as f:
            assert json.load(f)["format"] == "jaxmmap.problem/2"


def _break(path_value):
    def edit(d):
        keys, value = path_value
        target = d
        for k in keys[:-1]:
            target = target[k]
        if value is _DELETE:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
    return edit


_DELETE = object()

BROKEN = {
    # case: (edit, words the message must contain)
    "format": ((["format"], "jaxmmap.problem/9"), ["format"]),
    "missing memory": ((["memory_size"], _DELETE), ["memory_size", "missing"]),
    "missing column": ((["buffers", "demand"], _DELETE), ["buffers.demand", "missing"]),
    "wrong length": ((["buffers", "benefit"], [1.0, 2.0]), ["buffers.benefit", "2 entries", "4"]),
    "wrong type": ((["buffers", "size"], [100, "x", 200, 200]), ["buffers.size[1]", "integer"]),
    "negative size": ((["buffers", "size"], [100, -1, 200, 200]), ["buffers.size[1]", "[0, 2**62]"]),
    "tensor sizes": ((["buffers", "size"], [100, 100, 200, 300]), ["buffers.size[3]", "tensor 1", "200"]),
    "written twice": ((["buffers", "is_output"], [True, True, True, False]), ["buffers.is_output[1]", "written"]),
    "written late": ((["buffers", "live_start"], [0, 0, 0, 0]), ["buffers.live_start[2]", "written at step 1"]),
    "huge memory": ((["memory_size"], 2 ** 70), ["memory_size", "2**62"]),
    "supply overflow": ((["supply"], [1e308, 1e308, 0.0, 1.0]), ["supply", "overflows"]),
    "benefit overflow": ((["buffers", "benefit"], [1e308, -1e308, 0.0, 1.0]), ["buffers.benefit", "overflows"]),
    "nan benefit": ((["buffers", "benefit"], [1.0, float("nan"), 3.0, 4.0]), ["buffers.benefit[1]", "finite", "nan"]),
    "infinite benefit": ((["buffers", "benefit"], [1.0, 2.0, float("inf"), 4.0]), ["buffers.benefit[2]", "finite"]),
    "negative supply": ((["supply"], [1.0, -2.0, 0.0, 1.0]), ["supply[1]"]),
    "target outside": ((["buffers", "target_time"], [0, 1, 1, 4]), ["target_time[3]", "outside"]),
    "target outside live": ((["buffers", "live_start"], [0, 0, 2, 2]), ["buffers.live_start[2]", "target_time 1"]),
    "out of order": ((["buffers", "target_time"], [0, 1, 0, 3]), ["target_time[2]", "order"]),
    "alias sizes": ((["buffers", "alias_id"], [5, 5, 5, 5]), ["buffers.size[2]", "alias group 5", "100", "200"]),
    "tensor live ranges": ((["buffers", "live_end"], [1, 2, 3, 3]), ["buffers.live_start[1]", "tensor 0"]),
    "negative demand": ((["buffers", "demand"], [0.5, -0.5, 1.0, 1.0]), ["buffers.demand[1]"]),
    "bad alias id": ((["buffers", "alias_id"], [-1, -2, 5, 5]), ["buffers.alias_id[1]"]),
    "table length": ((["latency_tables", 0, "latency"], [1.0, 2.0]), ["latency_tables[0].latency", "2**2"]),
    "table step": ((["latency_tables", 0, "step"], 3), ["latency_tables[0]", "step 3"]),
    "table index": ((["latency_tables", 0, "buffers"], [1, 9]), ["latency_tables[0]", "9"]),
    "memory zero": ((["memory_size"], 0), ["memory_size", "[1, 2**62]"]),
    "missing live_out": ((["buffers", "live_out"], _DELETE), ["buffers.live_out", "missing"]),
    "live_out per tensor": ((["buffers", "live_out"], [True, False, True, True]), ["buffers.live_out[1]", "tensor 0"]),
    "bool as int": ((["buffers", "is_output"], [1, 0, 1, 0]), ["buffers.is_output[0]", "true or false"]),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_files_raise_one_clear_error(tmp_path, case):
    edit, words = BROKEN[case]
    data = copy.deepcopy(_base())
    _break(edit)(data)
    with pytest.raises(ProblemError) as err:
        load_problem(_write(tmp_path, data))
    message = str(err.value)
    for w in words:
        assert w in message, f"{w!r} not in {message!r}"
    assert "Traceback" not in message and str(tmp_path) in message


def test_not_json_and_missing_file(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{nope")
    with pytest.raises(ProblemError, match="not valid JSON"):
        load_problem(path)
    with pytest.raises(ProblemError, match="cannot read"):
        load_problem(tmp_path / "absent.json")
    path.write_bytes(b'{"name": "\xff"}')
    with pytest.raises(ProblemError, match="cannot read"):
        load_problem(path)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ProblemError, match="not a usable JSON"):
        load_problem(path)
    path.write_text('{"memory_size": ' + "9" * 5000 + "}")
    with pytest.raises(ProblemError, match="not a usable JSON"):
        load_problem(path)


def test_solution_round_trip_and_errors(tmp_path):
    s = Solution(problem="p", solver="t", ret=1.5, action=np.array([0, 1, 2]),
                 offset=np.array([0, 0, -1]), alloc_start=np.array([0, 2, -1]),
                 alloc_end=np.array([1, 3, -1]), copy_start=np.array([0, -1, -1]),
                 copy_end=np.array([0, -1, -1]), rules={"columns": 8, "nocopy_offset": "same"})
    data = s.to_json()
    assert data["buffers"]["action"] == ["copy", "nocopy", "drop"]
    path = _write(tmp_path, data, "s.json")
    t = load_solution(path)
    np.testing.assert_array_equal(t.action, s.action)
    assert t.ret == 1.5 and t.rules == s.rules
    data["buffers"]["action"][1] = "keep"
    with pytest.raises(ProblemError, match=r"buffers.action\[1\]"):
        load_solution(_write(tmp_path, data, "bad.json"))


def test_bundled_instance_is_valid():
    p = bundled("tiny")
    assert isinstance(p, Problem) and p.num_buffers > 50


def test_a_problem_and_a_solution_print_as_one_line():
    """`print(problem)` is a summary, not 30,000 characters of arrays."""
    from jaxmmap.solvers import solve

    problem = bundled("tiny")
    for text in (repr(problem), str(problem)):
        assert text.startswith("Problem('tiny'") and "\n" not in text and len(text) < 150
        assert f"{problem.num_buffers:,} buffers" in text and f"{problem.num_steps:,} steps" in text
        assert f"memory_size {problem.memory_size:,} B" in text
    solution = solve(problem, "pinning", budget_s=5).solution
    text = str(solution)
    assert text.startswith("Solution('tiny' by pinning: return ") and "\n" not in text and len(text) < 150
    counts = [int(n.replace(",", "")) for n in re.findall(r"(?:Copy|NoCopy|Drop) ([\d,]+)", text)]
    assert counts == np.bincount(solution.action, minlength=3).tolist() and sum(counts) == problem.num_buffers
