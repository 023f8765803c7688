"""The `jaxmmap` command line: decide which tensors of a program live in fast memory.

A PROBLEM is a file (.json or .json.gz), bundled:tiny (the small instance shipped with the
package), or suite:NAME for an instance of the benchmark suite (`jaxmmap list` shows them);
compare also takes patterns (suite:resnet*). Returns are the time the solution saves (the
game's reward), latencies the simulated run time, both in the problem's time unit
(microseconds for imported and generated problems); speed-ups are in percent.

  jaxmmap list                                   the benchmark suite
  jaxmmap solve suite:resnet18_infer@tpu_v4i-30 --solver heuristic -o sol.json
  jaxmmap latency suite:resnet18_infer@tpu_v4i-30 sol.json     (a table; --json: the data)
"""

# Each command imports what it runs when it runs (inside the `_command` functions), so that
# `jaxmmap --help` and a mistake in the arguments answer without loading JAX; the layers still
# run one way (tests/test_layers.py counts these imports too).

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from jaxmmap.core.files import UserError, check_output
from jaxmmap.core.io import columns_for, open_problem, open_problems, pressure_warning, summarize
from jaxmmap.core.problem import (
    PROBLEM_FORMAT,
    Problem,
    ProblemError,
    load_solution,
    read_json,
    save_problem,
    save_solution,
)
from jaxmmap.core.rules import COPY_SUPPLY, PLACEMENTS


def _check(args) -> int:
    data = None if args.file.startswith(("bundled:", "suite:")) else read_json(args.file)
    if isinstance(data, dict) and str(data.get("format", "")).startswith("jaxmmap.solution"):
        solution = load_solution(args.file)
        print(f"{args.file}: a well-formed solution for {solution.problem!r}, {solution.num_buffers} buffers")
        return 0
    problem = open_problem(args.file)
    summary = summarize(problem, columns_for(problem, args.columns))
    if not args.no_bound:
        summary["lp_bound"] = _bound(problem)
    print(json.dumps(summary, indent=2))
    _warn(pressure_warning(summary, summary.get("lp_bound")))
    return 0


def _bound(problem: Problem) -> float:
    from jaxmmap.solvers.cpsat import upper_bound
    return float(upper_bound(problem))


def _warn(line: str | None) -> None:
    if line:
        print(f"warning: {line}", file=sys.stderr)


def _list(args) -> int:
    from jaxmmap.core import suite
    rows = suite.info()
    print(f"{'instance':44} {'buffers':>8} {'steps':>6} {'pressure':>8}  (suite:NAME; docs/benchmarks.md)")
    for row in rows:
        print(f"{row['name']:44} {row['buffers']:>8,} {row['steps']:>6,} {row['memory_pressure']:>8.2f}")
    print("bundled:tiny (a generated program); jaxmmap generate makes more")
    return 0


def _rules(args, problem: Problem, solver: str | None = None):
    from jaxmmap.solvers import rules_for  # (the solver's own game for the options not given)
    return rules_for(problem, solver, columns=columns_for(problem, args.columns), nocopy_offset=args.nocopy_offset,
                     output_nocopy=not args.no_output_nocopy, placement=args.placement, copy_supply=args.copy_supply)


#: The most memory `play`'s batch of game states may take.
PLAY_BYTES = 16 * 2 ** 30


def _play(args) -> int:
    from jaxmmap.env import cpu, rollout
    if args.games < 1:
        raise UserError(f"--games {args.games}: play at least 1 game")
    if args.games == 1:
        cpu.one_thread()  # (one game: the CPU's thread pool only costs hand-offs)
    if args.output:
        check_output(args.output)
    problem = open_problem(args.problem)
    rules = _rules(args, problem)
    from jaxmmap.env.instance import make_instance
    fits = rollout.games_within(make_instance(problem, rules), args.games, PLAY_BYTES)
    if fits < args.games:  # (before the device is asked for more memory than it has)
        raise UserError(f"--games {args.games}: the games' states of {problem.name} would take more than"
                        f" {PLAY_BYTES / 2 ** 30:.0f} GiB; play at most {fits} at once")
    solution, summary = rollout.play(problem, args.policy, seed=args.seed, games=args.games,
                                     rules=rules, backup=not args.no_backup)
    if args.output:
        save_solution(solution, args.output)
        summary["solution"] = args.output
    print(json.dumps(summary, indent=2))
    return 0


