"""Files the package writes: whole or not at all, strict JSON, and one error type for mistakes.

Every file is written to a temporary name in its folder and then renamed over the target
(`os.replace`, atomic on POSIX and Windows), so a kill leaves the old file or the new one, never
a torn one. JSON is strict: NaN and Infinity are refused (`write_json`) or written as null
(`append_jsonl`, for metrics), since they are not JSON. `read_jsonl` tolerates and repairs a
torn last line, the one trace a kill during an append can leave. Promises: `docs/promises.md`.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np


class UserError(ValueError):
    """A mistake of the user's (a bad file, argument or folder); the command line prints it as
    one `error:` line."""


def _writable(folder: str) -> bool:
    """Whether a file can be made in `folder` (tried: `os.access` says yes to root everywhere,
    /proc included)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def check_output(path: str | os.PathLike, *, probe: bool = True) -> str:
    """The path, if a file can be written there: its folder exists, is a folder and is writable
    (with `probe`, tried by making a file there), and the path is not something other than a file
    (a device, a link to one). Raises `UserError` naming the fix otherwise (before any work is
    done)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UserError(f"{path}: is a folder; give a file name")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise UserError(f"{path}: is not a regular file; give a file name")
    if not os.path.isdir(folder):
        what = "is a file" if os.path.exists(folder) else "does not exist"
        raise UserError(f"cannot write {path}: the folder {folder} {what}; create it first")
    if probe and not _writable(folder):
        raise UserError(f"cannot write {path}: the folder {folder} is not writable")
    return path


def check_folder(path: str | os.PathLike, *, create: bool = True) -> str:
    """Creates the output folder `path` (and its parents) or raises `UserError` saying why not.
    With `create=False` it only checks that it could (to refuse before any work is done)."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise UserError(f"{path}: is a file, not a folder; give a folder name")
    if not create:
        existing = os.path.abspath(path)
        while not os.path.exists(existing):
            existing = os.path.dirname(existing)
        if not os.path.isdir(existing):
            raise UserError(f"cannot create the folder {path}: {existing} is a file")
        if not _writable(existing):
            raise UserError(f"cannot write to the folder {existing}")
        return path
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create the folder {path} ({e.strerror})") from None
    if not _writable(path):
        raise UserError(f"the folder {path} is not writable")
    return path


LOCK = ".lock"


@contextlib.contextmanager
def owned(folder: str | os.PathLike):
    """Holds `folder` for this process while the block runs (a long run's workdir): one run
    per folder. A second process gets `UserError` naming the first one's pid; a lock left by a
    process that no longer runs (killed) is taken over; this process may hold it again inside
    (`train.py`, then `fit`). The lock is `folder/.lock`, holding the pid, made whole at once."""
    path = os.path.join(check_folder(folder), LOCK)
    mine = False
    for _ in range(3):  # create, or take over a stale lock (once another run's removal raced)
        try:
            _link_lock(path)
        except FileExistsError:
            pid = _lock_pid(path)
            if pid == os.getpid():
                break  # held already, by this process: the outer holder releases it
            if pid is not None and _running(pid):
                raise UserError(f"{folder} is in use by another run (pid {pid}); wait for it to end or"
                                " stop it, or give another folder") from None
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)  # stale: its process is gone
            continue
        mine = True
        break
    else:
        raise UserError(f"{folder}: cannot take its lock {path}")
    try:
        yield folder
    finally:
        if mine and _lock_pid(path) == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)


def _link_lock(path: str) -> None:
    """Makes the lock file whole or not at all: the pid is written to a file of this process's
    own, then hard-linked to `path` (FileExistsError if another holds it)."""
    mine = f"{path}.{os.getpid()}"
    with open(mine, "w") as f:
        f.write(f"{os.getpid()}\n")
    try:
        os.link(mine, path)
    finally:
        os.remove(mine)


def _lock_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip() or "0") or None
    except (OSError, ValueError):
        return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it runs
    return True


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()  # what open() would give a new file (mkstemp gives 0o600)


@contextlib.contextmanager
def atomic(path: str | os.PathLike, mode: str = "w") -> Iterator[Any]:
    """Opens a temporary file beside `path`; on success it is flushed, synced and renamed over
    `path`; on an exception it is removed and `path` is untouched."""
    path = check_output(path, probe=False)  # (making the temporary file is the probe)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=os.path.dirname(os.path.abspath(path)))
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic(path) as f:
        f.write(text)


def dumps(data: Any, **kwargs) -> str:
    """Strict JSON: raises `ValueError` on NaN or Infinity."""
    return json.dumps(data, allow_nan=False, **kwargs)


def write_json(path: str | os.PathLike, data: Any, *, indent: int | None = None) -> None:
    """Strict JSON, atomically; a `.gz` path is gzipped reproducibly (no name, no time stamp)."""
    path = os.fspath(path)
    text = dumps(data, indent=indent, separators=None if indent else (",", ":")).encode("utf-8")
    with atomic(path, "wb") as raw:
        if path.endswith(".gz"):
            with gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
                gz.write(text)
        else:
            raw.write(text)


