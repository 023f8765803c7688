"""A fair comparison of solvers: the same instances, the same wall-clock budget, every solution
validated, results as a table and as reward-over-time curves (the paper's Figure 5).

    from jaxmmap.harness import compare
    result = compare.compare([problem], ["random", "greedy", "heuristic"], budget_s=10, seeds=3)
    result.save("runs/compare")   # results.csv, results.md, curves.png, traces.json

or `jaxmmap compare --instances suite:resnet* bundled:tiny --solvers random heuristic es --budget 30 -o runs/cmp`.

Each (instance, solver, seed) is one run of `jaxmmap.solvers.solve` under `budget_s` seconds of
wall time, compilation included (it is part of what using a solver costs), each game solver in its
own game unless the rules are given (`solvers.rules_for`): what is compared is the validated,
physically placed return, the same in every game. A run ends as `ok`
(its solution passed the independent validator), `invalid` (the validator rejected it: a solver
bug, reported and never counted), `skipped` (the solver raises `solvers.base.Refused`: it is
not made for the instance, like `exhaustive` above its size limit) or `error` (any other
exception). Returns are reported against an upper bound per instance: the smaller of the fast
relaxation bound (`jaxmmap.solvers.cpsat.upper_bound`, valid for every solution the validator
accepts) and any bound CP-SAT proved in the same comparison (valid for every game solution and
every physical one whose copies fit the supply in the game's integer ticks; the bound is never
below the best validated return, so that a rounding hair cannot push a fraction above 1).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import platform
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence

import jax
import numpy as np

from jaxmmap.core.clock import settle
from jaxmmap.core.files import (
    UserError,
    atomic,
    check_folder,
    check_writable,
    finite,
    inside,
    printable,
    slug,
    write_json,
    write_text,
)
from jaxmmap.core.problem import Problem, load_problem, load_solution, read_json, save_problem, save_solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import SolutionRejected
from jaxmmap.harness.plots import _pyplot, save_figure, text
from jaxmmap.harness.speed import speeds
from jaxmmap.harness.tables import comparison_table, short
from jaxmmap.solvers import check_options, rules_for, solve
from jaxmmap.solvers.base import Refused
from jaxmmap.solvers.cpsat import upper_bound

__all__ = ["Comparison", "Run", "compare"]

STATUSES = ("ok", "invalid", "skipped", "error")
SETTLE_S = 300.0  # the longest wait, after a run that overran its budget, for its compile to end


@dataclasses.dataclass(frozen=True)
class Run:
    """One solver on one instance with one seed.

    Attributes:
      instance, solver, seed: what ran.
      status: "ok", "invalid", "skipped" or "error" (module docstring).
      ret: the best return found within the budget (solvers check the clock between batches,
        so a run can go on past it; what it finds then does not count here). If the first
        solution came only after the budget, its return (nan unless ok).
      final_ret: the best return at the end of the run (the solution that was validated and
        saved).
      seconds: wall time used.
      time_to_best: seconds until the solution counted in `ret` was found (nan unless ok).
      trace: (seconds, best return) at every improvement.
      info: the solver's own figures.
      message: why a run is not ok.
    """
    instance: str
    solver: str
    seed: int
    status: str
    ret: float
    final_ret: float
    seconds: float
    time_to_best: float
    trace: tuple[tuple[float, float], ...]
    info: dict
    message: str = ""


@dataclasses.dataclass
class Comparison:
    """All runs of a comparison, the bound of each instance, and how to write them out.

    Attributes:
      runs: every run, in the order they ran.
      bounds: instance name -> upper bound on the return of any valid solution.
      budget_s, seeds: the settings.
      environment: machine, Python version, command line.
      solutions: (instance, solver) -> the best validated `Solution` of that solver.
      problems: instance name -> its `Problem` (saved beside the solutions, so that a results
        folder can be reported on alone: `jaxmmap report`).
      speed: (instance, solver) -> the simulated figures of its best solution
        (`harness.speed.speed`: latency, speed-up over the heuristic in percent).
    """
    runs: list[Run]
    bounds: dict[str, float]
    budget_s: float
    seeds: int
    environment: dict
    solutions: dict = dataclasses.field(default_factory=dict, repr=False)  # best per key
    problems: dict = dataclasses.field(default_factory=dict, repr=False)
    speed: dict = dataclasses.field(default_factory=dict, repr=False)

    def rows(self) -> list[dict]:
        """One row per (instance, solver): statistics over the seeds' ok runs."""
        out = []
        keys = dict.fromkeys((r.instance, r.solver) for r in self.runs)
        for instance, solver in keys:
            runs = [r for r in self.runs if r.instance == instance and r.solver == solver]
            ok = [r for r in runs if r.status == "ok"]
            rets = np.array([r.ret for r in ok])
            bound = self.bounds.get(instance, math.nan)
            row = {"instance": instance, "solver": solver, "runs": len(runs), "valid": len(ok), "bound": bound,
                   **{k: sum(r.status == s for r in runs) for k, s in (("invalid",) * 2, ("skipped",) * 2,
                                                                         ("errors", "error"))}}
            raw = [r.info["raw_return"] for r in ok if "raw_return" in r.info]
            row["raw_return"] = float(np.mean(raw)) if raw else math.nan  # before the placer
            played = Counter(r.info["played"] for r in ok if r.info.get("played")).most_common(1)
            row["played"] = played[0][0] if played else ""  # (the game: its placement rule)
            starts = Counter(r.info["placed_start"] for r in ok if r.info.get("placed_start")).most_common()
            row["placed_start"] = ", ".join(f"{s} {k}/{len(ok)}" if k < len(ok) else s for s, k in starts)
            if ok:
                row.update(mean_return=float(rets.mean()), std_return=float(rets.std()),
                           best_return=float(rets.max()),
                           fraction_of_bound=_fraction(float(rets.mean()), bound),
                           time_to_best=float(np.mean([r.time_to_best for r in ok])),
                           seconds=float(np.mean([r.seconds for r in ok])))
            else:
                row.update(mean_return=math.nan, std_return=math.nan, best_return=math.nan,
                           fraction_of_bound=math.nan, time_to_best=math.nan, seconds=math.nan)
            fast = self.speed.get((instance, solver), {})
            row["latency"] = _float(fast.get("latency", math.nan))
            row["speedup_over_heuristic_percent"] = _float(fast.get("speedup_over_heuristic_percent", math.nan))
            row["note"] = next((r.message for r in runs if r.status != "ok"), "")
            out.append(row)
        return out


    @classmethod
    def load(cls, directory: str | os.PathLike) -> Comparison:
        """Reads back what `save` wrote: the runs, and the solutions and problems it saved. An
        index that `compare` did not write (a hand edit) is `UserError`, not a traceback."""
        path = os.path.join(os.fspath(directory), "traces.json")
        try:
            return cls._load(os.fspath(directory), read_json(path))
        except UserError:
            raise
        except (KeyError, ValueError, TypeError, AttributeError, IndexError, ArithmeticError) as e:
            raise UserError(f"{path}: not an index that jaxmmap compare writes ({type(e).__name__}: "
                            f"{str(e)[:80]}); run compare again") from None

    @classmethod
    def _load(cls, directory: str, data) -> Comparison:
        budget = float(data["budget_s"])
        runs = []
        for r in data["runs"]:
            trace = tuple((float(t), float(v)) for t, v in r["trace"])
            if r["status"] == "ok":
                final = r.get("final_ret", trace[-1][1] if trace else r["ret"])
                found, ret = _at_budget(trace, budget, final)
            else:
                final, found, ret = math.nan, math.nan, math.nan
            runs.append(Run(r["instance"], r["solver"], int(r["seed"]), r["status"], ret, final,
                            _float(r["seconds"]), found, trace, r.get("info", {}),
                            r.get("message", "")))
        files = data.get("files", {})
        solutions = {(instance, solver): load_solution(inside(directory, path))
                     for instance, entry in files.items()
                     for solver, path in entry.get("solutions", {}).items()}
        problems = {instance: load_problem(inside(directory, entry["problem"]))
                    for instance, entry in files.items() if "problem" in entry}
        folder = os.path.join(directory, "solutions")
        if "files" not in data and os.path.isdir(folder):  # saved before the index
            for name in sorted(os.listdir(folder)):  # <instance>.<solver>.json.gz
                if name.endswith(".json.gz"):
                    solution = load_solution(os.path.join(folder, name))
                    solutions[solution.problem, name[: -len(".json.gz")].rsplit(".", 1)[1]] = solution
        speed = {(row["instance"], row["solver"]): row for row in data.get("speed", [])}
        return cls(runs=runs, bounds={k: _float(v) for k, v in data["bounds"].items()},
                   budget_s=budget, seeds=int(data["seeds"]), environment=data["environment"],
                   solutions=solutions, problems=problems, speed=speed)

    def save(self, directory: str | os.PathLike, *, solutions: bool = True) -> dict[str, str]:
        """Writes results.csv (one line per run), results.md (the table), traces.json and
        curves.png; with `solutions`, the best validated solution of each (instance, solver)
        under solutions/ and the problems under problems/ (traces.json lists them). Returns the
        paths written."""
        directory = check_folder(directory)
        paths = {name: os.path.join(directory, name)
                 for name in ("results.csv", "results.md", "traces.json", "curves.png")}
        files: dict[str, dict] = {}
        if solutions:
            for (instance, solver), solution in self.solutions.items():
                rel = os.path.join("solutions", f"{slug(instance)}.{slug(solver)}.json.gz")
                os.makedirs(inside(directory, "solutions"), exist_ok=True)
                save_solution(solution, os.path.join(directory, rel))
                files.setdefault(instance, {}).setdefault("solutions", {})[solver] = rel
                paths[f"solution:{instance}:{solver}"] = os.path.join(directory, rel)
            for instance, problem in self.problems.items():
                rel = os.path.join("problems", f"{slug(instance)}.json.gz")
                os.makedirs(inside(directory, "problems"), exist_ok=True)
                save_problem(problem, os.path.join(directory, rel))
                files.setdefault(instance, {})["problem"] = rel
        self.write_csv(paths["results.csv"])
        write_text(paths["results.md"], self.markdown())
        self.plot(paths["curves.png"])
        # The index last: a folder is a comparison (for `report`) once its other files are whole.
        write_json(paths["traces.json"], finite(_plain({
            "budget_s": self.budget_s, "seeds": self.seeds, "bounds": self.bounds,
            "environment": self.environment, "runs": [dataclasses.asdict(r) for r in self.runs],
            "speed": [{"instance": i, "solver": s, **row} for (i, s), row in self.speed.items()],
            "files": files})))
        return paths

    def write_csv(self, path: str) -> None:
        fields = ["instance", "solver", "seed", "status", "return", "final_return", "bound",
                  "fraction_of_bound", "time_to_best", "seconds", "message"]
        with atomic(path) as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            for r in self.runs:
                bound = self.bounds.get(r.instance, math.nan)
                writer.writerow({"instance": r.instance, "solver": r.solver, "seed": r.seed,
                                 "status": r.status, "return": _num(r.ret),
                                 "final_return": _num(r.final_ret), "bound": _num(bound),
                                 "fraction_of_bound": _num(_fraction(r.ret, bound)),
                                 "time_to_best": _num(r.time_to_best),
                                 "seconds": _num(r.seconds), "message": r.message})

    def markdown(self) -> str:
        """results.md: a table per instance (`tables.comparison_table`)."""
        return comparison_table(self.rows(), self.bounds, budget_s=self.budget_s, seeds=self.seeds,
                                machine=self.environment.get("machine", ""))

    def plot(self, path: str) -> None:
        """Best return over wall time per solver and instance (mean over seeds, shaded min-max),
        as a fraction of the instance's bound where there is one."""
        plt = _pyplot()

        instances = list(dict.fromkeys(r.instance for r in self.runs))
        solvers = list(dict.fromkeys(r.solver for r in self.runs))
        cols = min(3, len(instances))
        rows = -(-len(instances) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
        # Solvers check the clock between batches, so a run may end past the budget.
        last = max([t for r in self.runs for t, _ in r.trace] + [self.budget_s])
        grid = np.linspace(0.0, 1.02 * last, 400)
        colors = {s: plt.cm.tab10(k % 10) for k, s in enumerate(solvers)}
        for ax, instance in zip(axes.flat, instances):
            bound = self.bounds.get(instance, math.nan)
            scale = bound if np.isfinite(bound) and bound > 0 else 1.0
            for solver in solvers:
                runs = [r for r in self.runs if r.instance == instance and r.solver == solver
                        and r.status == "ok" and r.trace]
                if not runs:
                    continue
                curves = np.array([_step(r.trace, grid) for r in runs]) / scale
                with warnings.catch_warnings():  # before a first solution: nan, not a warning
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mean = np.nanmean(curves, axis=0)
                    low, high = np.nanmin(curves, axis=0), np.nanmax(curves, axis=0)
                ax.plot(grid, mean, drawstyle="steps-post", color=colors[solver], label=text(solver),
                        linewidth=1.6, alpha=0.9)
                if len(runs) > 1:
                    ax.fill_between(grid, low, high, step="post", color=colors[solver], alpha=0.2)
            if scale != 1.0:
                ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8, label="bound")
            ax.set_ylabel("return / upper bound" if scale != 1.0 else "return")
            ax.axvline(self.budget_s, color="grey", linestyle=":", linewidth=0.8)
            ax.set_title(text(instance), fontsize=9), ax.set_xlabel("wall time (s)"), ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(instances):]:
            ax.axis("off")
        legend = {}  # label -> its first handle
        for ax in axes.flat:
            legend.update({k: h for h, k in zip(*ax.get_legend_handles_labels()) if k not in legend})
        fig.tight_layout()  # then the legend under the panels, in as many columns as fit (about 6 pt a character)
        fit = int(fig.get_figwidth() * 72 / (6 * (max(map(len, legend), default=0) + 6)))
        fig.legend(legend.values(), legend.keys(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=max(1, min(len(legend), fit)), frameon=False)
        save_figure(fig, path, dpi=110, bbox_inches="tight")
        plt.close(fig)


def compare(problems: Sequence[Problem], solvers: Sequence[str], *, budget_s: float,
            seeds: int = 1, rules: Rules | Callable[[Problem, str], Rules] | None = None,
            options: dict[str, dict] | None = None, bound: bool = True,
            log: Callable[[str], None] | None = None, place: bool | None = None) -> Comparison:
    """Runs every solver on every problem with seeds 0..seeds-1.

    Args:
      problems: the instances (their names label the results; they must be distinct).
      solvers: names in `jaxmmap.solvers.SOLVERS`.
      budget_s: wall-clock seconds per run.
      seeds: runs per (instance, solver).
      rules: the game's rules, or a function of the problem and the solver's name; default: each
        solver's own game (`solvers.rules_for`).
      options: per solver, extra keyword arguments (e.g. {"es": {"population": 64}}).
      bound: compute the relaxation bound of each instance (`cpsat.upper_bound`).
      log: called with one line per finished run (e.g. `print`).
      place: `solvers.solve`'s option: place game solutions physically (default: for the
        solvers that play the game, within their budget); their game's own return is shown beside.
    """
    options = _check_arguments(problems, solvers, budget_s, seeds, options)
    runs: list[Run] = []
    bounds: dict[str, float] = {}
    best: dict[tuple[str, str], object] = {}
    speed: dict[tuple[str, str], dict] = {}
    for problem in problems:
        games = {solver: rules_for(problem, solver) if rules is None else
                 rules(problem, solver) if callable(rules) else rules for solver in solvers}
        if bound:  # (of the rules only whether pins are allowed counts: the same in every game)
            bounds[problem.name] = float(upper_bound(problem, rules=games[solvers[0]]))
        cpsat_bound = math.inf
        for solver in solvers:
            for seed in range(seeds):
                run, result = _run(problem, solver, seed, budget_s, games[solver], place,
                                   options.get(solver, {}))
                settle(SETTLE_S)  # (a run that overran left its compile running: the next waits for it)
                if result is not None:
                    key = (problem.name, solver)
                    if key not in best or result.solution.ret > best[key].ret:
                        best[key] = result.solution
                    proven = result.info.get("bound")
                    if solver == "cpsat" and proven is not None and np.isfinite(proven):
                        cpsat_bound = min(cpsat_bound, float(proven))
                runs.append(run)
                if log is not None:
                    log(f"{problem.name} {solver} seed {seed}: {run.status} "
                        f"{short(run.ret)} in {run.seconds:.1f}s {run.message[:100]}")
        # CP-SAT's bound holds for game solutions and for physical ones whose copies fit the
        # supply in whole ticks; another physical solution could pass it by a rounding hair.
        best_ok = max((r.final_ret for r in runs
                       if r.instance == problem.name and r.status == "ok"), default=-math.inf)
        if math.isfinite(cpsat_bound):
            bounds[problem.name] = min(bounds.get(problem.name, math.inf),
                                       max(cpsat_bound, best_ok))
        mine = speeds(problem, {solver: s for (name, solver), s in best.items() if name == problem.name})
        speed.update({(problem.name, solver): row for solver, row in mine.items()})
        jax.clear_caches()  # (each compiled CPU program keeps its code mapped: 36 runs of 5 solvers used them all up)
    environment = {"machine": _machine(), "python": platform.python_version(),
                   "argv": " ".join(sys.argv)}
    return Comparison(runs=runs, bounds=bounds, budget_s=budget_s, seeds=seeds,
                      environment=environment, solutions=best,
                      problems={p.name: p for p in problems}, speed=speed)


def _check_arguments(problems, solvers, budget_s, seeds, options) -> dict:
    """Every mistake is found before the first run, not after an hour: `UserError`. Returns the
    options ({} for None)."""
    names = [p.name for p in problems]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"instances must have distinct names; {', '.join(map(repr, twice))}"
                        f" {'appears' if len(twice) == 1 else 'appear'} more than once (rename one:"
                        " the name labels its results and files)")
    if not problems or not solvers:
        raise UserError("give at least one instance and one solver")
    for p in problems:  # what the result files must hold, checked before the first run
        check_writable({"name": p.name, "metadata": p.metadata}, f"instance {printable(p.name)!r}")
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise UserError(f"seeds must be a whole number >= 1, got {seeds!r}")
    options = options or {}
    for name in options:
        if name not in solvers:
            raise UserError(f"options given for {name!r}, which is not among the solvers compared"
                            f" ({', '.join(solvers)})")
    for solver in solvers:  # every mistake is found before the first run, not after an hour
        check_options(solver, options.get(solver, {}), budget_s)
    return options


