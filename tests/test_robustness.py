"""What the package promises when files are bad, names are odd, runs are killed or checkpoints are
corrupt (docs/promises.md): no silent wrong number, no lost best solution, and one `error:` line
for every user mistake, with nothing half-written."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
import re
import warnings

import numpy as np
import pytest
from builders import PAD, RULES, expert_config

from jaxmmap import Rules, bundled, generate, load_solution, make_instance, save_solution, validate
from jaxmmap.agent import expert
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.loop import fit, keep_best
from jaxmmap.cli import main
from jaxmmap.core import problem as problem_module
from jaxmmap.core.files import UserError, append_jsonl, md, printable, read_jsonl, slug, write_json
from jaxmmap.core.problem import DROP, ProblemError, load_problem, save_problem
from jaxmmap.core.simulator import latency
from jaxmmap.core.validator import SolutionRejected
from jaxmmap.env import game
from jaxmmap.harness.compare import compare
from jaxmmap.harness.plots import layout
from jaxmmap.solvers import solve
from jaxmmap.solvers.heuristic import heuristic


@pytest.fixture(scope="module")
def tiny():
    return bundled("tiny")


@pytest.fixture(scope="module")
def good(tiny):
    return heuristic(tiny, 5.0, 0).solution


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_error(code, err):
    lines = err.strip().splitlines()
    assert code in (1, 2), err
    assert lines and lines[0].startswith("error: "), err
    assert not lines[0].startswith(("error: '", 'error: "')), err  # (a KeyError's str() quotes its message)
    assert "Traceback" not in err
    return lines


def _forged(solution):
    return dataclasses.replace(solution, ret=solution.ret + 100.0)


def _stacked(problem, solution):
    """Every placed buffer at offset 0 and no copy: overlaps and missing copies."""
    placed = solution.action != DROP
    return dataclasses.replace(solution, offset=np.where(placed, 0, -1),
                               copy_start=np.full_like(solution.copy_start, -1),
                               copy_end=np.full_like(solution.copy_end, -1))


# ----------------------------------------------------------------------------- silent wrong results


@pytest.mark.parametrize("kind", ["forged", "stacked", "far_copy", "short"])
def test_latency_and_plot_refuse_an_invalid_solution(tmp_path, capsys, tiny, good, kind):
    bad = {"forged": _forged(good), "stacked": _stacked(tiny, good),
           "far_copy": dataclasses.replace(good, copy_start=np.where(good.copy_start >= 0, 10 ** 6, -1)),
           "short": dataclasses.replace(good, **{k: getattr(good, k)[:5] for k in (
               "action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end")})}[kind]
    path = str(tmp_path / "bad.json")
    save_solution(bad, path)
    code, out, err = _run(["latency", "bundled:tiny", path], capsys)
    lines = _one_error(code, err)
    assert path in lines[0] and "not a valid solution" in lines[0] and out == ""
    assert len(lines) > 1  # the validator's violations are listed
    code, _, err = _run(["plot", "bundled:tiny", path, "-o", str(tmp_path / "p.png")], capsys)
    _one_error(code, err)
    assert not (tmp_path / "p.png").exists()
    with pytest.raises(SolutionRejected):
        latency(tiny, bad)
    with pytest.raises(SolutionRejected):
        layout(tiny, [bad])

    # Asked for explicitly, an invalid solution is shown, marked invalid; arrays that cannot be
    # simulated at all are refused even then.
    code, out, err = _run(["latency", "bundled:tiny", path, "--show-invalid", "--json"], capsys)
    if kind in ("forged", "stacked"):
        assert code == 0, err
        row = json.loads(out)["results"][0]
        assert row["valid"] is False
        assert json.loads(out)["results"][1]["valid"] is True  # the heuristic baseline
        code, _, err = _run(["plot", "bundled:tiny", path, "--show-invalid", "-o",
                             str(tmp_path / "p.png")], capsys)
        assert code == 0 and (tmp_path / "p.png").exists()
    else:
        _one_error(code, err)


def test_a_valid_solution_is_reported_as_valid(tmp_path, capsys, good):
    path = str(tmp_path / "good.json")
    save_solution(good, path)
    code, out, err = _run(["latency", "bundled:tiny", path, "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)["results"]  # (a heuristic's solution: its own baseline, no second row)
    assert [r["valid"] for r in rows] == [True] and rows[0]["speedup_over_heuristic_percent"] == 0


def test_comparison_files_of_similar_names_are_distinct_and_reports_show_each_runs_own(tmp_path):
    names = ["a/b", "a_b", "net \U0001F600", "net \U0001F680", "tex$\\frac$", "row|\nbreak\x1b[31m"]
    problems = [generate(k, num_instructions=5 + k, name=n) for k, n in enumerate(names)]
    result = compare(problems, ["heuristic"], budget_s=5, bound=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = result.save(tmp_path / "cmp")
    glyphs = [int(g) for w in caught for g in re.findall(r"Glyph (\d+)", str(w.message))]
    assert all(g >= 32 for g in glyphs), glyphs  # no control characters reach a picture
    files = [p for k, p in paths.items() if k.startswith("solution:")]
    assert len(set(files)) == len(names)
    loaded = {s.problem: s for s in map(load_solution, files)}
    assert set(loaded) == set(names)
    for p in problems:
        assert loaded[p.name].ret == result.solutions[p.name, "heuristic"].ret
    text = (tmp_path / "cmp" / "results.md").read_text()
    assert "\x1b" not in text and "row\\|\\u000abreak\\u001b[31m" in text

    from jaxmmap.harness.report import report
    out = report([str(tmp_path / "cmp")], str(tmp_path / "report.md"), layouts=False)
    for p in problems:
        want = f"{result.solutions[p.name, 'heuristic'].ret:.6g}"
        assert any(line.startswith(f"| {md(p.name)} | heuristic | {want} |") for line in out.splitlines())
    assert "\x1b" not in out


def test_slugs_are_unique_and_stable():
    assert slug("resnet50@gpu") == "resnet50@gpu"  # plain names stay readable
    names = ["a/b", "a_b", "a b", "x\U0001F600", "x\U0001F680", "", ".", "..", "A" * 300, "A" * 301]
    slugs = [slug(n) for n in names]
    assert len(set(slugs)) == len(names)
    assert slugs == [slug(n) for n in names]
    assert all(s and not s.startswith(".") and len(s) <= 111 and "/" not in s for s in slugs)


def test_printable_and_md_escape_control_characters():
    assert printable("a\nb\x00\u202e") == "a\\u000ab\\u0000\\u202e"
    assert md("x|y") == "x\\|y"


def test_report_refuses_a_tampered_comparison(tmp_path, capsys, tiny):
    result = compare([tiny], ["heuristic"], budget_s=5, bound=False)
    paths = result.save(tmp_path / "cmp")
    path = paths["solution:tiny:heuristic"]
    save_solution(_forged(load_solution(path)), path)
    code, _, err = _run(["report", str(tmp_path / "cmp"), "-o", str(tmp_path / "r.md"),
                         "--no-layouts"], capsys)
    _one_error(code, err)
    assert "return" in err and not (tmp_path / "r.md").exists()
    assert err.startswith("error: heuristic's solution of tiny is not a valid solution"), err  # (whose it is)
    code, out, err = _run(["report", str(tmp_path / "cmp"), "-o", str(tmp_path / "r.md"),
                           "--no-layouts", "--show-invalid"], capsys)
    assert code == 0, err
    assert "heuristic (INVALID)" in out


@pytest.mark.parametrize("where,field", [
    ("top", "latency_table"), ("buffers", "sizes"), ("table", "steps"), ("solution", "retrun"),
    ("solution_buffers", "offsets")])
def test_unknown_fields_are_refused(tmp_path, tiny, good, where, field):
    if where.startswith("solution"):
        data = good.to_json()
        target = data if where == "solution" else data["buffers"]
    else:
        data = tiny.to_json()
        data["latency_tables"] = [{"step": int(tiny.target_time[0]), "buffers": [0], "latency": [2.0, 1.0]}]
        target = {"top": data, "buffers": data["buffers"], "table": data["latency_tables"][0]}[where]
    target[field] = target.get(field.rstrip("s"), 1)
    path = tmp_path / "f.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ProblemError, match=f"{field}: unknown field"):
        (load_solution if where.startswith("solution") else load_problem)(path)


def test_the_typo_of_a_field_gets_a_suggestion_and_metadata_stays_free_form(tmp_path, tiny):
    data = tiny.to_json()
    data["latency_table"] = []
    (tmp_path / "t.json").write_text(json.dumps(data))
    with pytest.raises(ProblemError, match="did you mean 'latency_tables'"):
        load_problem(tmp_path / "t.json")
    data = tiny.to_json()
    data["metadata"] = {"anything": [1, {"goes": True}]}
    (tmp_path / "m.json").write_text(json.dumps(data))
    assert load_problem(tmp_path / "m.json").metadata["anything"][1]["goes"]


# ----------------------------------------------------------------------------- lost or blocked work


def test_the_best_solution_on_disk_only_improves(tmp_path, tiny, good):
    path = str(tmp_path / "solution.json")
    worse = solve(tiny, "greedy", budget_s=5, place=False, rules=Rules()).solution  # the game's own
    assert worse.ret < good.ret
    assert keep_best(path, good, tiny) is good
    assert keep_best(path, worse, tiny).ret == good.ret
    assert load_solution(path).ret == good.ret
    save_solution(_forged(worse), path)  # a file that does not validate is replaced
    keep_best(path, worse, tiny)
    assert validate(tiny, load_solution(path)).ok


def _expert_config() -> AgentConfig:
    return expert_config()


def _problem():
    return generate(3, num_instructions=7, inplace_prob=0.3, memory_fraction=0.4, copy_bandwidth=1e6)


@pytest.mark.xdist_group("expert")  # one compile of the expert chunk per worker
def test_a_resumed_run_keeps_its_best_solution_and_logs_each_step_once(tmp_path):
    problem, config, workdir = _problem(), _expert_config(), str(tmp_path / "run")
    first = fit(problem, config, rules=RULES, max_iterations=4, padding=PAD, workdir=workdir,
                checkpoint_every=1, schedule_iterations=8)
    assert first.resumed == (0, 0)
    better = heuristic(problem, 5, 0, rules=RULES).solution
    on_disk = load_solution(os.path.join(workdir, "solution.json"))
    best = better if better.ret > on_disk.ret else on_disk
    save_solution(best, os.path.join(workdir, "solution.json"))  # e.g. train.py's prod heuristic
    with open(os.path.join(workdir, "metrics.jsonl"), "a") as f:
        f.write('{"iteration": 6, "finis')  # a kill during a write
    compiled = expert.run_chunk._cache_size()
    resumed = fit(problem, config, rules=RULES, max_iterations=8, padding=PAD, workdir=workdir)
    # the restored state is placed as a fresh one: the chunk the first run compiled serves
    assert expert.run_chunk._cache_size() == compiled
    assert load_solution(os.path.join(workdir, "solution.json")).ret >= best.ret
    rows = read_jsonl(os.path.join(workdir, "metrics.jsonl"))
    assert [r["iteration"] for r in rows] == [2, 4, 6, 8]
    text = open(os.path.join(workdir, "metrics.jsonl")).read()
    assert "NaN" not in text and "Infinity" not in text
    improvements = [r["iteration"] for r in read_jsonl(os.path.join(workdir, "improvements.jsonl"))]
    assert improvements == sorted(set(improvements))
    assert resumed.solution is not None
    # where the resumed run began (its summary counts this run's iterations, not the total)
    done = first.history[-1]
    assert resumed.resumed == (done["iteration"], sum(r["finished"] for r in first.history)) and done["iteration"] > 0


@pytest.mark.xdist_group("expert")
@pytest.mark.parametrize("damage", ["truncated_file", "empty_metadata"])
def test_a_corrupt_latest_checkpoint_falls_back_to_the_newest_intact_one(tmp_path, capfd, damage):
    problem, config = _problem(), _expert_config()
    straight = fit(problem, config, rules=RULES, max_iterations=8, padding=PAD,
                   workdir=str(tmp_path / "straight"), checkpoint_every=100)
    workdir = str(tmp_path / "run")
    fit(problem, config, rules=RULES, max_iterations=6, padding=PAD, workdir=workdir,
        checkpoint_every=1, schedule_iterations=8)
    latest = os.path.join(workdir, "checkpoints", "6")
    files = [os.path.join(d, f) for d, _, fs in os.walk(latest) for f in fs]
    if damage == "empty_metadata":
        victims = [f for f in files if os.path.basename(f) in ("_METADATA", "_CHECKPOINT_METADATA")]
        assert victims, files
        for f in victims:
            open(f, "w").close()
    else:
        big = max(files, key=os.path.getsize)
        with open(big, "r+b") as f:
            f.truncate(os.path.getsize(big) // 3)
    capfd.readouterr()
    resumed = fit(problem, config, rules=RULES, max_iterations=8, padding=PAD, workdir=workdir)
    err = capfd.readouterr().err
    assert "warning: checkpoint 6" in err and "resuming from checkpoint 4" in err
    import chex
    import jax
    chex.assert_trees_all_equal(jax.device_get(straight.state), jax.device_get(resumed.state))


def test_resuming_with_other_settings_is_refused(tmp_path):
    problem, config, workdir = _problem(), _expert_config(), str(tmp_path / "run")
    fit(problem, config, rules=RULES, max_iterations=2, padding=PAD, workdir=workdir)
    with pytest.raises(UserError, match="holds another run .*games"):
        fit(problem, dataclasses.replace(config, games=16), rules=RULES, max_iterations=4,
            padding=PAD, workdir=workdir)


def test_a_torn_last_line_is_dropped_and_repaired(tmp_path):
    path = tmp_path / "m.jsonl"
    append_jsonl(path, {"a": 1, "b": math.nan})
    append_jsonl(path, {"a": 2, "b": math.inf})
    with open(path, "a") as f:
        f.write('{"a": 3, "b"')
    assert read_jsonl(path) == [{"a": 1, "b": None}, {"a": 2, "b": None}]
    assert path.read_text() == '{"a": 1, "b": null}\n{"a": 2, "b": null}\n'
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(UserError, match="line 2"):
        read_jsonl(path)


def test_files_are_written_whole_and_strict(tmp_path):
    path = tmp_path / "x.json"
    write_json(path, {"a": 1})
    with pytest.raises(ValueError):
        write_json(path, {"a": math.nan})
    assert json.loads(path.read_text()) == {"a": 1}  # the old file stands
    assert os.listdir(tmp_path) == ["x.json"]  # no temporary left behind


def test_a_50000_buffer_problem_that_check_accepts_can_be_played(tmp_path):
    problem = generate(0, num_instructions=16_700)
    assert problem.num_buffers >= 50_000
    assert game.move_limit(problem.num_buffers) == 2 ** 31 - 1  # n*(n+1) would overflow int32
    import jax

    from jaxmmap.env.rollout import greedy_policy, rollout
    instance = make_instance(problem, Rules())
    jax.jit(lambda key: rollout(instance, key, greedy_policy, backup=True)).lower(jax.random.key(0))


@pytest.mark.slow
def test_a_50000_buffer_problem_plays_to_the_end(tmp_path, capsys):
    code, _, err = _run(["generate", "--instructions", "16700", "-o", str(tmp_path / "big.json.gz")],
                        capsys)
    assert code == 0, err
    code, out, err = _run(["play", str(tmp_path / "big.json.gz"), "--columns", "256", "-o",
                           str(tmp_path / "s.json")], capsys)
    assert code == 0, err
    assert validate(load_problem(tmp_path / "big.json.gz"), load_solution(tmp_path / "s.json")).ok


def test_sizes_beyond_the_limits_are_refused_up_front(tmp_path, monkeypatch, tiny):
    monkeypatch.setattr(problem_module, "MAX_BUFFERS", tiny.num_buffers - 1)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(tiny.to_json()))
    with pytest.raises(ProblemError, match="more than the"):
        load_problem(path)
    with pytest.raises(ProblemError, match="num_instructions"):
        generate(0, num_instructions=10 ** 9)  # refused at once, before any memory is taken
    with pytest.raises(ProblemError, match="columns"):
        Rules(columns=0)


@pytest.mark.parametrize("budget", [0, -5, math.nan, math.inf])
def test_a_budget_must_bound_the_time(tiny, budget):
    with pytest.raises(UserError, match="budget"):
        solve(tiny, "random", budget_s=budget)


def test_the_heuristic_groups_work_items_in_one_sort(tiny):
    """Same plan as grouping by a scan per key (the old quadratic way), on alias groups too."""
    problem = generate(5, num_instructions=300, inplace_prob=0.4, loop_prob=0.2)
    from jaxmmap.core.rules import discretize
    from jaxmmap.solvers.heuristic import plan
    d = discretize(problem, Rules())
    key = np.where(problem.alias_id >= 0, d.group, -1 - d.tensor)
    by_scan = sorted(int(np.flatnonzero(key == k)[0]) for k in np.unique(key))
    assert sorted(plan(problem, Rules()).order.tolist()) == by_scan


# ----------------------------------------------------------------------------- clean errors


MISTAKES = [
    ["solve", "bundled:tiny", "--solver", "nosuch"],
    ["solve", "bundled:tiny", "--option", "bogus=1"],
    ["solve", "bundled:tiny", "--option", "bogus"],
    ["solve", "bundled:tiny", "--budget", "0"],
    ["solve", "bundled:tiny", "--budget", "-5"],
    ["solve", "bundled:tiny", "--budget", "nan"],
    ["solve", "bundled:tiny", "--budget", "inf"],
    ["solve", "bundled:nosuch"],
    ["solve", "suite:nosuch"],
    ["solve", "MISSING.json", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "es", "--option", "population=0", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "es", "--option", "population=3", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "es", "--option", "sigma=-1", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "es", "--option", "max_generations=\"abc\"", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "es", "--option", "padding=[1,2]", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "mcts", "--option", "num_simulations=0", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "random", "--option", "batch=0", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "--solver", "egrl", "--option", "tournament=0", "-o", "OUT/s.json"],
    ["solve", "bundled:tiny", "-o", "/proc/s.json"],
    ["solve", "bundled:tiny", "-o", "/dev/null"],
    ["report", "EMPTY", "-o", "EMPTY"],
    ["solve", "bundled:tiny", "-o", "OUT/nodir/s.json"],
    ["play", "bundled:tiny", "--games", "0"],
    ["play", "bundled:tiny", "--games", "100000000"],
    ["play", "bundled:tiny", "--columns", "0"],
    ["play", "bundled:tiny", "--columns", "many"],
    ["generate", "--instructions", "0", "-o", "OUT/g.json"],
    ["generate", "--instructions", "1000000000", "-o", "OUT/g.json"],
    ["compare", "--instances", "bundled:tiny", "--seeds", "0", "-o", "OUT/c"],
    ["compare", "--instances", "bundled:tiny", "bundled:tiny", "-o", "OUT/c"],
    ["compare", "--instances", "bundled:tiny", "--option", "es.population=8", "-o", "OUT/c"],
    ["compare", "--instances", "bundled:tiny", "--budget", "-1", "-o", "OUT/c"],
    ["report", "OUT/nosuch"],
    ["report", "EMPTY"],
    ["check", "MISSING.json"],
    ["plot", "bundled:tiny", "MISSING.json", "--highlight", "abc", "-o", "OUT/p.png"],
    ["import", "nosuchmodule:f", "--shapes", "f32[4]", "-o", "OUT/i.json"],
    ["import", "jaxmmap.core.files:UserError", "--shapes", "f32[4]", "-o", "OUT/i.json"],
    ["import", "--hlo", "MISSING.txt", "-o", "OUT/i.json"],
    ["import", "jax.numpy:sin", "--shapes", "f32[4]", "--hlo", "MISSING.txt", "-o", "OUT/i.json"],
    ["plot", "bundled:tiny", "MISSING.json", "--highlight", "99999", "-o", "OUT/p.png"],
]


@pytest.mark.parametrize("argv", MISTAKES, ids=lambda a: "-".join(a[:4]))
def test_a_mistake_is_one_error_line_and_leaves_nothing(tmp_path, capsys, argv):
    (tmp_path / "EMPTY").mkdir()
    out_dir = tmp_path / "OUT"
    argv = [a.replace("OUT", str(out_dir)).replace("EMPTY", str(tmp_path / "EMPTY"))
            .replace("MISSING", str(tmp_path / "missing")) for a in argv]
    code, _, err = _run(argv, capsys)
    _one_error(code, err)
    assert not out_dir.exists()


def test_an_imported_function_that_fails_is_one_error_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "userfns.py").write_text("def boom(x):\n    raise RuntimeError('kaboom')\n\n"
                                         "def nothing(x):\n    return None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for fn in ("boom", "nothing"):
        code, _, err = _run(["import", f"userfns:{fn}", "--shapes", "f32[4]", "-o", "i.json"], capsys)
        lines = _one_error(code, err)
        assert f"userfns:{fn}" in lines[0]
        assert not (tmp_path / "i.json").exists()


def test_problem_files_are_written_whole(tmp_path, tiny):
    path = tmp_path / "p.json.gz"
    save_problem(tiny, path)
    with gzip.open(path) as f:
        assert json.load(f)["name"] == "tiny"
    assert sorted(os.listdir(tmp_path)) == ["p.json.gz"]
