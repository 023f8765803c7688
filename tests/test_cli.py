"""The command line, end to end on small problems."""

import json
import pathlib

import pytest

from jaxmmap import load_solution, validate
from jaxmmap.cli import main
from jaxmmap.core import suite
from jaxmmap.core.io import bundled


def test_generate_check_play_validate(tmp_path, capsys):
    problem = tmp_path / "p.json.gz"
    assert main(["generate", "--seed", "4", "--instructions", "30", "-o", str(problem)]) == 0
    assert main(["check", str(problem)]) == 0
    summary = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert summary["steps"] == 30 and summary["buffers"] > 30 and summary["live_out_tensors"] >= 1
    assert 0 <= summary["capacity_loss"]["size_rounding"] < 0.5
    for policy in ("random", "greedy"):
        solution = tmp_path / f"{policy}.json"
        assert main(["play", str(problem), "--policy", policy, "--games", "8", "--columns", "64",
                     "-o", str(solution)]) == 0
        played = json.loads(capsys.readouterr().out)
        assert played["policy"] == policy and played["lost"] == 0
        assert main(["validate", str(problem), str(solution)]) == 0
        assert capsys.readouterr().out.startswith("valid")


def test_bundled_play_and_invalid_solution(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["play", "bundled:tiny", "--policy", "greedy", "-o", str(out)]) == 0
    capsys.readouterr()
    solution = load_solution(out)
    assert validate(bundled("tiny"), solution).ok
    assert solution.rules.get("placement", "grid") == "grid"  # (no solver: the paper's game)
    data = json.loads(out.read_text())
    data["return"] += 1.0  # a false claim
    data["buffers"]["offset"][0] = 10 ** 12 if data["buffers"]["action"][0] != "drop" else 0
    out.write_text(json.dumps(data))
    assert main(["validate", "bundled:tiny", str(out)]) == 1
    report = capsys.readouterr().out
    assert "return" in report and len(report.strip().splitlines()) >= 2


def test_check_reports_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "jaxmmap.problem/1", "name": "x", "memory_size": 10,
                               "supply": [1.0], "buffers": {"size": [1]}}))
    assert main(["check", str(bad)]) == 1
    assert "buffers.is_output: missing" in capsys.readouterr().err