def _solve(args) -> int:
    from jaxmmap.harness.speed import speed
    from jaxmmap.harness.tables import solve_table
    from jaxmmap.solvers import check_options, parse_options, solve
    options = parse_options(args.option).get("", {})
    if args.solver in ("muzero", "muzero-prod"):
        options.setdefault("progress", True)  # training takes minutes: show it, as train.py does
    check_options(args.solver, options, args.budget)  # mistakes first, before any work
    if args.output:
        check_output(args.output)
    problem = open_problem(args.problem)
    rules = _rules(args, problem, args.solver)
    result = solve(problem, args.solver, budget_s=args.budget, seed=args.seed, rules=rules,
                   place=False if args.no_place else None, **options)
    if args.output:
        save_solution(result.solution, args.output)
    out = {"problem": problem.name, "solver": args.solver, "return": result.solution.ret}
    heuristic = result.solution if args.solver == "heuristic" else None  # (its own baseline)
    out.update(speed(problem, result.solution, against=heuristic, budget_s=args.baseline_budget))
    out.update({"seconds": round(result.seconds, 3), "valid": True, "info": result.info,
                "trace": [[round(t, 3), r] for t, r in result.trace], "solution": args.output})
    print(json.dumps(out, indent=2) if args.json else solve_table(
        out, buffers=problem.num_buffers, steps=problem.num_steps, seed=args.seed, budget_s=args.budget))
    return 0


def _compare(args) -> int:
    from jaxmmap.core.files import check_folder
    from jaxmmap.harness.compare import compare
    from jaxmmap.solvers import parse_options
    check_folder(args.output, create=False)
    problems = open_problems(args.instances)
    result = compare(
        problems, args.solvers, budget_s=args.budget, seeds=args.seeds,
        rules=lambda p, solver: _rules(args, p, solver),
        bound=not args.no_bound, options=parse_options(args.option, per_solver=True),
        place=False if args.no_place else None,
        log=lambda line: print(line, file=sys.stderr, flush=True))
    paths = result.save(args.output)
    print(result.markdown())
    print(json.dumps({k: v for k, v in paths.items() if not k.startswith("solution:")}, indent=2))
    return 0 if all(r.status in ("ok", "skipped") for r in result.runs) else 1


def _validate(args) -> int:
    from jaxmmap.core.validator import validate
    report = validate(open_problem(args.problem), load_solution(args.solution),
                      allow_nocopy_move=args.allow_nocopy_move)
    print(report)
    return 0 if report.ok else 1


def _generate(args) -> int:
    from jaxmmap.env.generator import generate
    check_output(args.output)
    problem = generate(args.seed, num_instructions=args.instructions,
                       memory_fraction=args.memory_fraction, inplace_prob=args.inplace_prob,
                       loop_prob=args.loop_prob, latency_tables=args.latency_tables, supply=args.supply)
    save_problem(problem, args.output)
    print(f"{args.output}: {problem.num_buffers} buffers, {problem.num_steps} steps ({PROBLEM_FORMAT})")
    return 0


def _import(args) -> int:
    import warnings

    with warnings.catch_warnings():  # the importer's pressure warning: printed below, once
        warnings.simplefilter("ignore", UserWarning)
        return _import_program(args)


