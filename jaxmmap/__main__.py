"""The `jaxmmap` program (and `python -m jaxmmap`): `jaxmmap.cli.main`, then exit."""

import os
import sys

from jaxmmap.cli import main
from jaxmmap.core.clock import abandoned


def entry() -> None:
    """Runs the command line and exits with its status. A solver that overran its budget can
    leave a compile running in a thread (`core.clock.within`); the interpreter's exit would tear
    it down inside the compiler and abort (status 134, after the output was written), so the
    program then ends at once instead, its output flushed, with the command's own status."""
    code = main()
    if abandoned():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
