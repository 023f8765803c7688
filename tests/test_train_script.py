"""train.py end to end: a short run writes a validated solution, logs and checkpoints, and a second
run on the same workdir resumes from the checkpoint instead of starting over."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jaxmmap import bundled, load_solution, validate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--config.agent.games=8", "--config.agent.replay_size=256", "--config.agent.td_steps=10",
         "--config.agent.batch_size=16",
         "--config.agent.updates_per_chunk=10", "--config.agent.num_simulations=4",
         "--config.agent.generations_per_chunk=10", "--config.agent.elites=2",
         "--config.agent.network.grid_channels=(4,)", "--config.agent.network.torso=(32,)",
         "--config.agent.network.embedding=16", "--config.agent.network.dynamics=(32,)",
         "--config.budget_s=600"]


def _train(workdir, steps):
    run = subprocess.run([sys.executable, "train.py", "--config", "configs/quickstart.py",
                          f"--workdir={workdir}", f"--config.training_steps={steps}", *SMALL],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_train_writes_a_valid_solution_and_resumes(tmp_path):
    workdir = tmp_path / "run"
    out = _train(workdir, 160)  # a game of the bundled instance takes at least 127 moves
    assert "agent (expert) best return" in out and "prod" in out
    summary = json.loads((workdir / "summary.json").read_text())
    assert summary["iterations"] == 160
    solution = load_solution(str(workdir / "solution.json"))
    problem = bundled("tiny")
    assert validate(problem, solution).ok
    assert summary["agent_return"] is not None  # the expert mode plays whole games
    assert solution.ret == max(summary["agent_return"], summary["heuristic_return"])
    assert len((workdir / "metrics.csv").read_text().splitlines()) == 1 + 16
    assert any(name.startswith("events") for name in os.listdir(workdir / "tensorboard"))

    _train(workdir, 170)  # resumes at 160: one more chunk
    rows = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == list(range(10, 171, 10))
    assert json.loads((workdir / "summary.json").read_text())["iterations"] == 170
