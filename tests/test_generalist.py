"""The generalist: pretraining across programs resumes and survives a corrupt
checkpoint; an untrained network plays the greedy game; the shipped network loads and plays a
valid, placed solution."""

from __future__ import annotations

import dataclasses
import json
import os

import chex
import jax
import numpy as np
import pytest
from builders import greedy_game

from configs import generalist as generalist_config
from jaxmmap import Rules, bundled, generate, make_instance, validate
from jaxmmap.agent import AgentConfig, expert, generalist, improvement, pretrain, selfplay
from jaxmmap.agent.networks import NetworkConfig
from jaxmmap.core import suite
from jaxmmap.core.files import UserError
from jaxmmap.env import game, observation
from jaxmmap.env.observation import NUM_DECISION_FEATURES
from jaxmmap.env.rollout import greedy_policy
from jaxmmap.solvers import agents, solve


def _small_config(steps: int):
    config = generalist_config.get_config()
    config.generated, config.instructions, config.suite_max_buffers, config.rounds = 2, (12,), 0, 0
    config.network.steps, config.network.checkpoint_every, config.network.widths = steps, 10, (16,)
    return config


def _pretrain(config, workdir: str) -> None:
    pretrain.pretrain(config, workdir, teacher=agents.teacher)


def test_pretraining_gathers_rows_trains_resumes_and_survives_a_corrupt_checkpoint(tmp_path, capsys):
    workdir = str(tmp_path / "run")
    _pretrain(_small_config(20), workdir)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [p["program"] for p in summary["programs"]] == ["generated-0", "generated-1"]
    assert summary["decisions"] == sum(p["rows"] for p in summary["programs"]) > 0
    # the intent network (`agent.guide`): an intent row per move that decides a buffer, at least
    # one per buffer and more than the decisions
    assert summary["intent"]["rows"] >= sum(p["buffers"] for p in summary["programs"]) > summary["decisions"]
    assert (tmp_path / "run" / "intent.msgpack").is_file() and 0 <= summary["intent"]["accuracy"] <= 1
    assert all(p["teacher"] in ("greedy", "heuristic") for p in summary["programs"])
    assert np.isfinite(summary["loss"]) and 0 <= summary["accuracy"] <= 1
    state = (tmp_path / "run" / "state.msgpack").read_bytes()
    capsys.readouterr()

    _pretrain(_small_config(20), workdir)  # all steps done: nothing trains, nothing changes
    assert "step " not in capsys.readouterr().out
    assert (tmp_path / "run" / "state.msgpack").read_bytes() == state

    _pretrain(_small_config(30), workdir)  # more steps: it goes on from step 20
    out = capsys.readouterr().out
    assert "step 30:" in out and "step 10:" not in out

    (tmp_path / "run" / "state.msgpack").write_bytes(b"not a checkpoint")
    _pretrain(_small_config(20), workdir)
    out = capsys.readouterr().out
    assert "cannot be read" in out and "step 20:" in out
    assert sorted(os.listdir(tmp_path / "run" / "rows")) == ["generated-0.npz", "generated-1.npz"]


def test_rows_made_from_another_program_are_gathered_again(tmp_path, capsys):
    """The smoke test of the one below: a program's kept rows are reused while their digest
    matches, and gathered again (and rewritten) when it does not."""
    path, calls = str(tmp_path / "rows.npz"), []

    def gather(value):
        calls.append(value)
        return {"x": np.full(3, value)}

    assert pretrain._kept(path, ("x",), lambda: gather(1), "a")["x"][0] == 1
    assert pretrain._kept(path, ("x",), lambda: gather(2), "a")["x"][0] == 1 and calls == [1]
    assert pretrain._kept(path, ("x",), lambda: gather(3), "b")["x"][0] == 3 and calls == [1, 3]
    assert "made from another program" in capsys.readouterr().out


@pytest.mark.slow
def test_a_changed_config_run_again_in_its_folder_gathers_and_trains_again(tmp_path, capsys):
    """Rows and checkpoints are kept by program name; another memory pressure makes other
    programs under the same names, so a run of the changed config in the old folder gathers
    their rows and trains again, and ends where the same config ends in an empty folder."""
    old, new = _small_config(10), _small_config(10)
    new.memory_fractions = (0.5,)  # (the old mix gives programs 0 and 1 fractions 0.1 and 0.15)
    _pretrain(old, str(tmp_path / "run"))
    capsys.readouterr()
    _pretrain(new, str(tmp_path / "run"))
    out = capsys.readouterr().out
    assert out.count("made from another program") == 2 and "the training starts over" in out
    _pretrain(new, str(tmp_path / "fresh"))
    assert (tmp_path / "run" / "params.msgpack").read_bytes() == (tmp_path / "fresh" / "params.msgpack").read_bytes()


