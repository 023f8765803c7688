"""What `jaxmmap solve` and `jaxmmap latency` print for people: a few lines, numbers to 6
significant digits, speed-ups in percent. `--json` prints the data these tables summarize.

    print(solve_table(row))          # row: what `solve --json` prints
    print(latency_table(data))       # data: what `latency --json` prints
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jaxmmap.core.files import printable

__all__ = ["latency_table", "number", "percent", "seconds", "solve_table"]

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
