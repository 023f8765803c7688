"""`jaxmmap.plots` is `jaxmmap.harness.plots` (the import path the README gives users)."""

from jaxmmap.harness.plots import *  # noqa: F403
from jaxmmap.harness.plots import __all__  # noqa: F401
