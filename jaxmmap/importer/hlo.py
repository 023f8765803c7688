"""A parser of XLA's HLO text (`HloModule ...`, as printed by `compiled.as_text()` or dumped by
`--xla_dump_to` as `*after_optimizations.txt`).

It reads what the importer needs and nothing more: computations and their instructions in
printed order (in a scheduled module, that order is the schedule), each instruction's shape,
opcode, operands and attributes, and the module's `input_output_alias`. The Python HLO objects
of jaxlib carry no shapes and jaxlib ships no HLO protos, hence this small text parser.
"""

from __future__ import annotations

import dataclasses
import math
import re

DTYPE_BYTES = {  # unpacked storage; a layout with E(bits) packs sub-byte types
    "pred": 1, "s1": 1, "u1": 1, "s2": 1, "u2": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2,
    "s32": 4, "u32": 4, "s64": 8, "u64": 8, "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3": 1,
    "f8e4m3fnuz": 1, "f8e5m2fnuz": 1, "f8e3m4": 1, "f8e4m3b11fnuz": 1, "f8e8m0fnu": 1,
    "f4e2m1fn": 1, "bf16": 2, "f16": 2, "f32": 4, "f64": 8, "c64": 8, "c128": 16,
    "token": 0, "opaque": 0,
}


class HloParseError(ValueError):
    """The text is not HLO this parser understands; the message names the line."""


