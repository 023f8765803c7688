"""Regenerates the bundled benchmark suite (jaxmmap/data/suite) and docs/benchmarks.md.

    python benchmarks/make_suite.py            # all instances (a few minutes on 2 CPU cores)
    python benchmarks/make_suite.py --only gpt_small_train

Each instance is one program of `benchmarks/suite/workloads.py`, compiled for the CPU (its optimized,
scheduled HLO), imported with `jaxmmap.importer` on one hardware preset. An entry may give a
fraction: the fast memory is then that fraction of the program's peak live bytes where this is
smaller than the preset's (the pressure a real chip sees with larger batches or several programs
at once), and the instance's name says so (`-NN`). Deterministic for a given jax version: a rerun
writes the same bytes (the problem files, index.json and docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.suite import workloads  # noqa: E402
from jaxmmap.core.io import summarize  # noqa: E402
from jaxmmap.core.problem import save_problem  # noqa: E402
from jaxmmap.core.rules import auto_columns  # noqa: E402
from jaxmmap.importer import from_hlo_text  # noqa: E402

# (workload, hardware, fast memory as a fraction of peak live bytes, or None: the preset's)
SUITE = [
    ("alexnet_infer_b32", "gpu", 0.5),
    ("alexnet_train_b32", "tpu_v4i", 0.5),
    ("resnet18_infer", "tpu_v4i", 0.3),
    ("resnet18_train", "gpu", None),
    ("resnet50_infer", "gpu", None),
    ("resnet50_infer", "dram_pmem", 0.25),
    ("resnet50_train", "tpu_v4i", None),
    ("mnasnet_infer", "tpu_v4i", 0.3),
    ("mnasnet_train", "gpu", None),
    ("wavenet_infer", "tpu_v4i", 0.3),
    ("wavenet_train", "gpu", None),
    ("transformer_bf16_infer", "tpu_v4i", 0.3),
    ("transformer_bf16_train", "gpu", 0.5),
    ("lstm_infer", "tpu_v4i", 0.3),
    ("gru_infer_unrolled", "gpu", 0.3),
    ("lstm_stacked_infer_unrolled", "dram_pmem", 0.25),
    ("nmt_infer", "tpu_v4i", 0.3),
    ("nmt_train", "gpu", 0.5),
    ("alphatensor_like", "tpu_v4i", 0.3),
    ("alphatensor_like_train", "gpu", 0.5),
    ("gpt_small_train", "tpu_v4i", 0.3),
    ("gpt_small_train", "dram_pmem", 0.25),
    ("gpt_medium_train", "gpu", None),
    ("gpt_train_donated", "gpu", None),
    ("gpt_large_train", "tpu_v4i", None),
]


def build(workload: str, hardware: str, fraction: float | None, cache: dict):
    if workload not in cache:
        t0 = time.perf_counter()
        cache[workload] = (workloads.compiled_hlo_text(workloads.get(workload)), time.perf_counter() - t0)
    text, seconds = cache[workload]
    problem = from_hlo_text(text, hardware=hardware, name=f"{workload}@{hardware}")
    if fraction is not None:
        memory = max(1, int(fraction * summarize(problem)["peak_live_bytes"]))
        if memory < problem.memory_size:
            problem = from_hlo_text(text, hardware=hardware, fast_memory=memory,
                                    name=f"{workload}@{hardware}-{int(fraction * 100)}")
            problem.metadata["fast_memory_fraction"] = fraction
    return problem, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="workloads to rebuild (default: all)")
    parser.add_argument("--out", default=os.path.join(ROOT, "jaxmmap", "data", "suite"))
    parser.add_argument("--docs", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cache, rows = {}, []
    for workload, hardware, fraction in SUITE:
        if args.only and workload not in args.only:
            continue
        problem, seconds = build(workload, hardware, fraction, cache)
        save_problem(problem, os.path.join(args.out, f"{problem.name}.json.gz"))
        s = summarize(problem, auto_columns(problem))
        row = {"name": problem.name, "workload": workload, "family": workloads.get(workload).family,
               "hardware": hardware, "buffers": s["buffers"], "steps": s["steps"],
               "tensors": s["tensors"], "alias_groups": s["alias_groups"],
               "memory_size": s["memory_size"], "memory_pressure": round(s["memory_pressure"], 3),
               "latency_tables": s["latency_tables"], "columns": s["capacity_loss"]["columns"],
               "rounding_loss": round(s["capacity_loss"]["size_rounding"], 4)}
        rows.append(row)  # no timings in the files: a rerun writes the same bytes
        print(json.dumps({**row, "compile_seconds": round(seconds, 1)}), flush=True)
    if args.only:
        return
    rows.sort(key=lambda r: r["buffers"])
    import jax
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"jax": jax.__version__, "instances": rows}, f, indent=1)
    with open(args.docs, "w") as f:
        f.write(DOC_HEAD)
        f.write("| instance | family | hardware | buffers | steps | tensors | alias groups |"
                " fast memory | pressure | columns (auto) | rounding loss |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| `{r['name']}` | {r['family']} | {r['hardware']} | {r['buffers']:,} |"
                    f" {r['steps']:,} | {r['tensors']:,} | {r['alias_groups']} |"
                    f" {r['memory_size'] / 2 ** 20:,.1f} MiB | {r['memory_pressure']:.2f} |"
                    f" {r['columns']} | {100 * r['rounding_loss']:.1f}% |\n")
        f.write(f"\nMade with jax {jax.__version__} on the CPU backend.\n")


DOC_HEAD = """# The benchmark suite

Problems made from real JAX/flax programs (`benchmarks/suite/workloads.py`), compiled by XLA for the CPU and
imported with `jaxmmap.importer` (see `docs/importer.md`): `jaxmmap.core.suite.names()`,
`jaxmmap.core.suite.load(name)`. Regenerate with `python benchmarks/make_suite.py`.

An instance is named `workload@hardware`, with `-NN` when its fast memory is NN% of the program's
peak live bytes, smaller than the preset's size (which would hold small programs whole). *Pressure*
is peak live bytes over fast memory; *columns* is what `--columns auto` picks, and *rounding
loss* the share of the buffers' bytes that grid rounding wastes at that resolution.

"""


if __name__ == "__main__":
    main()