def _import_program(args) -> int:
    import importlib

    from jaxmmap.importer import from_hlo_text, from_jax, shape_struct
    from jaxmmap.importer.hlo import HloParseError
    check_output(args.output)
    options = dict(hardware=args.hardware, fast_memory=args.fast_memory, memory_fraction=args.memory_fraction)
    if args.hlo and args.function:
        raise UserError("give a function or --hlo, not both")
    if args.hlo:
        try:
            with open(args.hlo, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"--hlo {args.hlo}: cannot read it ({e})") from None
        problem = from_hlo_text(text, name=args.name, **options)
    elif args.function:
        module_name, _, attr = args.function.partition(":")
        if not attr:
            raise ProblemError("give the function as module:function")
        if os.getcwd() not in sys.path:  # as `python -m` would: modules of the working directory
            sys.path.insert(0, os.getcwd())
        try:
            fn = getattr(importlib.import_module(module_name), attr)
        except ImportError as e:
            raise UserError(f"cannot import {module_name} ({e})") from None
        except AttributeError:
            raise UserError(f"the module {module_name} has no function {attr!r}") from None
        if not callable(fn):
            raise UserError(f"{args.function} is not a function")
        shapes = [shape_struct(s) for s in args.shapes]
        try:
            problem = from_jax(fn, *shapes, donate_argnums=tuple(args.donate), name=args.name or attr,
                               **options)
        except (ProblemError, HloParseError):
            raise
        except Exception as e:  # noqa: BLE001 - the user's function failed to trace or compile
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise UserError(f"{args.function} could not be compiled with --shapes"
                            f" {' '.join(args.shapes) or '(none)'}: {type(e).__name__}: {first}") from None
    else:
        raise ProblemError("give a function (module:function --shapes ...) or --hlo FILE")
    save_problem(problem, args.output)
    summary = summarize(problem, columns_for(problem, "auto"))
    print(json.dumps({"file": args.output, **{k: summary[k] for k in (
        "name", "buffers", "steps", "tensors", "alias_groups", "memory_size", "peak_live_bytes",
        "memory_pressure")}}, indent=2))
    _warn(pressure_warning(summary, _bound(problem)))
    return 0


def _checked_solutions(problem: Problem, paths: list[str], show_invalid: bool) -> list:
    """The solution files, each validated before anything is reported about it: an invalid one
    is refused naming its file, unless `show_invalid` (then its output is marked invalid)."""
    from jaxmmap.core.validator import check_solution
    solutions = [load_solution(path) for path in paths]
    for path, solution in zip(paths, solutions):
        check_solution(problem, solution, what=path, allow_invalid=show_invalid)
    return solutions


def _latency(args) -> int:
    from jaxmmap.harness.speed import latencies
    from jaxmmap.harness.tables import latency_table
    problem = open_problem(args.problem)
    solutions = _checked_solutions(problem, args.solutions, args.show_invalid)
    data, ran = latencies(problem, list(zip(args.solutions, solutions)), allow_invalid=args.show_invalid,
                          budget_s=args.baseline_budget)
    print(json.dumps(data, indent=2) if args.json else latency_table(data, ran_baseline=ran))
    return 0


def _plot(args) -> int:
    from jaxmmap.harness.plots import layout
    check_output(args.output)
    highlight = args.highlight
    if highlight not in ("auto", "none"):
        try:
            highlight = int(highlight)
        except ValueError:
            raise UserError(f"--highlight {highlight}: give a tensor id, auto or none") from None
    problem = open_problem(args.problem)
    if isinstance(highlight, int) and highlight not in set(problem.tensor_id.tolist()):
        raise UserError(f"--highlight {highlight}: {problem.name} has no tensor of that id")
    solutions = _checked_solutions(problem, args.solutions, args.show_invalid)
    layout(problem, solutions, labels=args.labels, path=args.output,
           highlight=None if highlight == "none" else highlight, allow_invalid=args.show_invalid)
    print(args.output)
    return 0


def _report(args) -> int:
    from jaxmmap.harness.report import report
    text = report(args.sources, args.output, layouts=not args.no_layouts,
                  allow_invalid=args.show_invalid, baseline_budget_s=args.baseline_budget)
    print(text)
    return 0


def _solver_names() -> list[str]:
    from jaxmmap.solvers import SOLVERS
    return list(SOLVERS)


def _seconds(text: str) -> float:
    """Seconds: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a number of seconds, not {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"give a finite number of seconds >= 0, got {text}")
    return value


def _baseline_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline-budget", type=_seconds, default=10.0, metavar="S",
                   help="seconds the heuristic may take where it is run as the baseline of the "
                   "speed-ups (0: not run; speed-ups over it only against a heuristic solution given)")


def _json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print every figure as JSON (for programs) instead of the short table")


def _name(text: str) -> str:
    """A file or folder name: not empty (`-o ""` would write nothing, or write elsewhere)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"give a name, not {text!r}")
    return text


