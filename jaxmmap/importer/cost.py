"""Hardware presets and a roofline cost model: from a flat program to supply, demand, benefit
and latency tables (paper, Appendix A), all in microseconds.

An instruction moving `B_b` bytes of each of its buffers `b` and doing `F` floating-point
operations takes, with the buffers of `S` in fast memory,

    L(S) = trip * (overhead + max(F / peak_flops, sum_b B_b / (fast_bw if b in S else slow_bw)))

(a roofline; `trip` is how many times a loop body runs). As in the paper: the supply of its step
is `L(every buffer fast)` (an underestimate of its time, so that copies never lengthen it), for
one run of a loop body (a value prefetched for a loop's first iteration cannot use the time of
the later ones; a copy made in every iteration has its demand and that supply both per run); a
buffer's static benefit is `L({}) - L({b})`; its demand is `bytes / copy_bw`; the latency table
of a step covers its (up to 8) buffers that move the most bytes.

Counting: a fusion's FLOPs are those of its fused body; a dot or convolution does two FLOPs per
multiply-add; data movement (copy, transpose, broadcast, slices...) costs bytes, not FLOPs. An
operand that is only sliced (slice, dynamic-slice, gather, also inside a fusion) is read only as
far as the slices go; a dynamic-update-slice writes only its update.
"""

from __future__ import annotations

import dataclasses
import math
import re

from jaxmmap.importer.hlo import Instruction, Module, Shape
from jaxmmap.importer.program import IN_PLACE, Program, Step, in_place_aliases

MAX_TABLE = 8
SLICING = {"slice", "dynamic-slice", "gather"}
NO_ARITHMETIC = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "reshape",
                 "broadcast", "iota", "copy", "transpose", "slice", "dynamic-slice",
                 "dynamic-update-slice", "concatenate", "pad", "reverse", "convert", "gather"}


@dataclasses.dataclass(frozen=True)
class Hardware:
    """A two-level memory. Bandwidths in bytes per second, compute in FLOP per second.

    Attributes:
      name: preset name.
      fast_memory: bytes of fast memory (the problem's memory_size).
      slow_bandwidth: bandwidth between the slow memory and the compute units.
      fast_bandwidth: bandwidth between the fast memory and the compute units.
      copy_bandwidth: bandwidth of the engine copying between the two memories.
      peak_flops: peak arithmetic throughput.
      overhead_us: fixed cost of every instruction, microseconds.
      source: where the numbers come from, and what is assumed.
    """

    name: str
    fast_memory: int
    slow_bandwidth: float
    fast_bandwidth: float
    copy_bandwidth: float
    peak_flops: float
    overhead_us: float
    source: str

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


MiB, GiB, GB = 2 ** 20, 2 ** 30, 1e9

PRESETS = {
    "tpu_v4i": Hardware(
        name="tpu_v4i", fast_memory=128 * MiB, slow_bandwidth=614 * GB,
        fast_bandwidth=4 * 614 * GB, copy_bandwidth=614 * GB, peak_flops=138e12, overhead_us=0.5,
        source="TPUv4i (Jouppi et al., ISCA 2021): 128 MiB CMEM in front of HBM2 at 614 GB/s, "
               "138 bf16 TFLOP/s. CMEM bandwidth is not published: assumed 4x HBM. Copies run at "
               "HBM bandwidth."),
    "gpu": Hardware(
        name="gpu", fast_memory=50 * MiB, slow_bandwidth=3350 * GB, fast_bandwidth=3 * 3350 * GB,
        copy_bandwidth=3350 * GB, peak_flops=989e12, overhead_us=2.0,
        source="H100 SXM-like (NVIDIA datasheet): 50 MiB of L2 as the fast memory in front of "
               "HBM3 at 3.35 TB/s, 989 dense bf16 TFLOP/s. L2 bandwidth assumed 3x HBM; about "
               "2 us per kernel."),
    "dram_pmem": Hardware(
        name="dram_pmem", fast_memory=16 * 10 ** 9, slow_bandwidth=100 * GB / 4,
        fast_bandwidth=100 * GB, copy_bandwidth=100 * GB / 1.2, peak_flops=2.0e12,
        overhead_us=5.0,
        source="DRAM + Intel Optane DC PM server as in MARL (Hong & Choi): 16 GB DRAM in front "
               "of PM. PM is 1-1.2x slower than DRAM for sequential access (the copies: 1.2x) "
               "and about 4x slower for random access (the kernels' reads: 4x). DRAM assumed at "
               "100 GB/s (6-channel DDR4), a 32-core Xeon at about 2 fp32 TFLOP/s."),
}


def hardware(spec: str | Hardware, *, fast_memory: int | None = None) -> Hardware:
    """A preset by name (or a `Hardware` as is), optionally with another fast-memory size."""
    if not isinstance(spec, Hardware):
        if spec not in PRESETS:
            raise ValueError(f"unknown hardware {spec!r}; presets: {', '.join(PRESETS)}")
        spec = PRESETS[spec]
    return spec if fast_memory is None else dataclasses.replace(spec, fast_memory=fast_memory)


