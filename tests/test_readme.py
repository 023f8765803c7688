"""The README's examples run unchanged: its Python blocks, its command lines, its test command."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shlex

import jax.numpy as jnp
import pytest

import jaxmmap
from jaxmmap.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.S)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
SHELL = [code for lang, code in BLOCKS if lang in ("bash", "sh", "shell", "")]


def _train_step(state, batch):  # the function a user brings to `from_jax`
    w = state["w"] - 0.1 * jnp.tanh(batch @ state["w"]).T @ batch
    return {"w": w}, jnp.sum(w)


# What a block refers to but the README leaves to the reader, given before the block runs.
GIVEN = {
    "from_jax": lambda ns: ns.update(train_step=_train_step, state={"w": jnp.zeros((64, 64))},
                                     batch=jnp.ones((32, 64))),
    "solvers.solve": lambda ns: ns.update(problem=jaxmmap.bundled("tiny")),
    "timeline = jaxmmap.latency(": lambda ns: ns.update(solution=ns["result"].solution, agent_solution=ns["result"].solution,
                                     heuristic_solution=ns["result"].solution),
}


def test_the_readme_has_the_examples_this_test_runs():
    assert len(PYTHON) >= 4 and any("jaxmmap check" in code for code in SHELL)


def test_the_python_examples_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    jaxmmap.save_problem(jaxmmap.bundled("tiny"), "problem.json.gz")
    namespace: dict = {}
    for code in PYTHON:
        for marker, give in GIVEN.items():
            if marker in code:
                give(namespace)
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    assert jaxmmap.validate(jaxmmap.bundled("tiny"), jaxmmap.load_solution("solution.json")).ok
    assert (tmp_path / "layout.png").stat().st_size > 0
    assert namespace["result"].solution.ret > 0 and namespace["timeline"].total > 0


def _commands() -> list[list[str]]:
    lines = "\n".join(SHELL).replace("\\\n", " ").splitlines()
    return [shlex.split(ln.split("  #")[0]) for ln in lines if ln.startswith("jaxmmap ")]


@pytest.mark.parametrize("argv", _commands(), ids=lambda a: " ".join(a[:2]))
def test_every_command_line_names_a_command_and_its_options(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([argv[1], "--help"])
    assert exit_.value.code == 0
    usage = capsys.readouterr().out
    for option in (a.split("=")[0] for a in argv[2:] if a.startswith("-")):
        assert option in usage, f"jaxmmap {argv[1]} has no {option}"


def test_ci_runs_the_readmes_test_command():
    command = re.search(r"python -m pip install -e \"\.\[dev\]\" && (python -m pytest[^\n`]*)", README).group(1)
    assert command.strip() in (ROOT / ".ci" / "run").read_text()
