"""Pictures of solutions and runs (matplotlib, headless): the paper's figures on our data.

* `layout`: memory layouts as in the paper's Figures 1 and 8: one rectangle per allocation
  (time by offset), a colour per tensor, copies hatched, one tensor highlighted; several
  solutions side by side (`jaxmmap plot PROBLEM SOLUTION [SOLUTION2] -o layout.png`).
* `training_curves`: best and mean return over wall time of training runs (Figures 5 and 7;
  `compare.Comparison.plot` draws the solvers' curves of a comparison).
* `speedup_bars`: the speed-up (%) of each solver over a baseline per workload (Figure 10).
* `correlation_scatter`: return against simulated speed-up (%) over all-slow memory (Figure 6).

Every function returns the matplotlib `Figure` (for notebooks) and, given `path`, also saves it
and closes it in pyplot (so that many pictures do not pile up open figures).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from jaxmmap.core.files import UserError, atomic, printable
from jaxmmap.core.problem import DROP, Problem, Solution
from jaxmmap.core.simulator import latency

__all__ = ["allocations", "correlation_scatter", "layout", "pick_tensor", "save_figure", "speedup_bars",
           "text", "training_curves"]

_UNITS = ((2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB"), (1, "B"))


def _pyplot():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def text(name: str) -> str:
    """A name as matplotlib shows it verbatim: printable, and no `$...$` math."""
    return printable(name).replace("$", r"\$")


def image_format(path: str) -> str:
    """The picture format of `path` (its extension; png without one), or `UserError` naming
    those matplotlib writes: checked before anything is drawn."""
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = path.rsplit(".", 1)[-1].lower() if "." in os.path.basename(path) else "png"
    known = FigureCanvasBase.get_supported_filetypes()
    if fmt not in known:
        raise UserError(f"{path}: cannot draw a .{fmt} picture; use one of: {', '.join(sorted(known))}")
    return fmt


def save_figure(fig, path: str, **kwargs) -> None:
    """Saves `fig` atomically (the format from the file's extension)."""
    fmt = image_format(path)
    with atomic(path, "wb") as f:
        fig.savefig(f, format=fmt, **kwargs)


def _finish(fig, path: str | None, ax=None, *, xlabel: str = "", ylabel: str = "",
            legend: int = 8, grid: str = "both"):
    """Labels, grid and legend of a one-axes chart (when `ax` is given), layout, and the file:
    a figure saved is closed (pyplot forgets it; the figure returned still draws, `display(fig)`)."""
    if ax is not None:
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(axis=grid, alpha=0.3)
        ax.legend(fontsize=legend)
        fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=120, bbox_inches="tight")
        _pyplot().close(fig)
    return fig


def allocations(solution: Solution) -> np.ndarray:
    """bool[N]: the buffers that make an allocation of their own (a NoCopy within its
    predecessor's allocation makes none). Summed per tensor: how often it enters fast memory."""
    return (np.asarray(solution.action) != DROP) & (np.asarray(solution.alloc_start) >= 0)


def pick_tensor(problem: Problem, solutions: Sequence[Solution]) -> int:
    """The tensor worth highlighting: the one whose number of allocations differs most between
    the first two solutions (the paper's tensor T, loaded several times by the agent and once by
    the heuristic), or with one solution the one allocated most often; ties go to the larger."""
    if problem.num_buffers == 0:
        return -1
    ids, dense = np.unique(problem.tensor_id, return_inverse=True)  # any ids, dense here (10**15 too)
    dense = dense.reshape(-1)

    def counts(sol):
        return np.bincount(dense[allocations(sol)], minlength=ids.size)

    first = counts(solutions[0])
    score = np.abs(first - counts(solutions[1])) if len(solutions) > 1 else first
    size = np.zeros(ids.size, dtype=np.float64)
    np.maximum.at(size, dense, problem.size.astype(np.float64))
    return int(ids[np.lexsort((size, score))[-1]])


