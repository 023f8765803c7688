"""From a parsed HLO module to a flat program: logical steps, tensors, their uses, alias groups.

Flattening follows XLA's own live-range analysis: the entry computation in schedule order; a
`while` as its condition, then its body, then the while itself; a `conditional` as its branches
in order; a `call` inlined; a fusion is one instruction. Only instructions that do work get a
step (not parameter, constant, tuple, get-tuple-element, bitcast, opt-barrier, while,
conditional, call, after-all). A loop body is laid out once; its `trip` multiplies its costs.

Tensors are array leaves. An instruction that does work writes one new tensor per leaf of its
output; tuple, get-tuple-element, bitcast and calls forward tensors unchanged, so a value keeps
its identity through them, and a computation's parameters are the caller's tensors.

Alias groups (tensors that must share one allocation) come from a union-find over tensors:
while-loop carries (initial value, body root and while output; a pass-through carry is one
tensor), the roots of conditional branches and its output, in-place updates
(dynamic-update-slice, scatter, fusions rooted in them, `output_to_operand_aliasing`) and
donated inputs (`input_output_alias`). Members of different sizes are never merged (counted in
`Program.unmerged`).
"""

from __future__ import annotations

import dataclasses
import re

from jaxmmap.core.unionfind import UnionFind
from jaxmmap.importer.hlo import Computation, Instruction, Module, Shape

IN_PLACE = {"dynamic-update-slice", "scatter"}


@dataclasses.dataclass
class Tensor:
    id: int
    bytes: int
    producer: int = -1  # step that writes it, -1 for program inputs and constants
    uses: set[int] = dataclasses.field(default_factory=set)
    live_end: int = -1  # forced extension (loops, program outputs)
    name: str = ""
    live_out: bool = False  # a result of the entry computation or a donated input: it must end
    # in slow memory, so it cannot stay pinned in fast memory


@dataclasses.dataclass
class Step:
    index: int
    instruction: Instruction
    trip: float  # how many times it runs (product of enclosing loop trip counts)
    operands: list[list[int]]  # per operand, the tensors of its leaves
    outputs: list[int]  # tensors written, one per leaf of the output

    @property
    def inputs(self) -> list[int]:
        """The distinct tensors read, in operand order."""
        return list(dict.fromkeys(t for leaves in self.operands for t in leaves))


@dataclasses.dataclass
class Program:
    module: Module
    steps: list[Step]
    tensors: list[Tensor]
    sets: UnionFind  # over tensors: alias groups
    loops: list[tuple[int, int]]  # [first, last] steps of every while loop
    unmerged: int = 0  # alias unions refused because the sizes differ

    def group(self, tensor: int) -> int:
        return self.sets.find(tensor)

    def live_range(self, t: Tensor) -> tuple[int, int]:
        start = max(t.producer, 0)
        end = max([start, t.live_end, *t.uses])
        return start, end


