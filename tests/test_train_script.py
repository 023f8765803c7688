"""train.py end to end: a run writes a validated solution, logs and checkpoints; killed, it keeps
its best solution, and a second run on the same workdir resumes from the newest intact checkpoint
instead of starting over. Mistakes are one `error:` line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from jaxmmap import Rules, bundled, load_solution, validate
from jaxmmap.core.files import read_jsonl
from jaxmmap.core.rules import auto_columns
from jaxmmap.core.simulator import latency
from jaxmmap.solvers.heuristic import heuristic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--config.agent.games=8", "--config.agent.replay_size=256", "--config.agent.td_steps=10",
         "--config.agent.batch_size=16",
         "--config.agent.updates_per_chunk=10", "--config.agent.num_simulations=4",
         "--config.agent.generations_per_chunk=10", "--config.agent.elites=2",
         "--config.agent.network.grid_channels=(4,)", "--config.agent.network.torso=(32,)",
         "--config.agent.network.embedding=16", "--config.agent.network.dynamics=(32,)",
         "--config.budget_s=600"]
ENV = {**os.environ, "JAXMMAP_COMPILATION_CACHE": "off"}


def _command(workdir, steps, *extra):
    return [sys.executable, "train.py", "--config", "configs/quickstart.py", f"--workdir={workdir}",
            f"--config.training_steps={steps}", *SMALL, *extra]


def _train(workdir, steps, *extra):
    run = subprocess.run(_command(workdir, steps, *extra), cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env=ENV)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _steps(workdir) -> list[int]:
    folder = workdir / "checkpoints"
    return sorted(int(n) for n in os.listdir(folder) if n.isdigit()) if folder.exists() else []


@pytest.mark.slow  # (50 s, train.py in subprocesses; by default, in-process: test_robustness.py's resumed run keeps
# its best solution and logs each step once, test_trust.py's corrupt and flipped checkpoints fall back)
def test_train_survives_a_kill_a_corrupt_checkpoint_and_a_torn_line(tmp_path):
    """A run killed at a random moment keeps a valid solution.json at least as good as the
    heuristic's (prod runs the heuristic first); the next run falls back from a corrupt latest
    checkpoint, repairs a torn metrics line, continues, and solution.json never gets worse."""
    workdir = tmp_path / "run"
    proc = subprocess.Popen(_command(workdir, 100_000, "--config.checkpoint_every=1"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        deadline = time.monotonic() + 500
        while len(_steps(workdir)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read()[-3000:]
        assert len(_steps(workdir)) >= 2, "no checkpoint within the time limit"
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    problem = bundled("tiny")
    first = load_solution(str(workdir / "solution.json"))
    assert validate(problem, first).ok
    heuristic_return = heuristic(problem, 60.0, 0, rules=Rules(columns=auto_columns(problem))).solution.ret
    assert first.ret >= heuristic_return

    latest = _steps(workdir)[-1]
    files = [os.path.join(d, f) for d, _, fs in os.walk(workdir / "checkpoints" / str(latest)) for f in fs]
    big = max(files, key=os.path.getsize)
    with open(big, "r+b") as f:
        f.truncate(os.path.getsize(big) // 2)
    with open(workdir / "metrics.jsonl", "a") as f:
        f.write('{"iteration": 999, "episo')  # a kill in the middle of a line

    run = _train(workdir, latest + 20)
    assert f"warning: checkpoint {latest}" in run.stderr
    assert "agent (expert) best return" in run.stdout and "the best of the agent's and heuristic's" in run.stdout
    summary = json.loads((workdir / "summary.json").read_text())
    assert summary["iterations"] == latest + 20
    # the summary line counts this run's iterations (from the checkpoint before the corrupt one)
    done, began = (int(re.search(pattern, run.stdout).group(1).replace(",", ""))
                   for pattern in (r"this run: ([\d,]+) iterations", r"resumed at iteration ([\d,]+)"))
    assert 0 < began < latest and done + began == latest + 20
    solution = load_solution(str(workdir / "solution.json"))
    assert validate(problem, solution).ok
    assert solution.ret >= max(first.ret, summary["agent_return"], summary["heuristic_return"])
    # the speed beside the return: a written solution of a higher return is at least as fast
    written = summary["written"]
    assert written["return"] == solution.ret and written["stall"] == 0
    assert written["latency"] == pytest.approx(latency(problem, solution).total)
    assert (solution.ret <= summary["heuristic_return"]) or written["speedup_over_heuristic_percent"] >= 0
    assert "than the heuristic, simulated" in run.stdout and "resuming" in run.stderr
    rows = read_jsonl(workdir / "metrics.jsonl", repair=False)
    assert [r["iteration"] for r in rows] == list(range(10, latest + 21, 10))
    assert len((workdir / "metrics.csv").read_text().splitlines()) == 1 + len(rows)
    assert "NaN" not in (workdir / "metrics.jsonl").read_text()
    assert any(name.startswith("events") for name in os.listdir(workdir / "tensorboard"))


# (each a train.py of its own, 4 s: -m slow for the checks of the workdir, the mode, the games and the seed)
@pytest.mark.parametrize("case", ["missing_problem", "unknown_field", "bad_game"] + [
    pytest.param(case, marks=pytest.mark.slow) for case in ("workdir_is_a_file", "bad_mode", "no_games", "negative_seed")])
def test_a_train_mistake_is_one_error_line_and_writes_nothing(tmp_path, case):
    workdir = tmp_path / "run"
    extra = {"missing_problem": [f"--config.problem={tmp_path / 'missing.json'}"],
             "workdir_is_a_file": [], "unknown_field": ["--config.agent.bogus=1"],
             "bad_mode": ["--config.agent.mode=bogus"], "no_games": ["--config.agent.games=0"],
             "negative_seed": ["--config.seed=-1"], "bad_game": ["--config.placement=shelf"]}[case]
    if case == "workdir_is_a_file":
        workdir.write_text("")
    run = subprocess.run(_command(workdir, 10, *extra), cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=ENV)
    assert run.returncode in (1, 2)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr[-2000:]
    assert workdir.is_file() if case == "workdir_is_a_file" else not workdir.exists()


@pytest.mark.parametrize(("flag", "error"), [("--config.generated=101", "--config.generated=101: at most 100"), pytest.param(
    "--config.round_labels=oracle", "--config.round_labels='oracle'", marks=pytest.mark.slow)])
def test_a_generalist_mistake_is_one_error_line_and_writes_nothing(tmp_path, flag, error):
    """The generalist's config (`jaxmmap.agent.pretrain`, through train.py): a mistake is found
    before anything is gathered or written."""
    workdir = tmp_path / "run"
    command = [sys.executable, "train.py", "--config", "configs/generalist.py", f"--workdir={workdir}", flag]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=ENV)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"error: {error}"), run.stderr[-2000:]
    assert not workdir.exists()
