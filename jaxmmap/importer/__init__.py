"""Real programs as problems: a JAX function or an XLA HLO dump in, a `Problem` out.

    problem = from_jax(fn, *args, donate_argnums=(0,), hardware="tpu_v4i")
    problem = from_hlo_text(open("module.after_optimizations.txt").read(), hardware="gpu")

The pipeline: `hlo.parse_module` (the optimized, scheduled HLO text) -> `program.flatten`
(logical steps, tensors, alias groups) -> `cost` (roofline supply, demand, benefits, latency
tables on a `Hardware` preset) -> `to_problem`.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from jaxmmap.core.io import pressure_warning, summarize
from jaxmmap.core.problem import LatencyTable, Problem, ProblemError, check_problem
from jaxmmap.importer.cost import MAX_TABLE, PRESETS, Hardware, hardware, step_cost
from jaxmmap.importer.cost import hardware as _resolve_hardware
from jaxmmap.importer.hlo import HloParseError, parse_module, parse_shape
from jaxmmap.importer.program import Program, flatten

__all__ = ["PRESETS", "Hardware", "HloParseError", "from_hlo_text", "from_jax", "hardware", "shape_struct",
           "to_problem"]


def to_problem(program: Program, hw: Hardware, *, name: str, latency_tables: bool = True,
               metadata: dict | None = None) -> Problem:
    """The game's problem for a flat program on a hardware (see `cost` for the model)."""
    shapes = {i.name: i.shape for c in program.module.computations.values() for i in c.instructions}
    supply, cols, tables = [], {k: [] for k in (
        "size", "is_output", "target_time", "tensor_id", "alias_id", "live_start", "live_end",
        "demand", "benefit", "live_out")}, []
    groups: dict[int, list[int]] = {}
    for t in program.tensors:
        groups.setdefault(program.group(t.id), []).append(t.id)
    step_latency = []
    for step in program.steps:
        cost = step_cost(step, program, hw, shapes)
        supply.append(cost.latency(frozenset(cost.traffic)) / step.trip)  # one run of a loop body
        base = cost.latency()
        step_latency.append(base)
        first = len(cols["size"])
        used = [(t, False) for t in step.inputs] + [(t, True) for t in step.outputs]
        used = [(t, out) for t, out in used if program.tensors[t].bytes > 0]
        for t, is_out in used:
            tensor = program.tensors[t]
            start, end = program.live_range(tensor)
            group = program.group(t)
            cols["size"].append(tensor.bytes)
            cols["is_output"].append(is_out)
            cols["target_time"].append(step.index)
            cols["tensor_id"].append(t)
            cols["alias_id"].append(group if len(groups[group]) > 1 else -1)
            cols["live_start"].append(start)
            cols["live_end"].append(end)
            cols["demand"].append(tensor.bytes / hw.copy_bandwidth * 1e6)
            cols["benefit"].append(base - cost.latency({t}))
            cols["live_out"].append(tensor.live_out)
        if latency_tables and used:
            ranked = sorted(range(len(used)), key=lambda k: -cost.traffic.get(used[k][0], 0))
            chosen = sorted(ranked[:MAX_TABLE])
            members = [used[k][0] for k in chosen]
            latency = [cost.latency({m for bit, m in enumerate(members) if mask >> bit & 1})
                       for mask in range(2 ** len(members))]
            tables.append(LatencyTable(step=step.index, buffers=np.array([first + k for k in chosen]),
                                       latency=np.array(latency)))
    if not program.steps:
        raise ValueError("the program has no instruction that does work")
    alias = np.asarray(cols["alias_id"], np.int64)
    _, dense = np.unique(alias, return_inverse=True)
    alias = np.where(alias >= 0, dense - (1 if np.any(alias < 0) else 0), -1)
    meta = {"source": "jaxmmap.importer", "hardware": hw.to_json(), "time_unit": "microseconds",
            "module": program.module.name, "instructions": len(program.steps),
            "loops": len(program.loops), "alias_unions_refused": program.unmerged,
            "step_latency": step_latency}
    problem = Problem(
        name=name, memory_size=int(hw.fast_memory), supply=np.asarray(supply, np.float64),
        size=np.asarray(cols["size"], np.int64), is_output=np.asarray(cols["is_output"], bool),
        target_time=np.asarray(cols["target_time"], np.int64),
        tensor_id=np.asarray(cols["tensor_id"], np.int64), alias_id=alias.astype(np.int64),
        live_start=np.asarray(cols["live_start"], np.int64),
        live_end=np.asarray(cols["live_end"], np.int64),
        demand=np.asarray(cols["demand"], np.float64),
        benefit=np.asarray(cols["benefit"], np.float64), latency_tables=tuple(tables),
        live_out=np.asarray(cols["live_out"], bool),
        metadata={**meta, **(metadata or {})})
    check_problem(problem)
    return problem