def finite(data: Any) -> Any:
    """`data` with every non-finite float replaced by None (JSON's null)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def append_jsonl(path: str | os.PathLike, row: dict) -> None:
    """Appends one line; non-finite numbers become null. A line is written by one `write`."""
    line = dumps(finite(row)) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()


def slug(name: str) -> str:
    """A file name for `name`, unique and stable: the name itself when it is a plain ASCII name of
    letters, digits and `-_.@` (not starting with a dot, at most 100 characters); otherwise its
    plain characters, cut to 100, and 10 hex digits of the name's SHA-256 (so `a/b` and `a_b`, or
    names that differ only in emoji, never share a file)."""
    plain = "".join(c if c.isascii() and (c.isalnum() or c in "-_.@") else "_" for c in name)
    if plain == name and name and not name.startswith(".") and len(name) <= 100:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{plain.lstrip('.')[:100]}-{digest}"


def inside(folder: str | os.PathLike, relative: str) -> str:
    """`folder/relative`, or `UserError` when it resolves (through `..`, an absolute path or a
    symbolic link) to a place outside `folder`: reads and writes stay in the folders named."""
    root = os.path.realpath(folder)
    path = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, path]) != root:
        raise UserError(f"{relative!r} leads outside the folder {os.fspath(folder)} (to {path}); keep the"
                        " results' files inside their folder")
    return path


def _unwritable(value: Any) -> Exception | None:
    """Why `value` cannot be written as strict JSON in UTF-8 text (NaN or Infinity, a lone
    surrogate, an object JSON does not know), or None."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")  # text files too (md, csv)
    except (ValueError, TypeError, UnicodeEncodeError) as e:
        return e
    return None


def check_writable(value: Any, what: str) -> None:
    """`UserError` unless `value` can be written (`_unwritable`): checked before work whose
    results would hold it."""
    e = _unwritable(value)
    if e is not None:
        raise UserError(f"{what}: cannot be written to a result file ({type(e).__name__}: {str(e)[:80]});"
                        " fix the file it came from")


def _is_row(row: Any, fields: dict | None, values: tuple | None) -> bool:
    """A JSON-lines row as `read_jsonl` wants it: an object with `fields` of their types, every
    value of `values` (booleans are not numbers here), nothing that could not be written back."""
    def of(value, kind) -> bool:
        return isinstance(value, kind) and not isinstance(value, bool)

    return (isinstance(row, dict) and all(of(row.get(name), kind) for name, kind in (fields or {}).items())
            and (not values or all(of(v, values) for v in row.values())) and _unwritable(row) is None)


def read_jsonl(path: str | os.PathLike, *, repair: bool = True, fields: dict | None = None,
               values: tuple | None = None) -> list[dict]:
    """The rows of a JSON-lines file. A torn last line (a kill during an append) is dropped and,
    with `repair`, cut from the file. A bad line elsewhere raises `UserError` naming it, and so
    does a row that is not an object holding `fields` ({name: type or tuple of types}), or, with
    `values`, one holding a value of another type (booleans are not numbers here)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    rows, good = [], 0
    for k, line in enumerate(lines):
        if not line.strip():
            good += len(line) + 1
            continue
        try:
            row = json.loads(line)
        except ValueError:
            if any(rest.strip() for rest in lines[k + 1:]):
                raise UserError(f"{path}: line {k + 1} is not JSON; fix or remove it") from None
            if repair:  # a torn tail: keep the whole lines only
                with atomic(path, "wb") as out:
                    out.write(data[:good])
            return rows
        if not _is_row(row, fields, values):
            what = ", ".join(f"{name} ({' or '.join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))})"
                             for name, kind in (fields or {}).items())
            raise UserError(f"{path}: line {k + 1} is not a row of this file (an object with {what}); fix or"
                            " remove it")
        rows.append(row)
        good += len(line) + 1
    return rows


def printable(text: str) -> str:
    """`text` with control and format characters (newlines, escapes, bidi overrides) and lone
    surrogates shown as `\\uXXXX`, so that a name can never break a table row, a terminal line or
    a file's encoding."""
    import unicodedata

    return "".join(c if unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp", "Cs") else f"\\u{ord(c):04x}"
                   for c in str(text))


def md(text: str) -> str:
    """`text` for a markdown table cell or heading: printable, with `|` escaped."""
    return printable(text).replace("|", "\\|")


def digest(text: str, arrays: dict[str, np.ndarray] | None = None) -> str:
    """A short hex digest of `text` and the named arrays (their dtypes, shapes and bytes): what a
    checkpoint or a file of rows was made from, to tell it from another run's."""
    h = hashlib.sha256(text.encode())
    for k in sorted(arrays or {}):
        a = np.ascontiguousarray(arrays[k])
        h.update(f"{k}:{a.dtype}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]