def _improved(tmp_path, capsys):
    """A small pretraining with two generations of the improvement, run to its end: (config,
    workdir)."""
    config = _small_config(20)
    config.selection, config.drawn, config.replayed = ((100, 12),), 1, 1
    config.network.generations, config.network.population, config.network.select_every = 2, 2, 1
    workdir = str(tmp_path / "run")
    _pretrain(config, workdir)
    out = capsys.readouterr().out
    assert "generation 1:" in out and "generation 2:" in out and "selection" in out
    return config, workdir


@pytest.mark.slow  # (26-67 s; off by default, `network.generations = 0`: by default its batches,
# `improvement.returns`, in test_padded_instances_play_the_same_game_and_a_batch_plays_each_parameter_sets_game)
def test_the_improvement_searches_on_the_game_keeps_its_best_and_resumes(tmp_path, capsys):
    """Imitation, then the search in the parameters (`improvement.improve`): its generations run,
    the kept parameters are never worse than the imitation's on the selection programs, and a
    second run redoes nothing (other settings and a corrupt checkpoint: the slow test below)."""
    config, workdir = _improved(tmp_path, capsys)
    improvement = json.loads((tmp_path / "run" / "summary.json").read_text())["improvement"]
    assert improvement["selection"] >= improvement["selection_at_start"] > 0

    _pretrain(config, workdir)  # done: no generation again
    assert "generation " not in capsys.readouterr().out
    assert (tmp_path / "run" / "params.msgpack").stat().st_size > 0  # (generalist_games.py --params)


@pytest.mark.slow  # (15 s)
def test_the_improvement_starts_again_on_other_settings_and_on_a_corrupt_checkpoint(tmp_path, capsys):
    """Other settings of the search are not the same search (the same imitation is not trained
    again), and a checkpoint that cannot be read starts the search over."""
    config, workdir = _improved(tmp_path, capsys)
    config.network.sigma = 0.01
    _pretrain(config, workdir)
    out = capsys.readouterr().out
    assert "settings changed" in out and "generation 2:" in out and "the training starts over" not in out

    (tmp_path / "run" / "improve.msgpack").write_bytes(b"not a checkpoint")
    _pretrain(config, workdir)
    out = capsys.readouterr().out
    assert "cannot be read" in out and "generation 2:" in out


@pytest.mark.slow  # (18 s; by default: test_the_lookahead_over_an_untrained_network_is_the_lookahead_over_greedy)
def test_the_lookahead_teacher_labels_the_move_whose_greedy_continuation_returns_most():
    """`lookahead_rows`: at each real decision of the replay of greedy's game, the label is the
    legal move that, followed by greedy to the end, returns most (the replayed move on ties), and
    `gain` is that return over the replayed move's. Checked against games played here move by
    move."""
    problem = generate(2, num_instructions=12, latency_tables=True)
    rules = Rules()
    rows = generalist.lookahead_rows(problem, rules, points=16)
    instance = generalist.padded(problem, rules)
    step, greedy = jax.jit(game.step), jax.jit(greedy_policy)
    follow = jax.jit(selfplay.follow(generalist._policy_game(instance)))

    def continuation(move: int, action: int | None) -> float:  # None: the replayed move there too
        state = game.init(instance, backup=True)
        while not bool(state.done):
            m = int(state.moves)
            played = action if m == move and action is not None else (
                follow(None, state) if m <= move else greedy(None, state))
            state = step(state, played)
        return float(state.board.ret) if not bool(state.lost) else -np.inf

    assert len(rows["action"]) > 0 and np.all(rows["legal"][np.arange(len(rows["action"])), rows["action"]])
    assert rows["better"].sum() >= 1  # (this program has a decision where leaving greedy pays)
    for move, label, gain, better, legal in zip(rows["move"], rows["action"], rows["gain"], rows["better"],
                                                rows["legal"]):
        mine = continuation(int(move), None)
        best = max(continuation(int(move), a) for a in range(3) if legal[a])
        assert continuation(int(move), int(label)) == pytest.approx(best, rel=1e-6)
        assert bool(better) == (best > mine * (1 + 1e-6))
        assert gain == pytest.approx(best / mine if better else 1.0, rel=1e-5)