def from_hlo_text(text: str, *, hardware: str | Hardware = "tpu_v4i", name: str | None = None,
                  fast_memory: int | None = None, memory_fraction: float | None = None,
                  latency_tables: bool = True) -> Problem:
    """A problem from the text of an optimized, scheduled HLO module (any backend's dump).

    Fast memory is the hardware preset's, or `fast_memory` bytes, or `memory_fraction` of the
    program's peak live bytes (the pressure of a larger batch, or of several programs sharing
    the chip; the suite's `-30` instances use 0.3). Warns (`UserWarning`, one line) when fast
    memory holds every tensor at once: then every solver puts everything in fast memory."""
    module = parse_module(text)
    if not module.is_scheduled:
        raise HloParseError(
            f"module {module.name} is not scheduled (no is_scheduled=true): import the optimized "
            "module (*after_optimizations.txt, or compiled.as_text()), whose instruction order is "
            "the schedule and whose copies are inserted")
    if memory_fraction is not None:
        if fast_memory is not None:
            raise ProblemError("give fast_memory or memory_fraction, not both")
        if not 0 < memory_fraction <= 1e6:
            raise ProblemError(f"memory_fraction must be > 0 (a fraction of the peak live bytes),"
                               f" got {memory_fraction}")
    hw = _resolve_hardware(hardware, fast_memory=fast_memory)
    program = flatten(module)
    problem = to_problem(program, hw, name=name or module.name, latency_tables=latency_tables,
                         metadata={"scheduled": module.is_scheduled})
    summary = summarize(problem)
    if memory_fraction is not None:
        memory = max(1, int(memory_fraction * summary["peak_live_bytes"]))
        hw = dataclasses.replace(hw, fast_memory=memory)
        problem = dataclasses.replace(problem, memory_size=memory, metadata={
            **problem.metadata, "hardware": hw.to_json(), "fast_memory_fraction": float(memory_fraction)})
        check_problem(problem)
        summary = {**summary, "memory_size": memory}
    line = pressure_warning(summary)
    if line:
        warnings.warn(line, UserWarning, stacklevel=2)
    return problem


def from_jax(fn, *args, donate_argnums=(), hardware: str | Hardware = "tpu_v4i",
             name: str | None = None, fast_memory: int | None = None,
             memory_fraction: float | None = None, latency_tables: bool = True) -> Problem:
    """A problem from a JAX function: `jax.jit(fn).lower(*args).compile()` on the default
    backend, then `from_hlo_text` (with its `fast_memory` or `memory_fraction`). `args` may be
    `jax.ShapeDtypeStruct`s (nothing is run)."""
    import jax

    compiled = jax.jit(fn, donate_argnums=donate_argnums).lower(*args).compile()
    return from_hlo_text(compiled.as_text(), hardware=hardware, latency_tables=latency_tables,
                         name=name or getattr(fn, "__name__", "jax_function"),
                         fast_memory=fast_memory, memory_fraction=memory_fraction)


def shape_struct(spec: str):
    """`f32[4,8]` (or `bf16[2]`, `s32[]`) as a jax.ShapeDtypeStruct."""
    import jax
    import jax.numpy as jnp

    shape = parse_shape(spec)
    dtypes = {"pred": jnp.bool_, "bf16": jnp.bfloat16, "f16": jnp.float16, "f32": jnp.float32,
              "f64": jnp.float64, "s8": jnp.int8, "s16": jnp.int16, "s32": jnp.int32,
              "s64": jnp.int64, "u8": jnp.uint8, "u32": jnp.uint32}
    if shape.is_tuple or shape.dtype not in dtypes:
        raise ProblemError(f"--shapes: cannot use {spec!r}; write e.g. f32[4,8]")
    return jax.ShapeDtypeStruct(shape.dims, dtypes[shape.dtype])
