"""How a solver declares its options: each one's kind, range and meaning.

    declare(random_search, {"batch": Option(int, "[1, inf)", "games played at once")})

`solvers.check_options` (and so `solve`, the command line and `compare`) checks every option
given against its solver's declaration before any work: a name the solver does not declare, or
a value outside its declaration, is one `UserError`. A declaration may add a check across options
(`declare(check=...)`: a config's own checks, an even population). `describe` lists them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from collections.abc import Callable, Mapping
from types import MappingProxyType

__all__ = ["FROM_HEURISTIC", "MAX_GENERATIONS", "PADDING", "Option", "check", "declare", "describe"]

_NOUNS = {int: "whole number", float: "number"}


@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a solver.

    kind: bool, int, float or str (values the command line can give, as JSON); or a class, whose
      instances are taken as they are (from Python: a `Solution`, an array, a function), and with
      `fields`, a dict of the class's fields too (`network={"embedding": 32}`).
    range: numbers: the interval they lie in, "[1, inf)" or "(0, 1]" (a parenthesis leaves its
      end out); "" any finite number.
    doc: what it means.
    choices: the only strings taken.
    null: None is taken too (the solver's default: "no limit", "by the rules"...).
    length: a list of this many numbers instead of one (0: of any length, one at least).
    fields: for a class `kind`, the options of its fields, by name.
    """

    kind: type
    range: str = ""
    doc: str = ""
    choices: tuple[str, ...] = ()
    null: bool = False
    length: int | None = None
    fields: Mapping[str, Option] | None = None

    def describe(self) -> str:
        """What values the option takes, in words ("a number in (0, 1]")."""
        if self.choices:
            what = "one of " + ", ".join((["null"] if self.null else []) + list(self.choices))
            return what if self.kind is str else f"{self._kind()}, or {what}"
        return f"{self._kind()}, or null" if self.null else self._kind()

    def wrong(self, key: str, value) -> str | None:
        """None if the option `key` takes `value`, else why not ("option batch must be ...")."""
        if self._takes(value):
            return None
        if self.choices and self.kind is str and isinstance(value, str):
            return f"option {key} is {self.describe()}; unknown {key} {value!r}"
        if self.fields is not None and isinstance(value, dict):
            for name, item in value.items():
                if name not in self.fields:
                    return f"option {key} has no field {name!r}; its fields are: {', '.join(self.fields)}"
                if why := self.fields[name].wrong(f"{key}.{name}", item):
                    return why
        return f"option {key} must be {self.describe()}; got {value!r}"

    def _kind(self) -> str:
        if self.kind in (bool, str):
            return "true or false" if self.kind is bool else "a string"
        if self.kind not in _NOUNS:
            fields = f", or a dict of its fields ({', '.join(self.fields)})" if self.fields is not None else ""
            name = self.kind.__name__
            return f"{'an' if name[0] in 'aeiou' else 'a'} {name} (from Python){fields}"
        noun, bounds = _NOUNS[self.kind], _words(self.range)
        noun = "finite number" if not bounds and self.kind is float else noun
        if self.length is None:
            return f"a {noun}{bounds}"
        return f"a list of {f'{self.length} ' if self.length else ''}{noun}s{bounds}"

    def _takes(self, value) -> bool:
        if value is None:
            return self.null
        if self.choices and isinstance(value, str):
            return value in self.choices
        if self.kind not in (bool, str, *_NOUNS):
            return isinstance(value, self.kind) or (self.fields is not None and isinstance(value, dict) and all(
                name in self.fields and self.fields[name]._takes(item) for name, item in value.items()))
        if self.length is not None:
            if not isinstance(value, (list, tuple)):
                return False
            return (len(value) == self.length if self.length else len(value) >= 1) and all(map(self._one, value))
        return self._one(value)

    def _one(self, value) -> bool:
        if self.kind in (bool, str):
            return isinstance(value, self.kind)
        number = numbers.Integral if self.kind is int else numbers.Real
        if not isinstance(value, number) or isinstance(value, bool):
            return False
        low, high, low_open, high_open = _interval(self.range)
        return (low < value if low_open else low <= value) and (value < high if high_open else value <= high)


@functools.cache
def _interval(text: str) -> tuple[float, float, bool, bool]:
    """(low, high, low left out, high left out) of "[1, inf)"; "" is (-inf, inf)."""
    if not text:
        return -math.inf, math.inf, True, True
    low, high = (float(end) for end in text[1:-1].split(","))
    if text[0] not in "[(" or text[-1] not in "])" or not low <= high:
        raise ValueError(f"not an interval: {text!r}")
    return low, high, text[0] == "(", text[-1] == ")"


def _words(text: str) -> str:
    """" >= 1" for "[1, inf)", " in (0, 1]" for "(0, 1]", "" for ""."""
    low, high, low_open, high_open = _interval(text)
    if math.isinf(low) and math.isinf(high):
        return ""
    if math.isinf(high):
        return f" {'>' if low_open else '>='} {low:g}"
    if math.isinf(low):
        return f" {'<' if high_open else '<='} {high:g}"
    return f" in {text}"


def declare(fn: Callable, options: Mapping[str, Option], check: Callable[[dict], None] | None = None) -> Callable:
    """Attaches to the solver `fn` its options (`fn.options`), and `check`, which raises
    ValueError for options that do not go together (it sees those given, each within its
    declaration). Returns `fn`."""
    for option in options.values():
        _interval(option.range)  # (a wrong interval fails at import)
    fn.options = MappingProxyType(dict(options))
    fn.check_options = check
    return fn


def check(fn: Callable, options: dict) -> None:
    """Raises ValueError for a value outside the solver `fn`'s declaration of its option, then
    runs its check across options (`declare`). Names it does not declare are not looked at."""
    declared = getattr(fn, "options", {})
    for key, value in options.items():
        if key in declared and (why := declared[key].wrong(key, value)):
            raise ValueError(why)
    if getattr(fn, "check_options", None) is not None:
        try:
            fn.check_options(options)
        except (TypeError, ValueError) as e:
            raise ValueError(f"options: {e}") from None


def describe(fn: Callable) -> str:
    """The solver `fn`'s options, one a line: name, what it takes, what it means."""
    return "\n".join(f"{key}: {option.describe()}" + (f". {option.doc}" if option.doc else "")
                     for key, option in getattr(fn, "options", {}).items())


#: Options several solvers share.
PADDING = Option(int, "[1, inf)", "(buffers, steps, tables) to pad the instance to (null: its size bucket); "
                 "instances of one padding share one compile", null=True, length=3)
MAX_GENERATIONS = Option(int, "[1, inf)", "stop after this many generations even if time is left", null=True)
FROM_HEURISTIC = Option(bool, doc="start from the heuristic's plan (null: in the deferred game only)", null=True)