def layout(problem: Problem, solutions: Solution | Sequence[Solution], *,
           labels: Sequence[str] | None = None, highlight: int | str | None = "auto",
           path: str | None = None, width: float = 6.0, height: float = 4.2,
           allow_invalid: bool = False):
    """Memory layouts of one or more solutions of `problem`, side by side on shared axes.

    x: the program's steps; y: the fast-memory offset, up to the capacity (`memory_size`, the
    dashed line). Each allocation is a rectangle over its steps and bytes, coloured by tensor;
    the part of it during which its copy runs is hatched (prefetch before the use, eviction
    after the write). `highlight`: a tensor id, "auto" (`pick_tensor`) or None; its allocations
    are outlined in red and marked by a red ring each, so that a block too small to see still
    shows. A legend below the panels says all this. Titles give the return, the simulated
    latency and the speed-up over all-slow memory. Every solution is validated first
    (`validator.check_solution`): an invalid one is refused, or with `allow_invalid` drawn under
    a title that says INVALID.
    """
    plt = _pyplot()

    if path is not None:
        image_format(path)
    solutions = [solutions] if isinstance(solutions, Solution) else list(solutions)
    labels = list(labels) if labels is not None else [s.solver for s in solutions]
    if len(labels) != len(solutions):
        raise UserError(f"{len(labels)} labels for {len(solutions)} solutions; give one label each")
    timelines = [latency(problem, s, allow_invalid=allow_invalid) for s in solutions]
    if highlight == "auto":
        highlight = pick_tensor(problem, solutions)
    scale, unit = next((s, u) for s, u in _UNITS if problem.memory_size >= 4 * s or s == 1)
    capacity = f"capacity {problem.memory_size / scale:.4g} {unit}"
    fig, axes = plt.subplots(1, len(solutions), figsize=(width * len(solutions), height),
                             sharey=True, squeeze=False)
    shown = 0
    for ax, solution, label, timeline in zip(axes[0], solutions, labels, timelines):
        shown += _draw_layout(ax, problem, solution, highlight, scale)
        ax.axhline(problem.memory_size / scale, color="black", linestyle="--", linewidth=0.8)
        ax.text(0.995, 0.975, capacity, transform=ax.transAxes, ha="right", va="top", fontsize=7,
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=1))
        ax.set_xlim(0, problem.num_steps)
        ax.set_ylim(0, problem.memory_size / scale * 1.02)
        ax.set_xlabel("step")
        mark = "" if timeline.valid else "INVALID (see jaxmmap validate), declared "
        ax.set_title(f"{text(label)}: {mark}return {solution.ret:.4g}, latency "
                     f"{timeline.total:.4g} ({timeline.speedup:+.2f}% vs all-slow)", fontsize=9,
                     color="black" if timeline.valid else "red")
    axes[0][0].set_ylabel(f"fast-memory offset ({unit})")
    note = "" if highlight is None else f"; highlighted: tensor {highlight}" + (
        "" if shown else " (never in fast memory here)")
    fig.suptitle(f"{text(problem.name)}{note}", fontsize=9, y=0.995)
    fig.tight_layout()
    _layout_legend(fig, plt, highlight if shown else None, capacity, columns=2 * len(solutions))
    return _finish(fig, path)


#: The highlighted tensor's colour: its outlines and the rings that mark its allocations.
HIGHLIGHT = "red"


def _draw_layout(ax, problem: Problem, solution: Solution, highlight: int | None, scale: float) -> int:
    """One panel's allocations (a rectangle each) and copies (hatched); returns how many
    allocations of the highlighted tensor it drew (each also marked by a ring at its centre)."""
    from matplotlib.patches import Rectangle

    cmap = _pyplot().get_cmap("tab20")
    rings = []
    for b in np.flatnonzero(allocations(solution)):
        tensor = int(problem.tensor_id[b])
        focus, mine = highlight is None or tensor == highlight, tensor == highlight
        x0, x1 = int(solution.alloc_start[b]), int(solution.alloc_end[b]) + 1
        y, h = solution.offset[b] / scale, problem.size[b] / scale
        ax.add_patch(Rectangle((x0, y), x1 - x0, h, facecolor=cmap(tensor % 20),
                               edgecolor=HIGHLIGHT if mine else "white", linewidth=1.6 if mine else 0.3,
                               alpha=0.95 if focus else 0.3, zorder=3 if mine else 2))
        if mine:
            rings.append(((x0 + x1) / 2, y + h / 2))
        if solution.copy_start[b] >= 0:
            c0, c1 = int(solution.copy_start[b]), int(solution.copy_end[b]) + 1
            ax.add_patch(Rectangle((c0, y), c1 - c0, h, fill=False, hatch="////",
                                   edgecolor="black", linewidth=0, alpha=0.5 if focus else 0.2,
                                   zorder=4))
    if rings:
        x, y = zip(*rings)
        ax.plot(x, y, linestyle="none", marker="o", markersize=10, markerfacecolor="none",
                markeredgecolor=HIGHLIGHT, markeredgewidth=1.5, zorder=6)
    return len(rings)