class _Flattener:
    def __init__(self, module: Module):
        self.module = module
        self.steps: list[Step] = []
        self.tensors: list[Tensor] = []
        self.sets = UnionFind()
        self.loops: list[tuple[int, int]] = []
        self.conditionals: list[list[list[int]]] = []  # per conditional, its branch roots
        self.unmerged = 0

    def computation(self, name: str) -> Computation:
        return self.module.computation(name)

    def new_tensor(self, shape: Shape, name: str, producer: int = -1) -> int:
        t = Tensor(id=len(self.tensors), bytes=shape.bytes, producer=producer, name=name)
        self.tensors.append(t)
        self.sets.add()
        return t.id

    def _end(self, t: int) -> int:
        tensor = self.tensors[t]
        return max([tensor.producer, tensor.live_end, *tensor.uses])

    def union(self, a: int, b: int) -> None:
        if self.tensors[a].bytes != self.tensors[b].bytes:
            self.unmerged += 1
            return
        self.sets.union(a, b)

    # ------------------------------------------------------------------ walking

    def walk(self, comp: Computation, params: dict[int, list[int]] | None, trip: float) -> list[int]:
        """Lays out `comp`; returns the tensors of its root's leaves."""
        env: dict[str, list[int]] = {}
        for ins in comp.instructions:
            env[ins.name] = self.instruction(ins, comp, env, params, trip)
        return env[comp.root.name]

    def instruction(self, ins: Instruction, comp: Computation, env, params, trip) -> list[int]:
        op = ins.opcode
        operand_leaves = [env[o] for o in ins.operands] if op not in ("parameter", "constant") else []
        if op == "parameter":
            k = int(ins.operands[0])
            if params is not None:
                return params[k]
            return [self.new_tensor(s, value_name(ins.name, p)) for p, s in ins.shape.leaves()]
        if op == "constant":
            return [self.new_tensor(s, ins.name) for _, s in ins.shape.leaves()]
        if op == "tuple":
            return [t for leaves in operand_leaves for t in leaves]
        if op == "get-tuple-element":
            index = int(ins.attrs["index"])
            source = comp_shape(comp, ins.operands[0])
            paths = [p for p, _ in source.leaves()]
            return [t for p, t in zip(paths, env[ins.operands[0]]) if p[0] == index]
        if op in ("bitcast", "opt-barrier", "add-dependency"):
            return operand_leaves[0]
        if op == "copy-start":  # XLA's own prefetch: (destination, source, context)
            context = [self.new_tensor(s, ins.name) for p, s in ins.shape.leaves() if p[0] >= 2]
            return operand_leaves[0] + operand_leaves[0] + context
        if op == "copy-done":
            return env[ins.operands[0]][: len(ins.shape.leaves())]
        if op == "async-done":  # the result: element 1 of the async-start's tuple
            start = comp_shape(comp, ins.operands[0])
            return [t for (p, _), t in zip(start.leaves(), env[ins.operands[0]]) if p[0] == 1]
        if op == "call":
            callee = self.computation(ins.called("to_apply")[0])
            return self.walk(callee, dict(enumerate(operand_leaves)), trip)
        if op == "while":
            return self.while_loop(ins, operand_leaves[0], trip)
        if op == "conditional":
            return self.conditional(ins, operand_leaves, trip)
        if op in ("after-all", "partition-id", "replica-id"):
            return [self.new_tensor(s, ins.name) for _, s in ins.shape.leaves()]
        return self.work(ins, operand_leaves, trip)

    def work(self, ins: Instruction, operand_leaves: list[list[int]], trip: float) -> list[int]:
        index = len(self.steps)
        outputs = [self.new_tensor(s, value_name(ins.name, p), producer=index)
                   for p, s in ins.shape.leaves()]
        step = Step(index, ins, trip, operand_leaves, outputs)
        for t in step.inputs:
            self.tensors[t].uses.add(index)
        self.steps.append(step)
        for out_path, (operand, op_path) in in_place_aliases(self.module, ins).items():
            leaves = [p for p, _ in ins.shape.leaves()]
            if out_path in leaves and operand < len(operand_leaves):
                src = operand_leaves[operand]
                k = 0 if not op_path else _leaf_position(self.operand_shape(ins, operand), op_path)
                if k is not None and k < len(src):
                    self.union(outputs[leaves.index(out_path)], src[k])
        return outputs

    def operand_shape(self, ins: Instruction, operand: int) -> Shape:
        return self._shapes.get(ins.operands[operand], Shape(dtype="f32"))

    def while_loop(self, ins: Instruction, init: list[int], trip: float) -> list[int]:
        count = known_trip_count(ins)
        first = len(self.steps)
        cond = self.computation(ins.called("condition")[0])
        body = self.computation(ins.called("body")[0])
        self.walk(cond, {0: init}, trip * count)
        root = self.walk(body, {0: init}, trip * count)
        last = len(self.steps) - 1
        if last >= first:
            self.loops.append((first, last))
        for a, b in zip(init, root):
            if a != b:  # a carry the body updates: one buffer for every iteration's value;
                self.union(a, b)  # the old and the new value both hold it until the loop ends
                for t in (a, b):
                    self.tensors[t].live_end = max(self.tensors[t].live_end, last)
        return root

    def conditional(self, ins: Instruction, operand_leaves, trip: float) -> list[int]:
        branches = ins.called("branch_computations") or (
            ins.called("true_computation") + ins.called("false_computation"))
        roots = [self.walk(self.computation(b), {0: operand_leaves[k + 1]}, trip)
                 for k, b in enumerate(branches)]
        self.conditionals.append(roots)
        for other in roots[1:]:
            for a, b in zip(roots[0], other):
                self.union(a, b)
        if self.steps:  # the branch index is read by the conditional, after its branches
            for t in operand_leaves[0]:
                self.tensors[t].live_end = max(self.tensors[t].live_end, len(self.steps) - 1)
        return roots[0]

    def run(self) -> Program:
        self._shapes = {i.name: i.shape for c in self.module.computations.values()
                        for i in c.instructions}
        entry = self.module.entry_computation
        params = {k: [self.new_tensor(s, value_name(p.name, path))
                      for path, s in p.shape.leaves()]
                  for k, p in entry.parameters.items()}
        outputs = self.walk(entry, params, 1.0)
        last = len(self.steps) - 1
        for t in outputs:
            self.tensors[t].live_end = last
            self.tensors[t].live_out = True
        out_paths = [p for p, _ in entry.root.shape.leaves()]
        for out_path, (k, param_path) in self.module.input_output_alias.items():
            if out_path in out_paths and k in params:
                pos = _leaf_position(entry.parameters[k].shape, param_path)
                if pos is not None:
                    self.union(outputs[out_paths.index(out_path)], params[k][pos])
                    self.tensors[params[k][pos]].live_out = True
        for first, end in self.loops:  # values read in a loop, made before it, live through it
            for t in self.tensors:
                if t.producer < first and any(first <= u <= end for u in t.uses):
                    t.live_end = max(t.live_end, end)
        for roots in self.conditionals:  # every branch's result lives as long as the output
            for leaf in zip(*roots):
                end = max(self._end(t) for t in leaf)
                for t in leaf:
                    self.tensors[t].live_end = max(self.tensors[t].live_end, end)
        return Program(module=self.module, steps=self.steps, tensors=self.tensors,
                       sets=self.sets, loops=self.loops, unmerged=self.unmerged)