def test_the_lookahead_over_an_untrained_network_is_the_lookahead_over_greedy():
    """With parameters, the lookahead replays and continues with the network's own game; an
    untrained network plays greedy's, so its rows are the greedy lookahead's."""
    problem = generate(2, num_instructions=12, latency_tables=True)
    config = generalist.GeneralistConfig(widths=(8,))
    mine = generalist.lookahead_rows(problem, Rules(), points=16, params=generalist.init_params(config), config=config)
    theirs = generalist.lookahead_rows(problem, Rules(), points=16)
    for k in theirs:
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-6)


@pytest.mark.slow  # (22 s; off by default: its labels are tested by
# test_the_lookahead_teacher_labels_the_move_whose_greedy_continuation_returns_most)
def test_pretraining_with_the_lookahead_teacher(tmp_path):
    config = _small_config(10)
    config.teacher, config.lookahead_points = "lookahead", 8
    _pretrain(config, str(tmp_path / "run"))
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert all(p["teacher"] == "lookahead" and 0 < p["rows"] <= 8 for p in summary["programs"])
    assert summary["decisions"] == sum(p["rows"] for p in summary["programs"])
    seed = config.network.seed  # (the lookahead's points are drawn with the network's seed)
    names = [f"generated-0.lookahead-8-s{seed}.npz", f"generated-1.lookahead-8-s{seed}.npz"]
    assert sorted(os.listdir(tmp_path / "run" / "rows")) == names
    config.lookahead_points = 4  # another setting: other rows, gathered again beside the first
    _pretrain(config, str(tmp_path / "run"))
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert all(0 < p["rows"] <= 4 for p in summary["programs"])
    assert len(os.listdir(tmp_path / "run" / "rows")) == 4
    for points, teacher in ((0, "lookahead"), (8, "oracle")):
        config.lookahead_points, config.teacher = points, teacher
        with pytest.raises(UserError, match="lookahead_points|imitation or lookahead"):
            _pretrain(config, str(tmp_path / "run"))


def test_own_rows_are_the_networks_own_states_labelled_by_the_teacher():
    """A round of DAgger: the states of the network's own game (here untrained: greedy's game),
    each labelled by the teacher's move for its buffer where that move is legal there. With the
    teacher's game itself as the network's, the rows are the teacher's own (`teacher_rows`; a
    program whose greedy game never restores: a restore's states are not on the replay's path)."""
    problem = generate(8, num_instructions=40, inplace_prob=0.2)
    rules = Rules()
    config = generalist.GeneralistConfig(widths=(8,))
    params = generalist.init_params(config)
    greedy = np.asarray(generalist._policy_game(generalist.padded(problem, rules)))[:problem.num_buffers]
    mine = generalist.own_rows(params, problem, rules, greedy, config)
    theirs = generalist.teacher_rows(problem, rules, greedy)
    assert len(mine["action"]) == len(theirs["action"]) > 0
    for k in ("phi", "legal", "action"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-6)
    other = np.where(greedy == game.DROP, game.COPY, game.DROP).astype(np.int32)  # a teacher who disagrees
    rows = generalist.own_rows(params, problem, rules, other, config)
    assert 0 < len(rows["action"]) <= len(theirs["action"])
    assert rows["legal"][np.arange(len(rows["action"])), rows["action"]].all()
    row = {tuple(phi): (tuple(legal), int(action)) for phi, legal, action in zip(*theirs.values())}
    for phi, legal, action in zip(rows["phi"], rows["legal"], rows["action"]):  # greedy's states, the other label
        assert row[tuple(phi)][0] == tuple(legal) and action != row[tuple(phi)][1]