def _layout_legend(fig, plt, highlight: int | None, capacity: str, columns: int) -> None:
    """The legend under a layout's panels: what the colours, hatching, rings and line mean."""
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    cmap = plt.get_cmap("tab20")
    handles = [tuple(Patch(facecolor=cmap(k), edgecolor="white") for k in (0, 2, 4, 6)),
               Patch(facecolor="white", edgecolor="black", hatch="////", linewidth=0),
               Line2D([], [], color="black", linestyle="--", linewidth=0.8)]
    names = ["allocation (a colour per tensor)", "copy running", f"{capacity} (memory_size)"]
    if highlight is not None:
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=8, markerfacecolor="none",
                              markeredgecolor=HIGHLIGHT, markeredgewidth=1.5))
        names.append(f"tensor {highlight} (highlighted)")
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(names), columns),
               fontsize=8, frameon=False, handler_map={tuple: HandlerTuple(ndivide=None, pad=0)})


def training_curves(runs: Mapping[str, Sequence[Mapping]], *, path: str | None = None,
                    mean: bool = True):
    """Best return (solid) and mean return of the games finished since the last row (dashed)
    over wall time, one colour per run. `runs`: label -> rows of `fit`'s metrics (dicts with
    `seconds`, `best_return`, `mean_return`; `jaxmmap.harness.report.read_metrics(workdir)`)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for k, (label, rows) in enumerate(runs.items()):
        color = plt.cm.tab10(k % 10)
        t = np.array([float(r["seconds"]) for r in rows])
        best = np.array([float(r["best_return"]) for r in rows])
        finite = np.isfinite(best)
        ax.plot(t[finite], best[finite], color=color, label=text(label), drawstyle="steps-post")
        if mean:
            m = np.array([float(r.get("mean_return", math.nan)) for r in rows])
            ok = np.isfinite(m)
            ax.plot(t[ok], m[ok], color=color, linestyle="--", linewidth=0.8, alpha=0.7)
    return _finish(fig, path, ax, xlabel="wall time (s)", ylabel="return (solid: best, dashed: mean)")


def speedup_bars(speedups: Mapping[str, Mapping[str, float]], *, baseline: str = "heuristic",
                 path: str | None = None):
    """Per workload, the speed-up (%) of each solver over `baseline` (Figure 10). `speedups`:
    workload -> solver -> percent. Workloads are sorted by the first solver's speed-up."""
    plt = _pyplot()
    workloads = list(speedups)
    solvers = list(dict.fromkeys(s for row in speedups.values() for s in row))
    if solvers:
        workloads.sort(key=lambda w: -speedups[w].get(solvers[0], -math.inf))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(workloads) * max(1, len(solvers)) + 2), 4.0))
    x = np.arange(len(workloads))
    bar = 0.8 / max(1, len(solvers))
    for k, solver in enumerate(solvers):
        values = [speedups[w].get(solver, math.nan) for w in workloads]
        ax.bar(x + (k - (len(solvers) - 1) / 2) * bar, values, bar, label=text(solver),
               color=plt.cm.tab10(k % 10))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, [text(w) for w in workloads], rotation=60, ha="right", fontsize=7)
    return _finish(fig, path, ax, ylabel=f"speed-up over {baseline} (%)", grid="y")


def correlation_scatter(points: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
                        path: str | None = None):
    """Return against simulated speed-up (%) over all-slow memory, one colour per workload
    (Figure 6). `points`: workload -> (returns, speed-ups in percent: `Timeline.speedup`)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    for k, (workload, (rets, speed)) in enumerate(points.items()):
        rets, speed = np.asarray(rets, float), np.asarray(speed, float)
        spread = np.ptp(rets) if rets.size else 0.0
        x = (rets - rets.min()) / spread if spread > 0 else np.zeros_like(rets)
        ax.scatter(x, speed, s=12, color=plt.cm.tab10(k % 10), label=text(workload), alpha=0.8)
    return _finish(fig, path, ax, xlabel="return (scaled to [0, 1] per workload)",
                   ylabel="simulated speed-up over all-slow (%)", legend=7)