def test_import_function_and_hlo(tmp_path, capsys, monkeypatch):
    (tmp_path / "userprog.py").write_text(
        "import jax.numpy as jnp\n\ndef mlp(x, w1, w2):\n    return jnp.tanh(x @ w1) @ w2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "mlp.json.gz"
    assert main(["import", "userprog:mlp", "--shapes", "f32[32,784]", "f32[784,512]",
                 "f32[512,10]", "--hardware", "gpu", "--fast-memory", "1000000", "-o", str(out)]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["steps"] >= 2 and made["buffers"] >= 6 and made["memory_pressure"] > 1
    hlo = pathlib.Path(__file__).parent / "fixtures" / "hlo" / "cond_carry.after_optimizations.txt"
    out2 = tmp_path / "cc.json"
    assert main(["import", "--hlo", str(hlo), "--hardware", "dram_pmem", "-o", str(out2)]) == 0
    capsys.readouterr()
    for problem in (out, out2):
        solution = tmp_path / "s.json"
        assert main(["play", str(problem), "-o", str(solution)]) == 0
        assert main(["validate", str(problem), str(solution)]) == 0
        capsys.readouterr()
    assert main(["import", "userprog:mlp", "--shapes", "f32[2,(3)]", "-o", str(out)]) == 1
    assert main(["import", "-o", str(out)]) == 1


def test_solve_writes_a_validated_solution(tmp_path, capsys):
    problem = tmp_path / "p.json"
    assert main(["generate", "--seed", "0", "--instructions", "5", "-o", str(problem)]) == 0
    out = tmp_path / "s.json"
    assert main(["solve", str(problem), "--solver", "exhaustive", "--budget", "20",
                 "--columns", "32", "-o", str(out), "--json"]) == 0
    printed = capsys.readouterr().out.split("\n", 1)[1]
    result = json.loads(printed)
    assert result["info"]["proven_optimal"] and result["trace"][-1][1] == result["return"]
    # the simulated speed beside the return: the optimum is at least as fast as the heuristic
    assert result["time_unit"] == "microseconds" and result["stall"] == 0
    assert result["latency"] == pytest.approx(result["all_slow"] - result["return"])
    assert result["speedup_over_heuristic_percent"] >= -1e-9
    assert main(["validate", str(problem), str(out)]) == 0
    capsys.readouterr()
    assert main(["latency", str(problem), str(out), "--baseline-budget", "0", "--json"]) == 0
    timed = json.loads(capsys.readouterr().out)
    assert timed["time_unit"] == "microseconds" and len(timed["results"]) == 1
    assert "speedup_over_heuristic_percent" not in timed["results"][0]


def test_list_shows_the_suite_and_check_warns_when_everything_fits(tmp_path, capsys):
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in suite.names()) and "bundled:tiny" in listed
    roomy = tmp_path / "roomy.json.gz"
    assert main(["generate", "--seed", "1", "--instructions", "20", "--memory-fraction", "1.5",
                 "-o", str(roomy)]) == 0
    capsys.readouterr()
    assert main(["check", str(roomy)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["size_unit"] == "bytes"
    assert len(err.strip().splitlines()) == 1 and err.startswith("warning: ") and "every tensor" in err
    assert main(["check", "bundled:tiny"]) == 0
    assert capsys.readouterr().err == ""  # under pressure: no warning


def test_solver_options_parse_as_json_per_solver():
    from jaxmmap.solvers import parse_options

    assert parse_options(["games=64", "mode=alphazero", 'network={"embedding": 32}']) == {
        "": {"games": 64, "mode": "alphazero", "network": {"embedding": 32}}}
    assert parse_options(["muzero.games=8", "es.population=16", "muzero.gumbel=true"],
                         per_solver=True) == {"muzero": {"games": 8, "gumbel": True},
                                              "es": {"population": 16}}


def test_the_older_game_without_pins(tmp_path, capsys):
    """`--no-output-nocopy` plays the older rules: no output is ever NoCopy (pinned)."""
    problem = bundled("tiny")
    pins = {}
    for flag in ([], ["--no-output-nocopy"]):
        out = tmp_path / f"s{len(flag)}.json"
        assert main(["play", "bundled:tiny", "--policy", "greedy", "-o", str(out), *flag]) == 0
        capsys.readouterr()
        solution = load_solution(out)
        assert validate(problem, solution).ok
        assert solution.rules["output_nocopy"] == (not flag)
        pins[bool(flag)] = int(((solution.action == 1) & problem.is_output).sum())
    assert pins[True] == 0 and pins[False] > 0


def test_a_budget_too_small_for_one_game_is_one_error_line(tmp_path, capsys, monkeypatch):
    from jaxmmap.solvers import _solve

    # (the agent's own error, not `solve`'s cut-off of a run still compiling after 3 s on a busy machine)
    monkeypatch.setattr(_solve, "OVERRUN_S", 600.0)
    out = tmp_path / "s.json"
    # (on the grid: in its own game, the deferred one, the heuristic's plan is the agent's first game)
    assert main(["solve", "bundled:tiny", "--solver", "muzero", "--budget", "0.001", "--placement", "grid",
                 "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: the agent (expert mode) finished no game of tiny")
    assert "raise the budget" in err[-1] and "Traceback" not in "".join(err)
    assert not out.exists()  # nothing half-written


def test_the_persistent_compilation_cache(tmp_path, monkeypatch):
    import jax

    from jaxmmap.env.compilation_cache import compilation_cache

    before = jax.config.jax_compilation_cache_dir
    try:
        monkeypatch.setenv("JAXMMAP_COMPILATION_CACHE", "off")
        assert compilation_cache() is None
        assert jax.config.jax_compilation_cache_dir == before
        monkeypatch.setenv("JAXMMAP_COMPILATION_CACHE", str(tmp_path / "xla"))
        assert compilation_cache() == str(tmp_path / "xla")
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "xla")
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
        from jax._src import compilation_cache as cc

        cc.reset_cache()  # later tests compile without the temporary cache


def test_the_warning_when_the_bound_is_the_all_fast_return():
    from jaxmmap.core.io import all_fast_return, pressure_warning, summarize
    from jaxmmap.solvers.cpsat import upper_bound

    problem = bundled("tiny")
    summary = summarize(problem)
    assert summary["all_fast_return"] == pytest.approx(all_fast_return(problem))
    assert upper_bound(problem) <= summary["all_fast_return"] + 1e-9  # nothing returns more
    assert pressure_warning(summary, upper_bound(problem)) is None  # tiny is under pressure
    line = pressure_warning(summary, summary["all_fast_return"])
    assert "LP bound" in line and "\n" not in line


ONE_THREAD = """
import os
from jaxmmap.env.cpu import one_thread
before = os.sched_getaffinity(0)
os.environ["JAXMMAP_CPU_THREADS"] = "all"
opted_out = one_thread()
del os.environ["JAXMMAP_CPU_THREADS"]
first, again = one_thread(), one_thread()
print(opted_out, first, again, os.sched_getaffinity(0) == before)
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="Linux only")
def test_one_game_commands_start_the_cpu_backend_with_one_thread_and_give_the_cpus_back():
    """`jaxmmap.env.cpu.one_thread` (what `play --games 1` calls): $JAXMMAP_CPU_THREADS=all opts
    out; it works only before JAX has started; the calling thread keeps its CPUs."""
    import os
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", ONE_THREAD], env={**os.environ, "JAX_PLATFORMS": "cpu"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False", "True"]


def test_the_suite_splits_by_family_and_open_problems_expands_them():
    from jaxmmap.core.io import open_problems
    train, held = suite.names("train"), suite.names("held-out")
    assert sorted(train + held) == sorted(suite.names()) and not set(train) & set(held)
    families = {row["name"]: row["family"] for row in suite.info()}
    assert {families[n] for n in held} == set(suite.HELD_OUT_FAMILIES)
    assert not {families[n] for n in train} & set(suite.HELD_OUT_FAMILIES)
    assert [p.name for p in open_problems(["suite:held-out"])] == held
    with pytest.raises(KeyError, match="no split"):
        suite.names("test")


def test_deferred_placement_from_the_command_line(tmp_path, capsys):
    """`--placement deferred --copy-supply early`: the game's solution is packed, valid, and says
    its rules; a rule that deferred placement cannot keep is one error line."""
    out = tmp_path / "d.json"
    assert main(["play", "bundled:tiny", "--policy", "greedy", "--placement", "deferred", "--copy-supply", "early",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    solution = load_solution(out)
    assert validate(bundled("tiny"), solution).ok
    assert solution.rules["placement"] == "deferred" and solution.rules["copy_supply"] == "early"
    assert main(["play", "bundled:tiny", "--placement", "deferred", "--nocopy-offset", "lowest",
                 "-o", str(tmp_path / "x.json")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "nocopy_offset" in err[0]
    assert not (tmp_path / "x.json").exists()


def test_each_solver_plays_its_own_game_unless_the_rules_are_given(tmp_path, capsys):
    """`compare` (and `solve`: the same rules) plays each game solver's own game (greedy: deferred)
    and names it (`play`, with no solver, keeps the paper's grid: above; a given `--placement` wins:
    tests/test_solvers.py, `rules_for`)."""
    assert main(["compare", "--instances", "bundled:tiny", "--solvers", "greedy", "pinning", "--budget", "2",
                 "--no-bound", "--no-place", "-o", str(tmp_path / "c")]) == 0
    runs = {r["solver"]: r["info"] for r in json.loads((tmp_path / "c" / "traces.json").read_text())["runs"]}
    assert runs["greedy"]["played"] == "deferred" and "played" not in runs["pinning"]  # (the table shows it:
    # tests/test_compare.py)
    assert load_solution(tmp_path / "c" / "solutions" / "tiny.greedy.json.gz").rules["placement"] == "deferred"


def test_solve_and_latency_print_a_short_table_and_their_data_with_json(tmp_path, capsys):
    """A few lines for people (return, latency, speed-ups in percent, solver, seconds, where the
    solution went; numbers to 6 significant digits); `--json` the data for programs. `latency`
    measures against a heuristic solution it is given instead of running the heuristic again."""
    import re

    from jaxmmap.core.simulator import latency, speedup

    heuristic = tmp_path / "h.json"
    assert main(["solve", "bundled:tiny", "--solver", "heuristic", "--budget", "5", "-o", str(heuristic)]) == 0
    table = capsys.readouterr().out
    lines = table.strip().splitlines()
    solution = load_solution(heuristic)
    assert 4 <= len(lines) <= 15 and lines[0].startswith("heuristic on tiny") and " s of a 5 s budget" in lines[0]
    assert f"{solution.ret:.6g}" in table and f"{latency(bundled('tiny'), solution).total:.6g}" in table
    assert "+0.00% over the heuristic" in table and f"{heuristic} (validated)" in table
    assert not re.search(r"\d\.\d{7,}", table)  # no 16-digit floats
    assert main(["solve", "bundled:tiny", "--solver", "heuristic", "--budget", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["return"] == solution.ret and data["solution"] is None and "trace" in data

    greedy = tmp_path / "g.json"
    assert main(["play", "bundled:tiny", "--policy", "greedy", "-o", str(greedy)]) == 0
    capsys.readouterr()
    assert main(["latency", "bundled:tiny", str(greedy), str(heuristic), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["solution"] for r in rows] == [str(greedy), str(heuristic)]  # no third, duplicate heuristic
    assert rows[0]["speedup_over_heuristic_percent"] == pytest.approx(speedup(rows[1]["latency"], rows[0]["latency"]))
    assert main(["latency", "bundled:tiny", str(greedy), str(heuristic)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 5 and "vs heuristic" in lines[1] and lines[3].startswith(str(heuristic))
    assert lines[2].split()[-1] == f"{rows[0]['speedup_over_heuristic_percent']:+.2f}%"
    assert main(["latency", "bundled:tiny", str(greedy)]) == 0  # no heuristic given: it is run
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 5 and lines[3].startswith("(heuristic, run now)") and lines[3].split()[-1] == "+0.00%"


@pytest.mark.parametrize("argv", [["solve", "bundled:tiny", "-o", ""], ["play", "bundled:tiny", "-o", " "],
                                  ["generate", "-o", ""], ["compare", "--instances", "bundled:tiny", "-o", ""]])
def test_an_empty_output_name_is_one_error_line(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(err) == 1
    assert err[0].startswith(f"error: jaxmmap {argv[0]}: argument -o/--output: give a name")
    assert not list(tmp_path.iterdir())  # nothing written