def value_name(instruction: str, path: tuple[int, ...]) -> str:
    """XLA's name of an output leaf: `fusion.3`, or `while.5{1}` inside a tuple."""
    return f"{instruction}{{{','.join(map(str, path))}}}" if path else instruction


def comp_shape(comp: Computation, name: str) -> Shape:
    for ins in comp.instructions:
        if ins.name == name:
            return ins.shape
    raise KeyError(name)


def _leaf_position(shape: Shape, path: tuple[int, ...]) -> int | None:
    paths = [p for p, _ in shape.leaves()]
    return paths.index(tuple(path)) if tuple(path) in paths else None


def known_trip_count(ins: Instruction) -> int:
    """The loop's trip count from XLA's backend config, or 1 when XLA does not know it."""
    m = re.search(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"(\d+)"', ins.attrs.get("backend_config", ""))
    return int(m.group(1)) if m else 1


def in_place_aliases(module: Module, ins: Instruction) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]]:
    """Output leaf path -> (operand number, operand leaf path) that the instruction updates in
    place: dynamic-update-slice and scatter (operand 0), fusions whose root (or root tuple
    element) is one of those, and `output_to_operand_aliasing`."""
    out: dict[tuple[int, ...], tuple[int, tuple[int, ...]]] = {}
    if ins.opcode in IN_PLACE:
        out[()] = (0, ())
    elif ins.opcode == "fusion" and ins.called("calls"):
        fused = module.computation(ins.called("calls")[0])
        by_name = {i.name: i for i in fused.instructions}
        root = fused.root
        elements = [((), root)] if root.opcode != "tuple" else [
            ((k,), by_name[o]) for k, o in enumerate(root.operands)]
        for path, node in elements:
            if node.opcode in IN_PLACE:
                src = by_name.get(node.operands[0])
                while src is not None and src.opcode == "bitcast":
                    src = by_name.get(src.operands[0])
                if src is not None and src.opcode == "parameter":
                    out[path] = (int(src.operands[0]), ())
    alias = ins.attrs.get("output_to_operand_aliasing")
    if alias:
        for m in re.finditer(r"\{([\d,\s]*)\}\s*:\s*\((\d+)\s*,\s*\{([\d,\s]*)\}\)", alias):
            path = lambda s: tuple(int(x) for x in s.split(",") if x.strip())  # noqa: E731
            out[path(m.group(1))] = (int(m.group(2)), path(m.group(3)))
    return out


def flatten(module: Module) -> Program:
    """Lays the module out in logical time (see the module docstring)."""
    return _Flattener(module).run()

