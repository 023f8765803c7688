"""The solvers' declared options (`solvers.spec`): every option of every solver is declared with
its kind and range, and a value outside it is one `UserError` before any work, from Python and
from the command line alike."""

import dataclasses
import inspect
import json
import re

import pytest

from jaxmmap.agent.config import AgentConfig
from jaxmmap.cli import main
from jaxmmap.core.files import UserError
from jaxmmap.solvers import SOLVERS, check_options, describe_options, solve
from jaxmmap.solvers._registry import loaded
from jaxmmap.solvers.evolution.egrl import Config as EgrlConfig

AGENT_FIELDS = {f.name for f in dataclasses.fields(AgentConfig)}
# What the solvers that take `**options` pass on: a config's fields (and prod: muzero's run).
PASSED_ON = {"egrl": {f.name for f in dataclasses.fields(EgrlConfig)}, "muzero": AGENT_FIELDS,
             "muzero-prod": AGENT_FIELDS | {"max_iterations", "padding", "demonstration", "progress"}}

# (solver, option, value, message): findings of an independent fuzz, and more of the same kind
MISTAKES = [
    ("muzero", "network", "bogus", "option network must be"),  # (an AttributeError's traceback)
    ("egrl", "elite_frac", 2, "option elite_frac must be a number in (0, 1]"),  # (accepted)
    ("muzero", "discount", 2, "option discount must be a number in [0, 1]"),  # (21 s on a 3 s budget)
    ("muzero", "network", {"embedding": 0}, "option network.embedding must be a whole number >= 1"),
    ("muzero", "network", {"bogus": 1}, "option network has no field 'bogus'"),
    ("muzero-prod", "dirichlet_fraction", 1.5, "option dirichlet_fraction must be a number in [0, 1]"),
    ("muzero", "place_share", 1, "option place_share must be a number in [0, 1), or null"),
    ("muzero", "elites", 100, "options: elites must be in [1, games"),  # (AgentConfig's own check)
    ("mcts", "max_batches", 0, "option max_batches must be a whole number >= 1, or null"),
    ("es", "population", 3, "options: population must be even"),
    ("es", "sigma", 0, "option sigma must be a number > 0"),
    ("egrl", "temperature", [1.0, 0.1], "options: temperature is a range"),
    ("egrl", "record", 10 ** 6, "options: the replay"),
    ("egrl", "padding", [128, 64], "option padding must be a list of 3 whole numbers >= 1, or null"),
    ("random", "batch", True, "option batch must be a whole number >= 1"),
    ("heuristic", "moves", -1, "option moves must be a whole number >= 0"),
    ("heuristic", "max_overlap", "inf", "option max_overlap must be a number >= 0"),
    ("cpsat", "hint", "bogus", "option hint must be a Solution (from Python), or one of null, greedy"),
    ("exhaustive", "max_buffers", 0, "option max_buffers must be a whole number >= 1"),
]


@pytest.mark.parametrize("solver,key,value,message", MISTAKES, ids=lambda x: str(x)[:20])
def test_a_value_outside_its_declaration_is_one_user_error_before_any_work(solver, key, value, message):
    with pytest.raises(UserError, match="^" + re.escape(f"the solver {solver}'s {message}")):
        solve(None, solver, budget_s=3.0, **{key: value})  # (no problem: the check comes first)


@pytest.mark.parametrize("solver,key,value,message", MISTAKES[:3], ids=lambda x: str(x)[:20])
def test_on_the_command_line_it_is_one_error_line(solver, key, value, message, capsys):
    code = main(["solve", "bundled:tiny", "--solver", solver, "--budget", "3", "--option", f"{key}={json.dumps(value)}"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"error: the solver {solver}'s {message}"), err


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_solver_declares_every_option_it_takes_and_its_defaults_fit(solver):
    fn = loaded(solver)
    params = {p.name: p for p in inspect.signature(fn).parameters.values()
              if p.kind == p.KEYWORD_ONLY and p.name != "rules"}
    assert set(fn.options) == set(params) | PASSED_ON.get(solver, set())
    defaults = {name: p.default for name, p in params.items()}
    config = EgrlConfig if solver == "egrl" else AgentConfig if solver in ("muzero", "muzero-prod") else None
    if config is not None:
        defaults.update({f.name: f.default for f in dataclasses.fields(config)})
    for name, default in defaults.items():
        assert fn.options[name].wrong(name, default) is None, (solver, name, default)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_option_is_checked(solver):
    """A value of no declared kind (a list of an empty list) is refused by every option."""
    for key in loaded(solver).options:
        with pytest.raises(UserError, match=f"option {key} "):
            check_options(solver, {key: [[]]}, 10.0)


def test_the_options_are_listed_with_their_ranges():
    listed = describe_options("egrl").splitlines()
    assert "elite_frac: a number in (0, 1]. share of each kind kept unchanged (one at least)" in listed
    assert len(listed) == len(loaded("egrl").options)
    assert "network: a NetworkConfig (from Python), or a dict of its fields (grid_channels" \
        in describe_options("muzero")


def test_values_inside_the_declarations_pass():
    check_options("muzero", {"network": {"embedding": 32, "torso": [64, 64], "normalize": "layernorm"},
                             "discount": 1, "padding": [128, 64, 1], "max_grad_norm": None}, 10.0)
    check_options("egrl", {"elite_frac": 1, "temperature": [0.5, 0.5], "from_heuristic": None}, 10.0)
    check_options("heuristic", {"pins": None, "mode": "best", "max_overlap": 3}, 10.0)

