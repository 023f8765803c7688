"""The README's examples run unchanged: its Python blocks, its command lines, its test command."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shlex
import sys

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


# The README's "Command line" block, run on the bundled instance. SUBSTITUTIONS gives each of its
# lines (by how it starts) the replacements of its placeholders, made in order (a README text
# matches where no letter, digit or dot touches it); the line then runs through `cli.main` in a
# temporary folder, in the README's order: `validate`, `latency`, `plot` and `report` read what
# `play`, `solve` and `compare` wrote. Budgets and seeds are cut to 1, `compare` drops the suite's
# instances (bundled:tiny stays), and `report` reads no training run (`runs/agent`; tests/test_report.py
# reports one). A line without an entry, an entry without a line, and a placeholder left (a word in
# capitals) fail the test.
TINY = "tiny.json.gz"  # the bundled tiny problem, saved
HLO = str(ROOT / "tests" / "fixtures" / "hlo" / "cond_carry.after_optimizations.txt")
PROGRAM = "import jax.numpy as jnp\n\ndef step(x, w):\n    return x - 0.1 * jnp.tanh(x @ w) @ w.T\n"
SUBSTITUTIONS: dict[str, list[tuple[str, str]]] = {  # line start: [(README text, what runs instead)]
    "jaxmmap list": [],
    "jaxmmap check": [("FILE", TINY)],
    "jaxmmap play": [("PROBLEM", TINY), ("random|greedy", "random"), ("S", "1"), ("[--games G]", "--games 4"),
                     ("SOLUTION.json", "played.json")],
    "jaxmmap solve": [("PROBLEM", TINY), ("NAME", "heuristic"), ("--budget S", "--budget 1"),
                      ("--seed N", "--seed 0"), ("SOLUTION.json", "solution.json")],
    "jaxmmap compare": [("'suite:resnet*'", ""), ("--budget 30", "--budget 1"), ("--seeds 3", "--seeds 1")],
    "jaxmmap validate": [("PROBLEM", TINY), ("SOLUTION", "solution.json")],
    "jaxmmap latency": [("PROBLEM", TINY), ("SOLUTION...", "played.json solution.json")],
    "jaxmmap plot": [("PROBLEM", TINY), ("SOLUTION [SOLUTION2]", "played.json solution.json")],
    "jaxmmap report": [("runs/agent", "")],
    "jaxmmap import module:function": [("module:function", "readme_program:step"), ("...", "f32[784,64]"),
                                       ("[--donate 0]", "--donate 0"), ("[--hardware gpu]", "--hardware gpu"),
                                       ("[--memory-fraction 0.3]", "--memory-fraction 0.3"),
                                       ("P.json.gz", "imported.json.gz")],  # PROGRAM's step(x, w)
    "jaxmmap import --hlo": [("module.after_optimizations.txt", HLO), ("P.json.gz", "from_hlo.json.gz")],
    "jaxmmap generate": [("S", "7"), ("T", "20"), ("PROBLEM.json.gz", "generated.json.gz")],
}
COMMAND_LINE = re.search(r"## Command line\n\n```\n(.*?)```", README, flags=re.S).group(1)


def _substituted(line: str) -> list[str]:
    starts = [start for start in SUBSTITUTIONS if line.startswith(start + " ") or line == start]
    assert len(starts) == 1, f"the README line {line!r} needs one entry in SUBSTITUTIONS"
    for readme, instead in SUBSTITUTIONS[starts[0]]:
        line = re.sub(rf"(?<![\w.]){re.escape(readme)}(?![\w.])", lambda _, text=instead: text, line)
    argv = shlex.split(line, comments=True)
    left = [a for a in argv if a.startswith("[") or re.fullmatch(r"[A-Z][A-Z0-9_]*(\.[\w.]+)?\]?", a)]
    assert not left, f"placeholders {left} left in {line!r}"
    return argv[1:]


def _written(argv: list[str]) -> list[str]:
    """The files and folders a command says it writes: its -o target (compare: the files in it)."""
    if "-o" not in argv:
        return []
    out = argv[argv.index("-o") + 1]
    return [f"{out}/{name}" for name in ("results.md", "results.csv", "curves.png")] if argv[0] == "compare" else [out]


def test_every_command_line_runs_on_the_bundled_instance(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "readme_program", raising=False)
    (tmp_path / "readme_program.py").write_text(PROGRAM)
    problem = jaxmmap.bundled("tiny")
    jaxmmap.save_problem(problem, TINY)
    lines = COMMAND_LINE.replace("\\\n", " ").splitlines()
    lines = [line for line in lines if line.startswith("jaxmmap ")]
    assert len(lines) == len(SUBSTITUTIONS), "an entry of SUBSTITUTIONS matches no README line"
    for argv in map(_substituted, lines):
        assert main(argv) == 0, f"jaxmmap {shlex.join(argv)}: {capsys.readouterr().err}"
        assert capsys.readouterr().out.strip(), f"jaxmmap {shlex.join(argv)} printed nothing"
        for path in _written(argv):
            assert (tmp_path / path).is_file() and (tmp_path / path).stat().st_size > 0, path
            if path.endswith(".json"):  # a solution
                assert jaxmmap.validate(problem, jaxmmap.load_solution(path)).ok, path
            elif path.endswith(".json.gz"):
                assert jaxmmap.load_problem(path).num_buffers > 0, path


def test_the_readme_stays_short():  # the front door: the details are in docs/
    assert len(README.splitlines()) <= 250


def test_ci_runs_the_readmes_test_command():
    command = re.search(r"python -m pip install -e \"\.\[dev\]\" && (python -m pytest[^\n`]*)", README).group(1)
    assert command.strip() in (ROOT / ".ci" / "run").read_text()
