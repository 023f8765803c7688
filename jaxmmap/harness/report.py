"""Reports: the paper's latency tables on our runs (`jaxmmap report RUN_OR_RESULTS... -o report.md`).

Sources are folders: a comparison's results (`jaxmmap compare -o DIR`: traces.json, solutions/,
problems/) or a training run's workdir (`train.py --workdir DIR` or `fit(workdir=...)`:
problem.json.gz, improvements.jsonl, solution.json, metrics.csv). From them the report takes, per
workload (problem), the best solution of every solver or run (of a training run: the agent's own
best, the last of its improvements), simulates each
(`jaxmmap.latency`) and writes:

* per workload: return, simulated latency, stalls, speedup over all-slow memory and over the
  heuristic (the XLA-style baseline, computed here when no source has it);
* the paper's Table 3: per solver, the mean, max and min speedup over the heuristic across
  workloads and how many workloads it improves (speedup > 0);
* the paper's Table 4: each solver's best and worst workloads;
* the paper's Table 5: the correlation of return and simulated speedup per workload, over every
  solution the sources hold (all solvers' bests and every improvement of the training runs);
* figures beside the report: speedups.png (Figure 10), correlation.png (Figure 6),
  training.png (Figures 5 and 7, when there are training runs), curves.png (the comparisons'
  return over time) and layouts/WORKLOAD.png (the best solver's layout beside the heuristic's,
  Figures 1 and 8).

A speedup over a baseline is `latency(baseline) / latency(solution) - 1`, in percent. A solver
that two sources hold for one workload (two comparisons, a run beside a comparison) gets its
source folder's name after it, so that every row is one source's.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import shutil
from collections.abc import Sequence

import numpy as np

from jaxmmap.agent.loop import IMPROVEMENT_FIELDS
from jaxmmap.core import suite as benchmarks
from jaxmmap.core.files import UserError, atomic, check_folder, inside, md, read_jsonl, slug, write_text
from jaxmmap.core.io import bundled
from jaxmmap.core.problem import Problem, Solution, load_problem, load_solution
from jaxmmap.core.simulator import correlation_of, latency
from jaxmmap.harness import plots
from jaxmmap.harness.compare import Comparison
from jaxmmap.harness.speed import BASELINE, BASELINE_BUDGET_S, baseline, speedup
from jaxmmap.harness.tables import own_cell

__all__ = ["Entry", "collect", "read_metrics", "report"]

@dataclasses.dataclass
class Entry:
    """The best solution of one solver (or training run) on one workload.

    Attributes:
      workload: the problem's name. solver: the solver (a training run's agent mode, with its
        folder's name if that is taken on the workload).
      problem, solution: what to simulate.
      others: further solutions of the same source (a training run's improvements), for the
        correlation.
      history: a training run's metric rows (empty for a comparison).
      game: of a game solver's run in a comparison, what `solve` said of its game: the game's
        own return (`raw_return`), the game played (`played`) and the placer's start
        (`placed_start`); empty otherwise.
    """

    workload: str
    solver: str
    problem: Problem
    solution: Solution
    others: list[Solution] = dataclasses.field(default_factory=list)
    history: list[dict] = dataclasses.field(default_factory=list)
    game: dict = dataclasses.field(default_factory=dict)


def read_metrics(workdir: str) -> list[dict]:
    """The metric rows of a training run (`metrics.csv`), numbers as floats. `seconds` counts
    on across resumes (each invocation's clock starts at 0: a later one is shifted past the
    earlier ones, so a run and its resumes make one curve, not several on one axis)."""
    path = os.path.join(workdir, "metrics.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]
    offset = previous = 0.0
    for row in rows:
        seconds = row.get("seconds")
        if not isinstance(seconds, float) or math.isnan(seconds):
            continue
        if seconds < previous:  # a resume: its clock started again
            offset += previous
        previous = seconds
        row["seconds"] = seconds + offset
    return rows


def collect(sources: Sequence[str]) -> tuple[list[Entry], list[str]]:
    """Entries from result and run folders, and the comparisons' curve images found."""

    entries, curves = [], []
    for source in sources:
        if os.path.exists(os.path.join(source, "traces.json")):
            comparison = Comparison.load(source)
            if not comparison.solutions:
                raise UserError(f"{source}: the comparison saved no solutions")
            for (instance, solver), solution in comparison.solutions.items():
                problem = comparison.problems.get(instance) or _known_problem(instance, source)
                entries.append(Entry(instance, _label(entries, instance, solver, source),
                                     problem, solution, game=_game(comparison, instance, solver, solution)))
            if os.path.exists(os.path.join(source, "curves.png")):
                curves.append(os.path.join(source, "curves.png"))
        elif os.path.exists(os.path.join(source, "solution.json")):
            problem_path = os.path.join(source, "problem.json.gz")
            if not os.path.exists(problem_path):
                raise UserError(f"{source}: a training run without problem.json.gz")
            problem = load_problem(problem_path)
            others = []
            improvements = os.path.join(source, "improvements.jsonl")
            if os.path.exists(improvements):  # (a torn last line of a killed run is skipped)
                others = [Solution.from_json(row["solution"])
                          for row in read_jsonl(improvements, repair=False, fields=IMPROVEMENT_FIELDS)]
            # what the run wrote: the agent's game placed physically, or the heuristic's plan
            # (prod) where that was better; the raw games stay in the correlation
            solution = load_solution(os.path.join(source, "solution.json"))
            # runs of one agent on several workloads share a row of Table 3
            label = _label(entries, problem.name, solution.solver, source,
                           taken=solution.solver == BASELINE)
            entries.append(Entry(problem.name, label, problem, solution, others,
                                 read_metrics(source)))
        elif not os.path.isdir(source):
            raise UserError(f"{source}: no such folder; give folders written by jaxmmap compare -o"
                            " or train.py --workdir")
        else:
            raise UserError(f"{source}: neither comparison results (traces.json) nor a training"
                            " run (solution.json); give folders written by jaxmmap compare -o or"
                            " train.py --workdir")
    return entries, curves


def _game(comparison: Comparison, instance: str, solver: str, solution: Solution) -> dict:
    """What `solve` said of the game of the run that wrote `solution` (its best seed's)."""
    runs = [r for r in comparison.runs if (r.instance, r.solver) == (instance, solver) and r.status == "ok"]
    run = min(runs, key=lambda r: abs(r.ret - solution.ret), default=None)
    kinds = {"raw_return": (int, float), "played": str, "placed_start": str}  # (an index edited by hand
    # may hold anything: what is not of its kind is left out)
    info = {} if run is None else run.info
    return {k: info[k] for k, kind in kinds.items() if isinstance(info.get(k), kind) and not isinstance(info[k], bool)}


def report(sources: Sequence[str], output: str = "report.md", *, layouts: bool = True,
           allow_invalid: bool = False, baseline_budget_s: float = BASELINE_BUDGET_S) -> str:
    """Writes the report (markdown) and its figures beside it; returns the markdown. Every
    solution is validated first: an invalid one is refused (`validator.SolutionRejected`), or
    with `allow_invalid` reported with "(INVALID)" after its solver and left out of the
    correlations. Workloads that no source solved with the heuristic get it run here, for at
    most `baseline_budget_s` each (the report says for which)."""

    if not sources:
        raise UserError("give at least one folder to report on")
    if os.path.isdir(output):  # (before its figures are written beside it)
        raise UserError(f"{output}: is a folder; give a file name for the report")
    folder = os.path.dirname(os.path.abspath(output))
    check_folder(folder, create=False)
    entries, curves = collect(sources)
    if not entries:
        raise UserError("nothing to report: no solutions in the sources")
    workloads = list(dict.fromkeys(e.workload for e in entries))
    valid = {}
    for e in entries:  # before the baselines run: a refusal costs nothing
        t = latency(e.problem, e.solution, allow_invalid=allow_invalid, what=f"{e.solver}'s solution of {e.workload}")
        valid[id(e.solution)] = t.valid
        if not t.valid:
            e.solver += " (INVALID)"
    baseline_added = _add_baselines(entries, workloads, baseline_budget_s)
    check_folder(folder)

    rows, solvers = _rows(entries, allow_invalid)

    lines = ["# jaxmmap report", "",
             "Sources: " + ", ".join(f"`{s}`" for s in sources) + ".",
             "Latencies are simulated (`jaxmmap.latency`: the cost model's instruction times, one "
             "copy engine, stalls) in the problems' time unit; a speedup over a baseline is "
             "`latency(baseline) / latency - 1`.", ""]
    if baseline_added:
        lines += [f"The {BASELINE} was run here ({baseline_budget_s:g} s at most each) for: "
                  f"{', '.join(baseline_added)}.", ""]

    lines += _tables(rows, solvers, workloads)
    more, points = _correlations(entries, workloads, valid, allow_invalid)
    lines += more
    figures = _figures(folder, rows, entries, workloads, curves, points, layouts=layouts,
                       allow_invalid=allow_invalid)
    lines += ["", "## Figures", ""]
    lines += [f"![{md(caption)}]({name})" for name, caption in figures.items()]
    text = "\n".join(lines) + "\n"
    write_text(output, text)
    return text


def _rows(entries: list[Entry], allow_invalid: bool) -> tuple[list[dict], list[str]]:
    """Per (workload, solver): return, simulated latency, stall, speedups over all-slow memory
    and over the {BASELINE}; and the solvers other than the baseline."""
    rows = []  # per (workload, solver)
    for e in entries:
        t = latency(e.problem, e.solution, allow_invalid=allow_invalid)
        rows.append({"workload": e.workload, "solver": e.solver, "return": e.solution.ret,
                     "latency": t.total, "stall": t.stalled, "all_slow": t.all_slow,
                     "vs_slow": speedup(t.all_slow, t.total),
                     "own": own_cell(e.game.get("raw_return"), e.game.get("played"), digits=6),
                     "start": e.game.get("placed_start", "")})
    base = {r["workload"]: r["latency"] for r in rows if r["solver"] == BASELINE}
    for r in rows:
        r["vs_baseline"] = speedup(base[r["workload"]], r["latency"])
    solvers = [s for s in dict.fromkeys(r["solver"] for r in rows) if s != BASELINE]
    return rows, solvers


def _tables(rows: list[dict], solvers: list[str], workloads: list[str]) -> list[str]:
    """The markdown of the paper's Tables 3 and 4, and the per-workload table."""
    lines = ["## Summary over workloads (the paper's Table 3)", "",
              f"| solver | mean speedup over {BASELINE} (%) | max (%) | min (%) | workloads improved |",
              "|---|---:|---:|---:|---:|"]
    summary = {}
    for s in solvers:
        v = np.array([r["vs_baseline"] for r in rows if r["solver"] == s])
        summary[s] = v
        lines.append(f"| {md(s)} | {_pct(v.mean())} | {_pct(v.max())} | {_pct(v.min())} | "
                     f"{int(np.sum(v > 1e-9))}/{v.size} |")
    lines += ["", "## Best and worst workloads (the paper's Table 4)", "",
              "| solver | best workload | speedup (%) | worst workload | speedup (%) |",
              "|---|---|---:|---|---:|"]
    for s in solvers:
        mine = [r for r in rows if r["solver"] == s]
        hi = max(mine, key=lambda r: r["vs_baseline"])
        lo = min(mine, key=lambda r: r["vs_baseline"])
        lines.append(f"| {md(s)} | {md(hi['workload'])} | {_pct(hi['vs_baseline'])} | {md(lo['workload'])} | "
                     f"{_pct(lo['vs_baseline'])} |")

    lines += ["", "## Per workload", "",
              "*game's own*: a game solver's own return and the game it played, before the placer placed "
              "its decisions; *placer's start*: what the placer's moves started from (`solve`'s "
              "`placed_start`: its *decisions*, *nothing* where no decisions placed higher, the network's "
              "*guide*, the *game* where no placement beat it, or muzero-prod's *heuristic* solution).", "",
              f"| workload | solver | return | game's own | placer's start | latency | stall | "
              f"speedup over all-slow (%) | speedup over {BASELINE} (%) |", "|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for w in workloads:
        for r in sorted((r for r in rows if r["workload"] == w), key=lambda r: r["latency"]):
            lines.append(f"| {md(w)} | {md(r['solver'])} | {r['return']:.6g} | {r['own']} | {md(r['start'])} | "
                         f"{r['latency']:.6g} | {r['stall']:.4g} | {_pct(r['vs_slow'])} | {_pct(r['vs_baseline'])} |")
    return lines


def _correlations(entries: list[Entry], workloads: list[str], valid: dict, allow_invalid: bool
                  ) -> tuple[list[str], dict]:
    """The paper's Table 5 (markdown) and its points: per workload, (returns, speedups)."""
    lines = ["", "## Return against simulated latency (the paper's Table 5)", "",
              "Over every solution the sources hold for the workload (each solver's best, every "
              "improvement of a training run). Correlations of return with speedup: 1 means the "
              "return orders solutions exactly as their simulated latency does.", "",
              "| workload | solutions | Pearson | Spearman |", "|---|---:|---:|---:|"]
    points = {}
    for w in workloads:
        mine = [e for e in entries if e.workload == w]
        pool = _unique([e.solution for e in mine if valid.get(id(e.solution), True)]
                       + [s for e in mine for s in e.others])
        points[w] = ([s.ret for s in pool], [latency(mine[0].problem, s, allow_invalid=allow_invalid).speedup
                                             for s in pool])
        c = correlation_of(*points[w])
        lines.append(f"| {md(w)} | {c['n']} | {_fmt(c['pearson'])} | {_fmt(c['spearman'])} |")
    return lines, points


def _figures(folder: str, rows, entries, workloads, curves, points, *, layouts: bool,
             allow_invalid: bool) -> dict[str, str]:
    """Draws the figures into `folder`; returns {file name: caption}."""
    figures = {"speedups.png": f"Speedup over the {BASELINE} per workload (Figure 10)",
               "correlation.png": "Return against simulated speedup (Figure 6)"}
    plots.speedup_bars({w: {r["solver"]: r["vs_baseline"] for r in rows
                            if r["workload"] == w and r["solver"] != BASELINE} for w in workloads},
                       baseline=BASELINE, path=os.path.join(folder, "speedups.png"))
    plots.correlation_scatter(points, path=os.path.join(folder, "correlation.png"))
    trained = {f"{e.solver} ({e.workload})": e.history for e in entries if e.history}
    if trained:
        plots.training_curves(trained, path=os.path.join(folder, "training.png"))
        figures["training.png"] = "Training runs: best and mean return over wall time (Figures 5, 7)"
    for k, path in enumerate(curves):
        name = f"curves-{k}.png" if len(curves) > 1 else "curves.png"
        if os.path.abspath(path) != os.path.join(folder, name):
            with open(path, "rb") as src:
                with atomic(os.path.join(folder, name), "wb") as dst:
                    shutil.copyfileobj(src, dst)
        figures[name] = "Solvers' best return over wall time (Figure 5)"
    if layouts:
        os.makedirs(inside(folder, "layouts"), exist_ok=True)
        import matplotlib.pyplot as plt
        for w in workloads:
            mine = {e.solver: e for e in entries if e.workload == w}
            best = min((r for r in rows if r["workload"] == w and r["solver"] != BASELINE),
                       key=lambda r: r["latency"], default=None)
            shown = [mine[best["solver"]]] if best else []
            shown.append(mine[BASELINE])
            name = os.path.join("layouts", f"{slug(w)}.png")
            fig = plots.layout(mine[BASELINE].problem, [e.solution for e in shown],
                               labels=[e.solver for e in shown], path=os.path.join(folder, name),
                               allow_invalid=allow_invalid)
            plt.close(fig)
            figures[name] = f"{w}: memory layouts (Figures 1, 8)"
    return figures


def _label(entries: list[Entry], workload: str, solver: str, source: str, *,
           taken: bool = False) -> str:
    """`solver`, or `solver (SOURCE FOLDER)` when the workload already has a `solver` entry
    (two comparisons, a run beside a comparison) or `taken` (a run's heuristic fallback must
    not pass for the baseline)."""
    if taken or any(e.workload == workload and e.solver == solver for e in entries):
        return f"{solver} ({os.path.basename(os.path.normpath(source))})"
    return solver


def _add_baselines(entries: list[Entry], workloads: list[str], budget_s: float) -> list[str]:
    """Runs the heuristic on the workloads that no source solved with it."""
    added = []
    for w in workloads:
        if any(e.workload == w and e.solver == BASELINE for e in entries):
            continue
        first = next(e for e in entries if e.workload == w)
        entries.append(Entry(w, BASELINE, first.problem,
                             baseline(first.problem, first.solution, budget_s=budget_s)))
        added.append(w)
    return added


def _known_problem(name: str, source: str) -> Problem:
    """A problem a comparison did not save (older results): the bundled or suite one."""

    if name in benchmarks.names():
        return benchmarks.load(name)
    try:
        return bundled(name)
    except FileNotFoundError:
        raise UserError(f"{source}: no saved problem for {name!r}, and no bundled one") from None


def _unique(solutions: list[Solution]) -> list[Solution]:
    seen, out = set(), []
    for s in solutions:
        key = (np.asarray(s.action).tobytes(), np.asarray(s.offset).tobytes(),
               np.asarray(s.copy_start).tobytes())
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _number(v: str):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _pct(x: float) -> str:
    """A percentage to 2 decimals, without a "-0.00" for a rounding hair below zero."""
    return f"{0.0 if abs(x) < 5e-3 else x:.2f}"


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"