def flops(ins: Instruction, module: Module, shapes: dict[str, Shape]) -> float:
    """Floating-point operations of one instruction (a fusion: of its fused body)."""
    if ins.opcode == "fusion" and ins.called("calls"):
        body = module.computation(ins.called("calls")[0])
        inner = {i.name: i.shape for i in body.instructions}
        return sum(flops(i, module, inner) for i in body.instructions)
    if ins.opcode in ("reduce", "reduce-window"):  # also variadic (argmax...): every input
        inputs = ins.operands[: max(1, len(ins.operands) // 2)]
        return float(sum(shapes[o].elements for o in inputs if o in shapes) or ins.shape.elements)
    if ins.opcode == "custom-call" and re.search(r"gemm|matmul", ins.attrs.get("custom_call_target", ""), re.I):
        return _gemm_flops(ins, shapes)
    if ins.opcode in NO_ARITHMETIC or ins.shape.is_tuple:
        return 0.0
    if ins.opcode == "dot":
        lhs = shapes.get(ins.operands[0])
        dims = [int(d) for d in ins.attrs.get("lhs_contracting_dims", "{}").strip("{}").split(",") if d]
        return 2.0 * ins.shape.elements * (math.prod(lhs.dims[d] for d in dims) if lhs else 1)
    if ins.opcode == "convolution":
        kernel = shapes.get(ins.operands[1])
        labels = ins.attrs.get("dim_labels", "")
        kernel_labels = labels.split("_")[1].split("->")[0] if "_" in labels else ""
        if kernel is None or "o" not in kernel_labels:
            return 2.0 * ins.shape.elements
        per_output = kernel.elements // max(1, kernel.dims[kernel_labels.index("o")])
        return 2.0 * ins.shape.elements * per_output
    return float(ins.shape.elements)


def _gemm_flops(ins: Instruction, shapes: dict[str, Shape]) -> float:
    """A library matmul (a GPU `__cublas$gemm` custom call): 2 * output * contracted size, from
    its backend config's dot dimension numbers."""
    out = ins.shape.tuple[0] if ins.shape.is_tuple else ins.shape
    m = re.search(r'"lhs_contracting_dimensions"\s*:\s*\[([^\]]*)\]', ins.attrs.get("backend_config", ""))
    lhs = shapes.get(ins.operands[0]) if ins.operands else None
    if not m or lhs is None:
        return 2.0 * out.elements
    dims = [int(d.strip().strip('"')) for d in m.group(1).split(",") if d.strip()]
    return 2.0 * out.elements * math.prod(lhs.dims[d] for d in dims)


def in_place_updates(ins: Instruction, module: Module,
                     shapes: dict[str, Shape]) -> dict[tuple[int, ...], tuple[int, int]]:
    """Output leaf path -> (operand updated in place, bytes of the update): a
    dynamic-update-slice or scatter, bare or at the root of a fusion, touches only its update."""
    out = {}
    for path, (operand, _) in in_place_aliases(module, ins).items():
        node, where = ins, shapes
        if ins.opcode == "fusion":
            body = module.computation(ins.called("calls")[0])
            where = {i.name: i.shape for i in body.instructions}
            root = body.root
            node = root if not path else next(i for i in body.instructions if i.name == root.operands[path[0]])
        if node.opcode not in IN_PLACE:
            continue
        update = node.operands[1] if node.opcode == "dynamic-update-slice" else node.operands[-1]
        size = where.get(update)
        out[path] = (operand, size.bytes if size is not None else 0)
    return out


def read_bytes(ins: Instruction, module: Module, operand: int, full: int,
               in_place: dict | None = None) -> int:
    """Bytes an instruction reads of one operand leaf of `full` bytes."""
    if in_place and any(op == operand for op, _ in in_place.values()):
        return 0  # updated in place: only the update is touched (counted as the write)
    if ins.opcode in SLICING and operand == 0:
        return min(full, ins.shape.bytes)
    if ins.opcode == "fusion" and ins.called("calls"):
        body = module.computation(ins.called("calls")[0])
        param = body.parameters.get(operand)
        if param is not None:
            users = [i for i in body.instructions if param.name in i.operands]
            if users and all(u.opcode in SLICING and u.operands[0] == param.name for u in users):
                return min(full, sum(u.shape.bytes for u in users))
    return full


def step_traffic(step: Step, program: Program, shapes: dict[str, Shape]) -> dict[int, int]:
    """Bytes the step moves, per tensor (reads and writes); `shapes` maps instruction names of
    the module to their shapes."""
    ins, module = step.instruction, program.module
    in_place = in_place_updates(ins, module, shapes)
    traffic: dict[int, int] = {}
    for k, leaves in enumerate(step.operands):
        for t in leaves:
            read = read_bytes(ins, module, k, program.tensors[t].bytes, in_place)
            traffic[t] = traffic.get(t, 0) + read
    paths = [p for p, _ in ins.shape.leaves()]
    for path, t in zip(paths, step.outputs):
        written = program.tensors[t].bytes
        if path in in_place:
            written = min(written, in_place[path][1])
        traffic[t] = traffic.get(t, 0) + written
    return traffic


@dataclasses.dataclass(frozen=True)
class StepCost:
    """The cost model of one step: `latency(fast)` for any set of its tensors in fast memory."""

    traffic: dict[int, int]
    compute_us: float
    trip: float
    hw: Hardware

    def latency(self, fast: set[int] | frozenset[int] = frozenset()) -> float:
        memory = sum(b / (self.hw.fast_bandwidth if t in fast else self.hw.slow_bandwidth)
                     for t, b in self.traffic.items()) * 1e6
        return self.trip * (self.hw.overhead_us + max(self.compute_us, memory))


def step_cost(step: Step, program: Program, hw: Hardware, shapes: dict[str, Shape]) -> StepCost:
    f = flops(step.instruction, program.module, shapes)
    return StepCost(traffic=step_traffic(step, program, shapes), compute_us=f / hw.peak_flops * 1e6,
                    trip=step.trip, hw=hw)