@pytest.mark.slow  # (37 s; a DAgger round runs by default in
# test_a_pretraining_run_is_reproduced_from_its_config_to_the_last_bit)
def test_pretraining_with_rounds_of_the_networks_own_games_resumes(tmp_path, capsys):
    config = _small_config(10)
    _pretrain(config, str(tmp_path / "run"))  # no rounds first
    path = tmp_path / "run" / "rows" / "generated-0.npz"
    with np.load(path) as f:  # rows gathered before the rounds existed: without the teacher's moves
        older = {k: f[k] for k in f.files if k != "teacher"}
    np.savez(path, **older)
    before = path.read_bytes()
    _pretrain(config, str(tmp_path / "run"))  # still enough without rounds: not gathered again
    assert path.read_bytes() == before
    config.rounds = 1  # the rounds need the teacher's moves: gathered again
    _pretrain(config, str(tmp_path / "run"))
    with np.load(path) as f:
        assert "teacher" in f.files
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert len(summary["rounds"]) == 1 and summary["rounds"][0]["rows"] > 0
    names = [f"generated-{i}{s}.npz" for i in range(2) for s in ("", ".own-1")]
    assert sorted(os.listdir(tmp_path / "run" / "rows")) == names
    capsys.readouterr()
    _pretrain(config, str(tmp_path / "run"))  # everything kept: nothing gathered or trained again
    assert "step " not in capsys.readouterr().out
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == summary
    config.round_labels, config.lookahead_points = "lookahead", 4  # policy improvement over the network's game
    _pretrain(config, str(tmp_path / "run"))
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert len(summary["rounds"]) == 1 and 0 < summary["rounds"][0]["rows"] <= 2 * 4
    assert len(os.listdir(tmp_path / "run" / "rows")) == 6  # beside the first round's rows
    config.round_labels = "oracle"
    with pytest.raises(UserError, match="round_labels"):
        _pretrain(config, str(tmp_path / "run"))
    config.round_labels, config.teacher = "teacher", "lookahead"
    with pytest.raises(UserError, match="rounds"):
        _pretrain(config, str(tmp_path / "run"))


@pytest.mark.slow  # (57 s; by default a run of a config and its run in an empty folder write the same parameters in
# test_a_changed_config_run_again_in_its_folder_gathers_and_trains_again)
def test_a_pretraining_run_is_reproduced_from_its_config_to_the_last_bit(tmp_path):
    """Two runs of the same config (the imitation and a DAgger round) into empty folders write the
    same parameters: the shipped network is its config's run (`configs/generalist.py`)."""
    config = _small_config(10)
    config.rounds = 1
    for run in ("a", "b"):
        _pretrain(config, str(tmp_path / run))
    assert (tmp_path / "a" / "params.msgpack").read_bytes() == (tmp_path / "b" / "params.msgpack").read_bytes()
    # and the seed matters: the imitation alone with two seeds, on run a's teacher rows (they do not
    # depend on the network; rows kept in the folder are read, not gathered again)
    config.rounds = 0
    for run, seed in (("c", config.network.seed), ("d", config.network.seed + 1)):
        (tmp_path / run / "rows").mkdir(parents=True)
        for rows in (tmp_path / "a" / "rows").glob("*.npz"):
            if ".own-" not in rows.name:
                (tmp_path / run / "rows" / rows.name).write_bytes(rows.read_bytes())
        config.network.seed = seed
        _pretrain(config, str(tmp_path / run))
    assert (tmp_path / "c" / "params.msgpack").read_bytes() != (tmp_path / "d" / "params.msgpack").read_bytes()


def test_the_generalist_keeps_its_training_seeds_apart():
    config = _small_config(20)
    config.generated = 101
    with pytest.raises(UserError, match="at most 100"):
        _pretrain(config, "unused")


def test_the_config_names_the_game_its_network_learns():
    """`placement` and `copy_supply` reach every training, drawn and selection program's rules
    (under deferred placement the NoCopy rule stays "same"), and the shipped network says them."""
    config = _small_config(20)
    config.generated, config.placement, config.copy_supply = 8, "deferred", "early"
    programs = pretrain.training_programs(config) + pretrain.selection_programs(config)
    assert {(r.placement, r.copy_supply, r.nocopy_offset) for _, _, r in programs} == {("deferred", "early", "same")}
    assert all(instance.deferred for instance in pretrain.drawn(config, programs, 0))
    assert generalist.trained_rules({"config": config.to_dict()}) == {"placement": "deferred", "copy_supply": "early"}
    assert generalist.trained_rules({}) == {"placement": "grid", "copy_supply": "near"}
    _, _, about = generalist.load()
    assert set(generalist.trained_rules(about).values()) <= {"grid", "near", "deferred", "early"}