def _run(problem: Problem, solver: str, seed: int, budget_s: float, rules: Rules, place, options
         ) -> tuple[Run, object]:
    """One run of `solver` and its row; the `Result` too when it succeeded (else None)."""
    start = time.perf_counter()
    try:
        result = solve(problem, solver, budget_s=budget_s, seed=seed, rules=rules, place=place,
                       **options)
    except SolutionRejected as e:  # (a solver's bug)
        return _failed(problem, solver, seed, "invalid", start, str(e)), None
    except Refused as e:  # the solver is not made for this instance
        return _failed(problem, solver, seed, "skipped", start, str(e)), None
    except Exception as e:  # noqa: BLE001 - a harness reports, it does not stop
        return _failed(problem, solver, seed, "error", start, f"{type(e).__name__}: {e}"), None
    trace = tuple((float(t), float(r)) for t, r in result.trace)
    found, at_budget = _at_budget(trace, budget_s, float(result.solution.ret))
    return Run(problem.name, solver, seed, "ok", at_budget, float(result.solution.ret),
               float(result.seconds), found, trace, _plain(result.info)), result


# ----------------------------------------------------------------------------- helpers


def _failed(problem: Problem, solver: str, seed: int, status: str, start: float,
            message: str) -> Run:
    return Run(problem.name, solver, seed, status, math.nan, math.nan, time.perf_counter() - start,
               math.nan, (), {}, message.strip().splitlines()[0] if message.strip() else status)


