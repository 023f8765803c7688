"""Seeded fuzzing of the files users hand to jaxmmap: valid problem, solution,
`traces.json` and `metrics.jsonl` files are mutated (truncation, bit flips, type swaps, removed
and added keys, huge numbers, NaN, lone surrogates) and every command that reads them must end
with exit status 0 or one `error:` line: never a traceback, never a hang."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import shutil
import signal

import pytest
from builders import PAD, RULES, expert_config

from jaxmmap import generate, save_problem, save_solution
from jaxmmap.agent.loop import fit
from jaxmmap.cli import main
from jaxmmap.core.files import UserError
from jaxmmap.harness.compare import compare
from jaxmmap.solvers import solve

# One worker runs the whole module, so that its module fixture (a comparison and a training run) is made once
# (pytest-xdist --dist loadgroup).
pytestmark = pytest.mark.xdist_group("fuzz")
MUTANTS = 14  # per file kind: a few seconds in all
ODD = [None, True, -1, 0, 10 ** 30, -1e308, float("nan"), float("inf"), "", "\udcff", "x" * 300, [], {}, [1, [2]],
       {"a": {"b": None}}]


def _paths(tree, prefix=()):
    """Every path (a tuple of keys and indices) into a JSON tree."""
    yield prefix
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree[:20]):
            yield from _paths(v, (*prefix, i))


def _set(tree, path, value):
    for key in path[:-1]:
        tree = tree[key]
    tree[path[-1]] = value


def mutants(text: str, rng: random.Random, count: int) -> list[str]:
    """`count` mutants of a JSON text: byte-level (truncation, bit flips) and tree-level (a value
    swapped for an odd one, a key removed, a key added)."""
    tree = json.loads(text)
    paths = [p for p in _paths(tree) if p]
    out = []
    for k in range(count):
        kind = k % 5
        if kind == 0:
            out.append(text[: rng.randrange(len(text))])
        elif kind == 1:
            raw = bytearray(text.encode("utf-8"))
            i = rng.randrange(len(raw))
            raw[i] ^= 1 << rng.randrange(8)
            out.append(raw.decode("utf-8", "replace"))
        else:
            mutant = copy.deepcopy(tree)
            path = rng.choice(paths)
            if kind == 2:
                _set(mutant, path, rng.choice(ODD))
            elif kind == 3:
                parent = mutant
                for key in path[:-1]:
                    parent = parent[key]
                del parent[path[-1]]
            else:
                holder = rng.choice([p for p in paths if isinstance(_get(mutant, p), dict)] or [()])
                (_get(mutant, holder) if holder else mutant)[rng.choice(["bogus", "name", "x\udcff"])] = rng.choice(ODD)
            out.append(json.dumps(mutant))
    return out


def _get(tree, path):
    for key in path:
        tree = tree[key]
    return tree


def run(argv) -> tuple[int, str]:
    """`jaxmmap ARGV` in this process: (exit status, stderr), a traceback raised as the test's
    failure, a hang stopped after 30 s."""
    err = io.StringIO()

    def alarm(*_):
        raise TimeoutError(f"jaxmmap {' '.join(argv)} still running after 30 s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(30)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(argv)
            except SystemExit as e:
                status = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return status, err.getvalue()


def assert_clean(argv):
    status, err = run(argv)
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    invalid = argv[0] == "validate" and status == 1 and not lines  # its answer: the violations, on stdout
    # one error line; an invalid solution's refusal lists the validator's violations under it, indented
    one = bool(lines) and lines[0].startswith("error: ") and all(line.startswith("  ") for line in lines[1:])
    assert status == 0 or invalid or one, (argv, status, err[-2000:])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    problem = generate(3, num_instructions=8, memory_fraction=0.4)
    save_problem(problem, root / "p.json")
    save_solution(solve(problem, "greedy", budget_s=10, rules=RULES, place=False).solution, root / "s.json")
    compare([problem], ["greedy", "pinning"], budget_s=2, rules=RULES, bound=False).save(root / "cmp")
    fit(problem, expert_config(), rules=RULES, max_iterations=8, padding=PAD, workdir=str(root / "run"))
    return root, problem


def test_mutated_problems_and_solutions_give_exit_0_or_one_error_line(files, tmp_path):
    root, _ = files
    rng = random.Random(0)
    for k, text in enumerate(mutants((root / "p.json").read_text(), rng, MUTANTS)):
        p = tmp_path / f"p{k}.json"
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        for argv in (["check", str(p), "--no-bound"], ["validate", str(p), str(root / "s.json")],
                     ["latency", str(p), str(root / "s.json"), "--baseline-budget", "0"]):
            assert_clean(argv)
    for k, text in enumerate(mutants((root / "s.json").read_text(), rng, MUTANTS)):
        s = tmp_path / f"s{k}.json"
        s.write_text(text, encoding="utf-8", errors="surrogatepass")
        for argv in (["validate", str(root / "p.json"), str(s)], ["check", str(s)],
                     ["latency", str(root / "p.json"), str(s), "--baseline-budget", "0"],
                     ["plot", str(root / "p.json"), str(s), "-o", str(tmp_path / f"s{k}.png")]):
            assert_clean(argv)


def test_mutated_comparison_indexes_give_exit_0_or_one_error_line(files, tmp_path):
    root, _ = files
    rng = random.Random(1)
    for k, text in enumerate(mutants((root / "cmp" / "traces.json").read_text(), rng, MUTANTS)):
        folder = tmp_path / f"c{k}"
        shutil.copytree(root / "cmp", folder)
        (folder / "traces.json").write_text(text, encoding="utf-8", errors="surrogatepass")
        assert_clean(["report", str(folder), "-o", str(tmp_path / f"r{k}" / "report.md"), "--no-layouts",
                      "--baseline-budget", "0"])


def test_mutated_metrics_rows_are_resumed_or_refused_in_one_line(files, tmp_path):
    root, problem = files
    rng = random.Random(2)
    lines = (root / "run" / "metrics.jsonl").read_text().splitlines()
    for k, text in enumerate(mutants(lines[0], rng, 6)):
        workdir = tmp_path / f"w{k}"
        shutil.copytree(root / "run", workdir)
        (workdir / "metrics.jsonl").write_text("\n".join([text, *lines[1:]]) + "\n", encoding="utf-8",
                                               errors="surrogatepass")
        try:
            fit(problem, expert_config(), rules=RULES, max_iterations=16, padding=PAD, workdir=str(workdir))
        except UserError as e:
            assert "\n" not in str(e)