@dataclasses.dataclass(frozen=True)
class Shape:
    """An array shape (`dtype`, `dims`) or a tuple of shapes (`tuple` is not None)."""

    dtype: str = ""
    dims: tuple[int, ...] = ()
    tuple: tuple[Shape, ...] | None = None
    element_bits: int | None = None  # from a packed layout `{...:E(4)}`, else the dtype's

    @property
    def is_tuple(self) -> bool:
        return self.tuple is not None

    @property
    def elements(self) -> int:
        return math.prod(self.dims)

    @property
    def bytes(self) -> int:
        if self.is_tuple:
            return 0
        if self.element_bits is not None:
            return -(-self.elements * self.element_bits // 8)
        return self.elements * DTYPE_BYTES.get(self.dtype, 4)

    def leaves(self) -> list[tuple[tuple[int, ...], Shape]]:
        """(index path, array shape) of every array leaf, in order."""
        if not self.is_tuple:
            return [((), self)]
        return [((k, *path), leaf) for k, s in enumerate(self.tuple) for path, leaf in s.leaves()]


@dataclasses.dataclass
class Instruction:
    name: str
    shape: Shape
    opcode: str
    operands: list[str]
    attrs: dict[str, str]
    is_root: bool = False

    def called(self, key: str) -> list[str]:
        """Computation names of attribute `key` (calls, to_apply, body, branch_computations...)."""
        value = self.attrs.get(key, "")
        return [v.strip().lstrip("%") for v in value.strip("{}").split(",") if v.strip()]


@dataclasses.dataclass
class Computation:
    name: str
    instructions: list[Instruction]
    is_entry: bool = False

    @property
    def root(self) -> Instruction:
        for ins in self.instructions:
            if ins.is_root:
                return ins
        return self.instructions[-1]

    @property
    def parameters(self) -> dict[int, Instruction]:
        return {int(i.operands[0]): i for i in self.instructions if i.opcode == "parameter"}


@dataclasses.dataclass
class Module:
    name: str
    computations: dict[str, Computation]
    entry: str
    is_scheduled: bool
    # output leaf index path -> (parameter number, parameter leaf index path)
    input_output_alias: dict[tuple[int, ...], tuple[int, tuple[int, ...]]]

    @property
    def entry_computation(self) -> Computation:
        return self.computations[self.entry]

    def computation(self, name: str) -> Computation:
        if name not in self.computations:
            raise HloParseError(f"computation {name!r} is called but not defined")
        return self.computations[name]


# ----------------------------------------------------------------------------- lexing helpers

_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _match(text: str, start: int) -> int:
    """Index just past the bracket closing the one at `start` (quotes respected)."""
    stack, i, n = [], start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1) if '"' in text[i + 1:] else n
        elif c in _CLOSE:
            stack.append(_CLOSE[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise HloParseError(f"unbalanced brackets in: {text[start:start + 80]}")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Splits at `sep` outside brackets and quotes."""
    parts, depth, quoted, cur = [], 0, False, []
    for c in text:
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "([{":
            depth += 1
        elif not quoted and c in ")]}":
            depth -= 1
        if c == sep and depth == 0 and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")


def parse_shape(text: str) -> Shape:
    """`f32[4,8]{1,0}`, `(s32[], f32[8]{0})`, `bf16[<=16,2]`, `token[]` ..."""
    text = text.strip()
    if text.startswith("("):
        inner = text[1:_match(text, 0) - 1]
        return Shape(tuple=tuple(parse_shape(p) for p in _split_top(inner)))
    m = _ARRAY.match(text)
    if not m:
        if text in ("token", "opaque"):
            return Shape(dtype=text)
        raise HloParseError(f"cannot read the shape {text[:60]!r}")
    try:
        dims = tuple(int(d.replace("<=", "")) for d in m.group(2).split(",") if d.strip())
    except ValueError:
        raise HloParseError(f"cannot read the dimensions of {text[:60]!r}") from None
    packed = re.search(r":[^}]*E\((\d+)\)", text[m.end():])
    return Shape(dtype=m.group(1), dims=dims, element_bits=int(packed.group(1)) if packed else None)


def _shape_end(text: str, start: int) -> int:
    """End of the shape (with its layout) that starts at `start`."""
    i = start
    if text[i] == "(":
        return _match(text, i)
    m = _ARRAY.match(text, i)
    if not m:
        word = re.match(r"[a-z]+", text[i:])
        if word:
            return i + word.end()
        raise HloParseError(f"cannot read the shape at {text[i:i + 60]!r}")
    i = m.end()
    if i < len(text) and text[i] == "{":  # layout
        i = _match(text, i)
    return i


_COMMENT = re.compile(r"/\*.*?\*/")
_INSTRUCTION = re.compile(r"\s*(ROOT\s+)?%?([^\s=]+)\s*=\s*")
_HEADER = re.compile(r"^(ENTRY\s+)?%?([^\s(={]+)\s*(?:\(.*\)\s*->\s*.*)?\{\s*$")


def parse_instruction(line: str) -> Instruction:
    m = _INSTRUCTION.match(line)
    if not m:
        raise HloParseError(f"not an instruction: {line[:100]!r}")
    i = m.end()
    end = _shape_end(line, i)
    shape = parse_shape(line[i:end])
    rest = line[end:].lstrip()
    op = re.match(r"([\w\-]+)\(", rest)
    if not op:
        raise HloParseError(f"no opcode in: {line[:100]!r}")
    opcode = op.group(1)
    close = _match(rest, op.end() - 1)
    operand_text = rest[op.end():close - 1]
    attrs: dict[str, str] = {}
    for part in _split_top(rest[close:]):
        key, _, value = part.partition("=")
        attrs[key.strip()] = value.strip()
    if opcode in ("parameter", "constant"):
        operands = [operand_text.strip()]  # the parameter number, constant literal...
    else:
        # Operands are `%name`, or `f32[2]{0} %name` in older dumps.
        operands = [p.split()[-1].lstrip("%") for p in _split_top(operand_text)]
    return Instruction(name=m.group(2).lstrip("%"), shape=shape, opcode=opcode,
                       operands=operands, attrs=attrs, is_root=bool(m.group(1)))


def _parse_alias(header: str) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]]:
    m = re.search(r"input_output_alias=\{", header)
    if not m:
        return {}
    body = header[m.end() - 1:_match(header, m.end() - 1)][1:-1]
    out = {}
    for entry in re.finditer(r"\{([\d,\s]*)\}\s*:\s*\((\d+)\s*,\s*\{([\d,\s]*)\}", body):
        path = lambda s: tuple(int(x) for x in s.split(",") if x.strip())  # noqa: E731
        out[path(entry.group(1))] = (int(entry.group(2)), path(entry.group(3)))
    return out


def parse_module(text: str) -> Module:
    """Parses a whole HLO module; raises `HloParseError` naming the line that fails."""
    lines = text.splitlines()
    header = next((ln for ln in lines if ln.startswith("HloModule")), None)
    if header is None:
        raise HloParseError("no 'HloModule' line: this is not HLO text")
    computations: dict[str, Computation] = {}
    entry, current = None, None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if current is None:
            m = _HEADER.match(stripped)
            if m and not stripped.startswith("HloModule"):
                current = Computation(name=m.group(2).lstrip("%"), instructions=[],
                                      is_entry=bool(m.group(1)))
                if current.is_entry:
                    entry = current.name
            continue
        if stripped == "}":
            computations[current.name] = current
            current = None
            continue
        if not stripped:
            continue
        try:
            current.instructions.append(parse_instruction(_COMMENT.sub("", stripped)))
        except HloParseError as e:
            raise HloParseError(f"line {number}: {e}") from None
    if current is not None:
        raise HloParseError(f"computation {current.name} is not closed")
    if entry is None:
        raise HloParseError("no ENTRY computation")
    name = header.split()[1].rstrip(",")
    return Module(name=name, computations=computations, entry=entry,
                  is_scheduled="is_scheduled=true" in header,
                  input_output_alias=_parse_alias(header))
