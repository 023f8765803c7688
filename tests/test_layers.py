"""The package's layers and its size limits (docs/architecture.md).

Imports run one way, from the core to the command line:

    core <- env <- {importer, solvers.base} <- {agent, solvers} <- solvers.agents (and the solver
    registry) <- harness <- cli, scripts and notebooks

A module may import any module of a lower layer and the modules of its own package; it may
not import a higher layer, nor a sibling package of its own layer (agent and solvers meet only
in `solvers.agents`). Every import counts, those inside functions too, so none can hide a cycle.
"""

from __future__ import annotations

import ast
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jaxmmap"

# (module prefix, layer, group): the longest matching prefix decides; modules of one group may
# import each other.
LAYERS = [
    ("jaxmmap.core", 0, "core"),
    ("jaxmmap.env", 1, "env"),
    ("jaxmmap.importer", 2, "importer"),
    ("jaxmmap.solvers.base", 2, "solvers.base"),
    ("jaxmmap.agent", 3, "agent"),
    ("jaxmmap.solvers", 3, "solvers"),
    ("jaxmmap.solvers.agents", 4, "solvers.agents"),
    ("jaxmmap.harness", 5, "harness"),
    ("jaxmmap.cli", 6, "cli"),
    ("jaxmmap.__main__", 6, "cli"),
    ("jaxmmap.plots", 6, "root"),
    ("jaxmmap", 6, "root"),
]
# The solver registry (`solvers/__init__.py` and its parts: the solvers by name, their options
# checked, `solve`) sits with solvers.agents.
REGISTRY = {"jaxmmap.solvers", "jaxmmap.solvers._registry", "jaxmmap.solvers._options", "jaxmmap.solvers._solve"}
SCRIPTS = 7


def layer(module: str) -> tuple[int, str]:
    if module in REGISTRY:
        return 4, "solvers.agents"
    for prefix, rank, group in sorted(LAYERS, key=lambda x: -len(x[0])):
        if module == prefix or module.startswith(prefix + "."):
            return rank, group
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every jaxmmap import in `source`, `from a import b` as `a.b` when b
    is a module of the package."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "jaxmmap"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jaxmmap":
            assert node.level == 0, "use absolute imports"
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                is_module = (PACKAGE.parent / (sub.replace(".", "/") + ".py")).exists() or \
                    (PACKAGE.parent / sub.replace(".", "/")).is_dir()
                out.append((node.lineno, sub if is_module else node.module))
    return out


def violations(name: str, source: str, rank: int, group: str) -> list[str]:
    bad = []
    for line, target in imports(source):
        if name == "jaxmmap" and target.startswith("jaxmmap."):
            continue  # the root __init__ re-exports every layer's public names
        t_rank, t_group = layer(target)
        if t_group != group and t_rank >= rank:
            bad.append(f"{name}:{line} imports {target} (layer {t_rank} {t_group} from layer {rank} {group})")
    return bad


def test_every_module_imports_only_lower_layers_or_its_own_package():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        bad += violations(name, path.read_text(), *layer(name))
    assert not bad, "\n".join(bad)


def test_scripts_and_notebooks_use_the_package_not_the_command_line():
    sources = [(p.name, p.read_text()) for p in [ROOT / "train.py", *sorted((ROOT / "benchmarks").rglob("*.py"))]]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        sources.append((nb.name, "\n".join(ln for ln in code.splitlines() if not ln.lstrip().startswith(("!", "%")))))
    bad = [f"{name}:{line} imports {t}" for name, src in sources for line, t in imports(src)
           if layer(t)[1] == "cli"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("case", [
    ("jaxmmap.core.problem", "from jaxmmap.env import game", True),
    ("jaxmmap.env.game", "from jaxmmap.core.problem import Problem", False),
    ("jaxmmap.solvers.evolution.es", "from jaxmmap.agent import networks", True),
    ("jaxmmap.solvers.evolution.es", "from jaxmmap.solvers.base import Result", False),
    ("jaxmmap.solvers.agents", "from jaxmmap.agent.loop import fit", False),
    ("jaxmmap.agent.loop", "def f():\n    from jaxmmap.solvers.heuristic import heuristic", True),
    ("jaxmmap.agent.loop", "from jaxmmap.solvers import solve", True),
    ("jaxmmap.harness.report", "from jaxmmap import cli", True),
])
def test_the_rule_catches_upward_and_sideways_imports(case):
    name, source, wrong = case
    assert bool(violations(name, source, *layer(name))) == wrong


# Files over 500 lines and functions over 80 carry a comment saying why (`# size:` in the file's
# first 60 lines, or just above the function).
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80


def oversize() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(ROOT))
        source = path.read_text()
        lines = source.splitlines()
        if len(lines) > MAX_FILE_LINES and "# size:" not in "\n".join(lines[:60]):
            found[name] = len(lines)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                head = "\n".join(lines[max(node.lineno - 3, 0): node.lineno])
                if length > MAX_FUNCTION_LINES and "# size:" not in head:
                    found[f"{name}:{node.name}"] = length
    return found


def test_no_file_over_500_lines_and_no_function_over_80_without_a_reason():
    assert not oversize(), f"over the size limits: {oversize()}"
