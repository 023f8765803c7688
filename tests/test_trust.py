"""The second pass on trust (issue 29): one run per workdir, no tracebacks for mistakes, strict
solution rules, bounded reads."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import subprocess
import sys

import pytest
from builders import PAD, RULES, expert_config

from jaxmmap import bundled, generate, save_solution
from jaxmmap.agent.loop import fit
from jaxmmap.cli import main
from jaxmmap.core import problem as problem_module
from jaxmmap.core.files import UserError, owned
from jaxmmap.core.problem import ProblemError, load_solution, read_json
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
    save_solution(solve(problem, "greedy", budget_s=5, place=False).solution, path)
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
    ({"moves": "abc"}, "whole number >= 0"), ({"moves": None}, "whole number >= 0"),
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
])
def test_cli_mistakes_are_one_error_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) if "--seed" in argv else contextlib.nullcontext():
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
