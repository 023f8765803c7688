"""Trust: one run per workdir, no tracebacks for mistakes, strict
solution rules, bounded reads."""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from builders import PAD, RULES, expert_config

import jaxmmap
from jaxmmap import Rules, bundled, generate, save_solution
from jaxmmap.agent.loop import fit
from jaxmmap.cli import main
from jaxmmap.core import problem as problem_module
from jaxmmap.core.files import UserError, owned, read_jsonl
from jaxmmap.core.problem import Problem, ProblemError, Solution, load_solution, read_json
from jaxmmap.harness.compare import Comparison, compare
from jaxmmap.harness.plots import layout, pick_tensor
from jaxmmap.harness.report import report
from jaxmmap.solvers import check_options, solve

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_workdir_is_owned_by_one_run(tmp_path):
    folder = tmp_path / "run"
    with owned(folder):
        with owned(folder):  # the same process again (train.py, then fit): fine
            pass
        assert (folder / ".lock").read_text().strip() == str(os.getpid())
    assert not (folder / ".lock").exists()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (folder / ".lock").write_text(f"{sleeper.pid}\n")  # another run holds it
        with pytest.raises(UserError, match=f"in use by another run \\(pid {sleeper.pid}\\)"):
            with owned(folder):
                pass
    finally:
        sleeper.kill()
        sleeper.wait()
    (folder / ".lock").write_text(f"{_dead_pid()}\n")  # left by a killed run: taken over
    with owned(folder):
        assert (folder / ".lock").read_text().strip() == str(os.getpid())


def test_a_workdir_whose_checkpoints_is_a_file_is_refused_before_anything_is_written(tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "checkpoints").write_text("not a folder")
    (workdir / "metrics.jsonl").write_text('{"iteration": 10}\n' * 30)
    with pytest.raises(UserError, match="is a file"):
        fit(generate(1, num_instructions=6), expert_config(), rules=RULES, max_iterations=8, padding=PAD,
            workdir=str(workdir))
    assert (workdir / "metrics.jsonl").read_text().count("\n") == 30
    assert sorted(os.listdir(workdir)) == ["checkpoints", "metrics.jsonl"]


def test_a_solution_with_unknown_or_bad_rules_is_refused(tmp_path):
    problem = bundled("tiny")
    path = tmp_path / "s.json"
    save_solution(solve(problem, "greedy", budget_s=5, place=False, rules=Rules()).solution, path)
    good = json.loads(path.read_text())
    for rules, message in (({"colums": 256}, "did you mean 'columns'"), ({"columns": "x"}, "whole number"),
                           ({"output_nocopy": 1}, "true or false"), ({"nocopy_offset": "up"}, "'same' or 'lowest'")):
        path.write_text(json.dumps({**good, "rules": rules}))
        with pytest.raises(ProblemError, match=message):
            load_solution(path)


def test_a_gzip_with_corrupt_data_or_too_much_of_it_is_refused(tmp_path, monkeypatch):
    data = gzip.compress(json.dumps({"x": list(range(1000))}).encode())
    corrupt = tmp_path / "c.json.gz"
    corrupt.write_bytes(data[:20] + bytes([data[20] ^ 0xFF]) + data[21:])
    with pytest.raises(ProblemError, match="cannot read"):
        read_json(corrupt)
    big = tmp_path / "big.json.gz"
    big.write_bytes(data)
    monkeypatch.setattr(problem_module, "MAX_FILE_BYTES", 1000)  # the cap, before the whole is read
    with pytest.raises(ProblemError, match="once unpacked; refused"):
        read_json(big)


@pytest.mark.parametrize("options,message", [
    ({"mode": "bogus"}, "one of plan, game, best"), ({"pins": "abc"}, "one of null, never"),
    ({"moves": "abc"}, "whole number >= 0"), ({"moves": -1}, "whole number >= 0"),
])
def test_solver_options_of_the_wrong_kind_are_one_user_error(options, message):
    with pytest.raises(UserError, match=message):
        check_options("heuristic", options, 10.0)


def test_agent_options_are_checked_before_any_work():
    for options, message in (({"games": 0}, "games must be"), ({"mode": "bogus"}, "unknown mode"),
                             ({"elites": 0}, "elites must be"), ({"batch_size": 0}, "batch_size")):
        with pytest.raises(UserError, match=message):
            check_options("muzero", options, 10.0)