@pytest.mark.slow  # (14 s on an empty compilation cache; the improvement is off by default, `network.generations = 0`;
# by default padded games are the same games: test_game.py, test_vmapped_padded_games_equal_single_games)
def test_padded_instances_play_the_same_game_and_a_batch_plays_each_parameter_sets_game():
    """The improvement pads programs to powers of two (few compiles): the same game, the same
    return. Its batches (`returns`) play each parameter set's own game: the shipped network's and
    the untrained one's (greedy's, the improvement's reference)."""
    problem = generate(3, num_instructions=30, latency_tables=True)
    rules = Rules()
    params, config, _ = generalist.load()
    padded, bucketed = generalist.padded(problem, rules), make_instance(problem, rules)
    assert padded.width.shape[0] == 128 != bucketed.width.shape[0]
    a = generalist.play(params, bucketed, config=config)
    b = generalist.play(params, padded, config=config)
    assert float(a.board.ret) == float(b.board.ret) and int(a.moves) == int(b.moves)
    greedy = greedy_game(bucketed)
    both = jax.tree.map(lambda *x: jax.numpy.stack(x), params, generalist.untrained(params))
    got = np.asarray(improvement.returns(both, padded, config=config))
    assert got.tolist() == [float(a.board.ret), float(greedy.board.ret)]


def test_an_untrained_generalist_plays_the_policy_game():
    """The network's logits are the greedy scores plus a correction that starts at zero."""
    problem = generate(3, num_instructions=40, inplace_prob=0.2, latency_tables=True)
    instance = make_instance(problem, Rules())
    config = generalist.GeneralistConfig(widths=(8,))
    played = generalist.play(generalist.init_params(config), instance, config=config)
    greedy = greedy_game(instance)
    np.testing.assert_array_equal(np.asarray(played.board.action), np.asarray(greedy.board.action))
    assert float(played.board.ret) == pytest.approx(float(greedy.board.ret))


def test_the_shipped_generalist_loads_and_plays_a_valid_placed_solution():
    params, config, about = generalist.load()
    assert about["decisions"] > 0 and about["programs"]
    assert not {p["program"] for p in about["programs"]} & set(suite.names("held-out"))
    result = solve(bundled("tiny"), "generalist", budget_s=60)
    assert result.solution.solver.startswith("generalist")
    assert validate(bundled("tiny"), result.solution).ok


@pytest.mark.slow  # (11 s on an empty compilation cache; by default the generalist solver plays through `solve`:
# test_the_shipped_generalist_loads_and_plays_a_valid_placed_solution)
def test_the_generalist_solver_plays_the_networks_game_then_draws_games_while_its_budget_lasts():
    problem = generate(5, num_instructions=30, inplace_prob=0.2)
    params, config, _ = generalist.load()
    played = generalist.play(params, make_instance(problem, Rules()), config=config)
    one = agents.generalist(problem, 60, 0)
    assert one.info == {"games": 1, "finished": True}
    np.testing.assert_array_equal(one.solution.action, np.asarray(played.board.action)[:problem.num_buffers])
    more = agents.generalist(problem, 5, 0, samples=True)  # (the game compiled above serves these)
    assert more.info["games"] > 1 and more.solution.ret >= one.solution.ret
    assert validate(problem, more.solution).ok


def test_the_expert_search_can_start_from_the_shipped_generalist():
    params, config, _ = generalist.load()
    instance = make_instance(bundled("tiny"), Rules())
    state = expert.init(instance, AgentConfig(pretrained=True))
    # its network plays the generalist's games: the correction at the shipped share
    chex.assert_trees_all_close(state.learner.params, generalist.with_correction(params, config.correction))
    phi = jax.random.normal(jax.random.key(0), (5, NUM_DECISION_FEATURES))
    net, greedy = generalist.network(config), observation.greedy_scores(phi)
    whole = net.apply(params, phi)[0]
    chex.assert_trees_all_close(net.apply(state.learner.params, phi)[0],
                                greedy + config.correction * (whole - greedy), atol=1e-5)
    small = dataclasses.replace(NetworkConfig.small(), decision=(8,))
    with pytest.raises(ValueError, match="widths"):
        expert.init(instance, AgentConfig(pretrained=True, network=small))
    with pytest.raises(ValueError, match="expert mode"):
        AgentConfig(pretrained=True, mode="muzero")