def _rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--columns", default="auto",
                   help="grid columns, or auto: the fewest (>= 256) losing <= 5%% to rounding")
    p.add_argument("--nocopy-offset", choices=("same", "lowest"), default=None,
                   help="where a NoCopy goes: its predecessor's offset (default) or the lowest free one (grid only)")
    p.add_argument("--no-output-nocopy", action="store_true",
                   help="the older game: an output reaches fast memory only by Copy (no pins)")
    p.add_argument("--placement", choices=PLACEMENTS, default=None,
                   help="grid: each move at the lowest free offset (the paper's); deferred: moves fill the load profile, "
                   "a packer places the finished game (default: the solver's own game, docs/solvers.md; else grid)")
    p.add_argument("--copy-supply", choices=COPY_SUPPLY, default=None, help="which steps of an input's copy give "
                   "supply first: near its target (the paper's), early, edf (default: the solver's own game's)")


class _Parser(argparse.ArgumentParser):
    """argparse, with a mistake in the arguments as one `error:` line (exit status 2)."""

    def error(self, message):
        print(f"error: {self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _seed(text: str) -> int:
    """A seed: a whole number in [0, 2**32)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a whole number, not {text!r}") from None
    if not 0 <= value < 2 ** 32:
        raise argparse.ArgumentTypeError(f"a seed is a whole number in [0, 2**32), got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jaxmmap", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    _solving_commands(sub)
    _result_commands(sub)
    _problem_commands(sub)
    return parser


def _solving_commands(sub) -> None:
    """check, play, solve, compare."""
    p = sub.add_parser("check", help="check a problem or solution file and summarize it")
    p.add_argument("file")
    p.add_argument("--columns", default="auto", help="grid columns for the capacity-loss figures")
    p.add_argument("--no-bound", action="store_true",
                   help="skip the LP upper bound on the return (seconds on the largest programs)")
    p.set_defaults(run=_check)

    p = sub.add_parser("list", help="list the benchmark suite's instances (suite:NAME)")
    p.set_defaults(run=_list)

    p = sub.add_parser("play", help="play the game with a simple policy and write the best solution")
    p.add_argument("problem")
    p.add_argument("--policy", choices=("random", "greedy"), default="greedy")
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument("--games", type=int, default=1, help="games played in parallel (vmap)")
    p.add_argument("--no-backup", action="store_true", help="disable the Drop-backup")
    p.add_argument("-o", "--output", type=_name, help="solution file to write")
    _rules_args(p)
    p.set_defaults(run=_play)

    p = sub.add_parser("solve", help="run a solver under a wall-clock budget; writes a validated solution")
    p.add_argument("problem")
    p.add_argument("--solver", default="greedy", help=f"one of: {', '.join(_solver_names())}")
    p.add_argument("--budget", type=float, default=10.0, help="seconds")
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument("--option", action="append", default=[],
                   help="solver option KEY=VALUE (JSON value), repeatable; e.g. games=64")
    p.add_argument("-o", "--output", type=_name)
    p.add_argument("--no-place", action="store_true",
                   help="keep the game's own placement (by default the solutions of the solvers that play the "
                   "game are placed physically: jaxmmap.place; muzero's place_share is then 0 unless given)")
    _baseline_arg(p)
    _json_arg(p)
    _rules_args(p)
    p.set_defaults(run=_solve)

    p = sub.add_parser("compare", help="run solvers on instances under one budget; write tables "
                       "and curves")
    p.add_argument("--instances", nargs="+", required=True,
                   help="PROBLEM arguments; suite:PATTERN expands (suite:*@gpu)")
    p.add_argument("--solvers", nargs="+", default=["random", "greedy", "heuristic"],
                   help=f"from: {', '.join(_solver_names())}")
    p.add_argument("--budget", type=float, default=10.0, help="seconds per run")
    p.add_argument("--seeds", type=int, default=1, help="runs per solver and instance")
    p.add_argument("--no-bound", action="store_true", help="skip the relaxation bound")
    p.add_argument("--option", action="append", default=[],
                   help="SOLVER.KEY=VALUE (JSON value), repeatable; e.g. muzero.games=64")
    p.add_argument("-o", "--output", type=_name, default="compare", help="directory to write")
    p.add_argument("--no-place", action="store_true",
                   help="keep the game's own placement of game solutions (see solve --no-place)")
    _rules_args(p)
    p.set_defaults(run=_compare)


def _result_commands(sub) -> None:
    """validate, latency, plot, report."""
    p = sub.add_parser("validate", help="check a solution against its problem")
    p.add_argument("problem")
    p.add_argument("solution")
    p.add_argument("--allow-nocopy-move", action="store_true",
                   help="accept NoCopy data moving to another offset (the paper's lowest rule)")
    p.set_defaults(run=_validate)

    p = sub.add_parser("latency", help="simulate the program under solutions; speedups over all-slow"
                       " memory and over the heuristic")
    p.add_argument("problem")
    p.add_argument("solutions", nargs="*")
    p.add_argument("--show-invalid", action="store_true",
                   help="simulate solutions the validator rejects anyway (marked INVALID; valid: false)")
    _baseline_arg(p)
    _json_arg(p)
    p.set_defaults(run=_latency)

    p = sub.add_parser("plot", help="draw the memory layouts of solutions side by side")
    p.add_argument("problem")
    p.add_argument("solutions", nargs="+")
    p.add_argument("--labels", nargs="+", help="one per solution (default: their solvers)")
    p.add_argument("--highlight", default="auto", help="a tensor id, auto or none")
    p.add_argument("-o", "--output", type=_name, default="layout.png")
    p.add_argument("--show-invalid", action="store_true",
                   help="draw solutions the validator rejects anyway (titled INVALID)")
    p.set_defaults(run=_plot)

    p = sub.add_parser("report", help="latency tables and figures from comparison results and "
                       "training runs")
    p.add_argument("sources", nargs="+", help="folders: jaxmmap compare -o DIR, train.py --workdir DIR")
    p.add_argument("-o", "--output", type=_name, default="report.md")
    p.add_argument("--no-layouts", action="store_true", help="skip the layout pictures")
    p.add_argument("--show-invalid", action="store_true",
                   help="report solutions the validator rejects anyway (marked INVALID)")
    _baseline_arg(p)
    p.set_defaults(run=_report)


def _problem_commands(sub) -> None:
    """import, generate."""
    p = sub.add_parser("import", help="make a problem from a JAX function or an HLO dump")
    p.add_argument("function", nargs="?", help="module:function to compile with jax.jit")
    p.add_argument("--shapes", nargs="*", default=[], help="argument shapes, e.g. f32[32,784]")
    p.add_argument("--donate", type=int, nargs="*", default=[], help="donated argument numbers")
    p.add_argument("--hlo", help="an optimized HLO text dump (*after_optimizations.txt)")
    p.add_argument("--hardware", default="tpu_v4i", help="tpu_v4i, gpu or dram_pmem")
    p.add_argument("--fast-memory", type=int, help="bytes of fast memory (default: the preset's)")
    p.add_argument("--memory-fraction", type=float,
                   help="fast memory as a fraction of the program's peak live bytes (e.g. 0.3): "
                   "the pressure of larger batches, where the preset's memory holds everything")
    p.add_argument("--name")
    p.add_argument("-o", "--output", type=_name, required=True)
    p.set_defaults(run=_import)

    p = sub.add_parser("generate", help="write a random program as a problem file")
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument("--instructions", type=int, default=64)
    p.add_argument("--memory-fraction", type=float, default=0.5)
    p.add_argument("--inplace-prob", type=float, default=0.1)
    p.add_argument("--loop-prob", type=float, default=0.05)
    p.add_argument("--latency-tables", action="store_true")
    p.add_argument("--supply", choices=("all_fast", "all_slow"), default="all_fast",
                   help="a step's copy supply: its time with its own buffers fast (default; copies "
                   "are never late) or all slow (the older generator's)")
    p.add_argument("-o", "--output", type=_name, required=True)
    p.set_defaults(run=_generate)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from jaxmmap.env.compilation_cache import compilation_cache
    from jaxmmap.importer.hlo import HloParseError
    from jaxmmap.solvers.base import NoGameError, Refused

    compilation_cache()
    try:
        return args.run(args)
    except (UserError, HloParseError, NoGameError, Refused) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