def _at_budget(trace, budget_s: float, final: float) -> tuple[float, float]:
    """(time, return) of the best solution found within the budget, or of the first one."""
    within = [p for p in trace if p[0] <= budget_s] or list(trace[:1])
    return within[-1] if within else (0.0, final)


def _step(trace, grid: np.ndarray) -> np.ndarray:
    """The best return at each time of `grid` (nan before the first solution)."""
    times, values = np.array([t for t, _ in trace]), np.array([r for _, r in trace])
    k = np.searchsorted(times, grid, side="right") - 1
    return np.where(k >= 0, values[np.maximum(k, 0)], np.nan)


def _fraction(ret: float, bound: float) -> float:
    return ret / bound if np.isfinite(ret) and np.isfinite(bound) and bound > 0 else math.nan


def _num(x: float):
    return "" if x is None or not np.isfinite(x) else repr(float(x))


def _float(v) -> float:
    """A number of traces.json (null where it was nan)."""
    return math.nan if v is None else float(v)


def _plain(info: dict) -> dict:
    return json.loads(json.dumps(info, default=_jsonable))


def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def _machine() -> str:
    import jax
    devices = jax.devices()
    return (f"{devices[0].platform.upper()} x{len(devices)} ({devices[0].device_kind}), "
            f"{os.cpu_count()} CPU cores")
