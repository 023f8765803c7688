"""What `jaxmmap solve`, `latency` and `compare` print for people: a few lines, numbers to 6
significant digits (5 in a comparison's table), speed-ups in percent. `--json` and a comparison's
results.csv and traces.json hold the data these tables summarize.

    print(solve_table(row))          # row: what `solve --json` prints
    print(latency_table(data))       # data: what `latency --json` prints
    print(comparison_table(rows, bounds, budget_s=30, seeds=3))   # `Comparison.rows()`: results.md
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jaxmmap.core.files import md, printable

__all__ = ["comparison_table", "latency_table", "number", "percent", "seconds", "short", "solve_table"]

#: The last line of both tables: where the rest is.
MORE = "speed-ups: 100 * (baseline latency / latency - 1), in percent; --json prints every figure"


def number(x: float | None, digits: int = 6) -> str:
    """`x` to `digits` significant digits, whole numbers past that with thousands separators
    ("-" for None; inf and nan as such)."""
    if x is None:
        return "-"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def percent(x: float | None) -> str:
    """A speed-up: signed, two decimals, in percent ("-" for None)."""
    return "-" if x is None else f"{float(x):+.2f}%"


def seconds(s: float) -> str:
    return f"{s:.2f} s" if s < 10 else f"{s:.1f} s" if s < 100 else f"{s:,.0f} s"


def _rows(pairs: Sequence[tuple[str, str]]) -> list[str]:
    width = max(len(k) for k, _ in pairs)
    return [f"  {k:<{width}}  {v}" for k, v in pairs]


def solve_table(row: dict, *, buffers: int | None = None, steps: int | None = None, seed: int | None = None,
                budget_s: float | None = None) -> str:
    """The summary of one `solve`: `row` is what `solve --json` prints (its return, the speed
    figures of `harness.speed.speed`, seconds, info, solution path)."""
    info, unit = row.get("info") or {}, row.get("time_unit", "problem units")
    size = f" ({buffers:,} buffers, {steps:,} steps)" if buffers is not None and steps is not None else ""
    head = f"{printable(row['solver'])} on {printable(row['problem'])}{size}"
    head += "" if seed is None else f", seed {seed}"
    head += f": {seconds(row['seconds'])}" + ("" if budget_s is None else f" of a {budget_s:g} s budget")
    ret = number(row["return"])
    bound = info.get("bound")
    if info.get("proven_optimal"):
        ret += "  (proven optimal)"
    elif isinstance(bound, (int, float)) and math.isfinite(bound) and bound > 0:
        ret += f"  ({row['return'] / bound:.4f} of the upper bound {number(bound)})"
    pairs = [("return", ret)]
    raw = info.get("raw_return")
    if raw is not None and raw != row["return"]:
        game = f"the {info['played']} game; " if info.get("played") else ""
        pairs.append(("game's own return", f"{number(raw)}  ({game}the placer started from: {info.get('placed_start')})"))
    if info.get("overran"):
        pairs.append(("overran", printable(info["overran"])))
    pairs.append(("simulated latency", f"{number(row['latency'])} {unit}  (all slow: {number(row['all_slow'])},"
                                       f" stalls: {number(row['stall'])})"))
    speed = f"{percent(row['speedup_over_all_slow_percent'])} over all-slow memory"
    if "speedup_over_heuristic_percent" in row:
        own = " (this is the heuristic)" if row["solver"] == "heuristic" else ""
        speed += f", {percent(row['speedup_over_heuristic_percent'])} over the heuristic{own}"
    else:
        speed += "; over the heuristic: not measured (--baseline-budget 0)"
    pairs.append(("speed-up", speed))
    where = row.get("solution")
    pairs.append(("solution", f"{printable(where)} (validated)" if where else "not written (give -o FILE)"))
    return "\n".join([head, *_rows(pairs), MORE])


def latency_table(data: dict, *, ran_baseline: bool = False) -> str:
    """The summary of one `latency`: a row per solution. `data` is what `latency --json` prints;
    `ran_baseline`: its last row is the heuristic run as the baseline (not a file)."""
    results = data["results"]
    all_slow = results[0]["all_slow"] if results else None
    head = (f"{printable(data['problem'])}: simulated latency in {data.get('time_unit', 'problem units')}"
            f" (all slow: {number(all_slow)})")
    titles = ("solution", "solver", "return", "latency", "stalls", "vs all-slow", "vs heuristic")
    cells = []
    for k, r in enumerate(results):
        name = "(heuristic, run now)" if ran_baseline and k == len(results) - 1 else printable(r["solution"])
        cells.append((name + ("" if r["valid"] else " INVALID"), printable(r["solver"]), number(r["return"]),
                      number(r["latency"]), number(r["stall"]), percent(r["speedup_over_all_slow_percent"]),
                      percent(r.get("speedup_over_heuristic_percent"))))
    widths = [max([len(t), *(len(c[i]) for c in cells)]) for i, t in enumerate(titles)]

    def line(values):
        return "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    return "\n".join([head, line(titles), *(line(c) for c in cells), MORE])


def short(x: float | None, digits: int = 5) -> str:
    """`x` to `digits` significant digits; empty for None, inf and nan (a comparison's table)."""
    return "" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def own_cell(raw: float | None, played: str | None, digits: int = 5) -> str:
    """The "game's own" cell of a table: a game solver's own return to `digits` significant digits
    and the game it played ("2.5336 deferred"); empty where there is no such return (a solver
    that places physically)."""
    value = short(raw, digits)
    return f"{value} {played or ''}".strip() if value else ""


def comparison_table(rows: list[dict], bounds: dict[str, float], *, budget_s: float, seeds: int,
                     machine: str = "") -> str:
    """A comparison's results.md: per instance, a row per solver (`Comparison.rows()`), best
    first; `bounds`: each instance's upper bound (where there is one)."""
    lines = [
        "# Solver comparison",
        "",
        f"Budget {budget_s:g} s of wall time per run (compilation included), "
        f"{seeds} seed(s) per solver; {machine}. *Return*: the best found "
        "within the budget, mean over the seeds' validated runs (± standard deviation); "
        "*game's own*: the game's return, before the placer placed its decisions physically "
        "(game solvers), and the game played (*grid*: the paper's; *deferred*: placed when the game "
        "ends; each solver's own unless the rules were given); *placer's start*: what its moves "
        "started from (the *decisions*, or *nothing* where no decisions placed higher, or the "
        "network's *guide*, or the decisions placed by CP-SAT, *exact*, or muzero-prod's *heuristic* solution; "
        "*game*: no placement beat the game's own "
        "solution; runs out of the seeds'); "
        "*bound*: an upper bound on any valid solution's return; *vs heuristic*: the "
        "simulated speed-up of the best solution over the heuristic's, in percent "
        "(`jaxmmap.latency`); *time to best*: when that "
        "solution was found; *s used*: wall time of the run (solvers stop between batches, "
        "so it can pass the budget).",
        "",
    ]
    for instance in dict.fromkeys(r["instance"] for r in rows):
        bound = bounds.get(instance, math.nan)
        lines += [f"## {md(instance)}", ""]
        if not math.isnan(bound):
            lines += [f"Upper bound: {short(bound)}", ""]
        lines += ["| solver | return | game's own | placer's start | best | % of bound | vs heuristic (%) "
                  "| time to best (s) | s used | valid | note |", "|---|---:|---:|---|" + "---:|" * 6 + "---|"]
        for r in sorted((r for r in rows if r["instance"] == instance),
                        key=lambda r: -r["mean_return"] if r["valid"] else math.inf):
            ret = (f"{short(r['mean_return'])} ± {short(r['std_return'])}" if r["valid"] > 1
                   else short(r["mean_return"]))
            pct = "" if math.isnan(r["fraction_of_bound"]) else f"{100 * r['fraction_of_bound']:.1f}"
            valid = f"{r['valid']}/{r['runs']}" + "".join(
                f", {r[k]} {k}" for k in ("invalid", "skipped", "errors") if r[k])
            vs = r["speedup_over_heuristic_percent"]
            vs = "" if math.isnan(vs) else f"{vs:+.2f}"
            own = own_cell(r["raw_return"], r["played"])
            lines.append(f"| {md(r['solver'])} | {ret} | {own} | {md(r['placed_start'])} | "
                         f"{short(r['best_return'])} | {pct} | {vs} | "
                         f"{short(r['time_to_best'], 3)} | {short(r['seconds'], 3)} | {valid} | "
                         f"{md(r['note'][:80])} |")
        lines.append("")
    return "\n".join(lines)