@pytest.mark.parametrize("argv,message", [
    (["solve", "bundled:tiny", "--solver", "exhaustive"], "exhaustive search is for tiny problems"),
    (["solve", "bundled:tiny", "--seed", str(2 ** 70)], "a seed is a whole number"),
    (["generate", "--seed", "-1", "-o", "x.json"], "a seed is a whole number"),
    (["generate", "--memory-fraction", "1e300", "-o", "x.json"], "memory_fraction must be in"),
    (["solve", "bundled:tiny", "--option", "pins=abc", "--solver", "heuristic"], "option pins is one of"),
    (["solve", "bundled:tiny", "--baseline-budget", "nan", "-o", "x.json"], "a finite number of seconds >= 0"),
    (["latency", "bundled:tiny", "--baseline-budget", "-1"], "a finite number of seconds >= 0"),
])
def test_cli_mistakes_are_one_error_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parsed = "--seed" in argv or "--baseline-budget" in argv  # (argparse's mistakes exit)
    with pytest.raises(SystemExit) if parsed else contextlib.nullcontext():
        assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "x.json").exists()


def test_a_closed_pipe_ends_the_command_quietly():
    # the reader is gone before the command prints (as `| head` is once it has its lines)
    proc = subprocess.Popen([sys.executable, "-m", "jaxmmap", "list"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    proc.stderr.close()
    assert proc.returncode == 0 and "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("row", ['{"x": 1}', "[1, 2]", '{"iteration": "3", "finished": 0}'])
def test_a_metrics_row_of_another_shape_is_one_user_error(tmp_path, row):
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "metrics.jsonl").write_text(row + "\n" + '{"iteration": 10, "finished": 1}\n')
    with pytest.raises(UserError, match="line 1 is not a row of this file"):
        fit(generate(1, num_instructions=6), expert_config(), rules=RULES, max_iterations=8, padding=PAD,
            workdir=str(workdir))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A small comparison's folder, saved."""
    root = tmp_path_factory.mktemp("cmp")
    compare([bundled("tiny")], ["greedy", "heuristic"], budget_s=5, rules=RULES, bound=False).save(root / "c")
    return root / "c"


@pytest.mark.parametrize("edit", [
    lambda d: d.pop("runs"), lambda d: d.update(runs=[{"status": "ok"}]), lambda d: d.update(budget_s="x"),
    lambda d: d.update(runs=[[]]), lambda d: d.update(bounds=[]), lambda d: d.update(files={"tiny": []}),
    lambda d: d["runs"][0].update(seed=float("inf")),  # found by the fuzz test: OverflowError
])
def test_a_hand_edited_index_is_one_user_error(results, tmp_path, edit):
    copy = tmp_path / "c"
    shutil.copytree(results, copy)
    data = json.loads((copy / "traces.json").read_text())
    edit(data)
    (copy / "traces.json").write_text(json.dumps(data))
    with pytest.raises(UserError):
        report([str(copy)], str(tmp_path / "r" / "report.md"), layouts=False)


def test_reads_and_writes_stay_inside_the_results_folder(results, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(results, copy)
    data = json.loads((copy / "traces.json").read_text())
    data["files"]["tiny"]["problem"] = "../../../etc/passwd"
    (copy / "traces.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="leads outside the folder"):
        report([str(copy)], str(tmp_path / "r" / "report.md"), layouts=False)
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", out / "solutions")  # a link already in the output folder
    with pytest.raises(UserError, match="leads outside the folder"):
        Comparison.load(results).save(out)
    assert not os.listdir(tmp_path / "elsewhere")


def test_an_improvement_without_its_solution_is_one_user_error(tmp_path):
    workdir = tmp_path / "run"
    fit(generate(1, num_instructions=6), expert_config(), rules=RULES, max_iterations=8, padding=PAD,
        workdir=str(workdir))
    with open(workdir / "improvements.jsonl", "a") as f:
        f.write('{"iteration": 99, "seconds": 1.0}\n{"iteration": 100, "seconds": 1.0, "solution": {}}\n')
    with pytest.raises(UserError, match="is not a row of this file"):
        report([str(workdir)], str(tmp_path / "r" / "report.md"), layouts=False)


def test_plot_refuses_what_it_cannot_draw_before_drawing(tmp_path):
    problem = bundled("tiny")
    solution = solve(problem, "greedy", budget_s=5, place=False, rules=Rules()).solution
    with pytest.raises(UserError, match="cannot draw a .xyz picture"):
        layout(problem, [solution], path=str(tmp_path / "p.xyz"))
    assert not (tmp_path / "p.xyz").exists()
    huge = dataclasses.replace(problem, tensor_id=problem.tensor_id + 10 ** 15)  # ids need not be dense
    assert pick_tensor(huge, [solution]) >= 10 ** 15
    layout(huge, [dataclasses.replace(solution, problem=huge.name)], path=str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_compare_refuses_unwritable_metadata_before_any_run(tmp_path):
    problem = bundled("tiny")
    for bad in (dataclasses.replace(problem, metadata={**problem.metadata, "x": float("nan")}),
                dataclasses.replace(problem, name="t\udcff")):
        with pytest.raises(UserError, match="cannot be written to a result file"):
            compare([bad], ["greedy"], budget_s=1, bound=False)


def test_a_flipped_bit_in_a_checkpoint_falls_back_like_a_corrupt_one(tmp_path, capsys):
    problem, workdir = generate(1, num_instructions=6), tmp_path / "run"
    options = dict(rules=RULES, padding=PAD, workdir=str(workdir), checkpoint_every=1)
    fit(problem, expert_config(), max_iterations=8, **options)
    steps = sorted(int(n) for n in os.listdir(workdir / "checkpoints") if n.isdigit())
    assert len(steps) == 2 and sorted(os.listdir(workdir / "checkpoints.sha256")) == [f"{s}.json" for s in steps]
    files = [os.path.join(d, f) for d, _, fs in os.walk(workdir / "checkpoints" / str(steps[-1])) for f in fs]
    big = max(files, key=os.path.getsize)
    with open(big, "r+b") as f:
        f.seek(os.path.getsize(big) // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x10]))
    capsys.readouterr()
    fit(problem, expert_config(), max_iterations=12, **options)
    err = capsys.readouterr().err
    assert f"checkpoint {steps[-1]}" in err and "checksum mismatch" in err and f"resuming from checkpoint {steps[0]}" in err
    assert (workdir / "checkpoints.corrupt" / str(steps[-1])).is_dir()


def test_what_the_fuzz_found(tmp_path):
    # a problem whose step_latency does not fit its steps: one error line, not a ValueError
    problem = generate(3, num_instructions=8)
    bad = dataclasses.replace(problem, metadata={**problem.metadata, "step_latency": [1.0] * 7})
    with pytest.raises(ProblemError, match="step_latency must be 8 finite durations"):
        jaxmmap.latency(bad, solve(problem, "greedy", budget_s=10, place=False, rules=Rules()).solution)
    # a metrics row whose key is not text (a lone surrogate): refused naming its line
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"iteration": 1, "finished": 0, "x\\udcff": 1}\n{"iteration": 2, "finished": 0}\n')
    with pytest.raises(UserError, match="line 1 is not a row of this file"):
        read_jsonl(path, fields={"iteration": int})


def test_plot_draws_a_problem_without_buffers_and_a_name_that_is_not_text(tmp_path):
    z = np.zeros(0, np.int64)
    empty = Problem(name="empty", memory_size=1024, supply=np.ones(3), size=z, is_output=z.astype(bool),
                    target_time=z, tensor_id=z, alias_id=z, live_start=z, live_end=z, demand=z.astype(float),
                    benefit=z.astype(float))
    nothing = Solution(problem="empty", solver="x", ret=0.0, action=z, offset=z, alloc_start=z, alloc_end=z,
                       copy_start=z, copy_end=z)
    layout(empty, [nothing], path=str(tmp_path / "empty.png"))
    odd = dataclasses.replace(bundled("tiny"), name="ti\udcffny")
    solution = solve(odd, "greedy", budget_s=10, place=False, rules=Rules()).solution
    layout(odd, [solution], labels=["gr\udcffedy"], path=str(tmp_path / "odd.png"))
    assert (tmp_path / "empty.png").stat().st_size > 1000 and (tmp_path / "odd.png").stat().st_size > 1000
