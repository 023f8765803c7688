"""The generalist: one network pretrained across programs (`jaxmmap.agent.generalist`).

    python train.py --config configs/generalist.py --workdir runs/generalist
    python train.py --config configs/generalist.py --config.ship=True --workdir runs/generalist

The training programs: `generated` generated programs (seeds 0, 1, ...; each seed's size,
memory pressure, latency tables, in-place share and NoCopy rule cycle through the lists below)
and the suite's training split up to `suite_max_buffers` buffers (`suite.names("train")`; the
held-out split is never read). Running the same command again resumes: the teacher's rows of
every program already gathered are kept in WORKDIR/rows/, the training state in
WORKDIR/state.msgpack (each with a digest of what made it: with a changed config, what changed is
made again). After the policy network, the intent network (`jaxmmap.agent.guide`: the heuristic's
own decisions, whether the game could play them or not) is trained with the same network settings on
the intent rows of the teacher's games and of the rounds (WORKDIR/intent/, WORKDIR/intent.msgpack).
With `ship`, the parameters, the intent network's and this config go into the package
(`jaxmmap/data/generalist/`), where `jaxmmap solve P --solver generalist` finds them.
"""

import ml_collections


def get_config() -> ml_collections.ConfigDict:
    config = ml_collections.ConfigDict()
    config.kind = "generalist"
    config.generated = 28  # generated programs: seeds 0 .. generated - 1
    config.instructions = (40, 100, 250, 600, 1200)  # about 2.9 buffers an instruction
    # memory pressures 10 to 1.25 (the fast memory's share of the peak demand; seven, so that no
    # other cycle of the mix, of 2, 4, 5 or 6, pairs a pressure with one size or rule). The training
    # split's programs reach 22; trained at low pressure only, the network's games fell below greedy's
    # on high-pressure programs (`benchmarks/generalist_correction.py --pressure`; docs/decisions.md,
    # "The network trained at low memory pressure only")
    config.memory_fractions = (0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.8)
    config.inplace = (0.1, 0.3)
    config.suite_max_buffers = 5000  # the training split's programs up to this size (0: none)
    config.columns = "auto"
    # the game the network learns (docs/game.md): "grid" (the paper's; every training program's NoCopy
    # rule cycles through "same" and "lowest") or "deferred" (the load profile and the packer, where
    # the teacher's plan is a game: the heuristic's decisions keep 0.99 of their return), with the
    # copy supply "near" or "early"
    config.placement = "grid"
    config.copy_supply = "near"
    # the improvement (network.generations > 0, `improvement.improve`): each generation plays `drawn`
    # fresh generated programs (seeds from 10,000 on) and `replayed` of the training programs in turn
    config.drawn = 8
    config.replayed = 4
    # the improvement's selection programs (seed, instructions): generated, neither trained on nor
    # held out (the held-out measurements use seeds 1000-1004)
    config.selection = ((100, 40), (101, 80), (102, 150), (103, 300), (104, 500), (105, 800), (106, 1000),
                        (107, 1200), (108, 300), (109, 600))
    # the teacher: "imitation" (the better of the heuristic's and greedy's game, every real decision)
    # or "lookahead" (one step of policy improvement over greedy at up to `lookahead_points` real
    # decisions of greedy's game, drawn with network.seed where it has more: each legal move played,
    # greedy on to the end, the best one kept; worse than the imitation: docs/decisions.md, The generalist)
    config.teacher = "imitation"
    config.lookahead_points = 128
    # rounds after the imitation (`generalist.own_rows`): each plays the network's own greedy game on
    # every training program, labels the states it visits, and trains again on all the rows so far
    # (each round in WORKDIR/own-R/ or improve-R-POINTS/). One round of DAgger raised the imitation's
    # games on the selection seeds for each of five network seeds; a second fell back (docs/decisions.md,
    # "Two rounds of DAgger"). The shipped network is this config's run (seed 0) on one
    # core (`taskset -c 0`: on two, XLA:CPU sums in another order and trains another network).
    config.rounds = 1
    # how a round labels those states: "teacher" (the teacher's move for the buffer: DAgger) or
    # "lookahead" (one step of policy improvement over the network's own game, as the lookahead
    # teacher does over greedy's, at `lookahead_points` decisions)
    config.round_labels = "teacher"
    config.ship = False  # write the trained network into the package
    # network.seed 0: the best of seeds 0-4 by the geometric mean of its games over greedy's on 27
    # programs neither trained on nor held out: the selection seeds, the large programs and the
    # high-pressure ones (`benchmarks/generalist_correction.py`, `--large`, `--pressure`; docs/agent.md,
    # "Choosing the shipped network")
    config.network = ml_collections.ConfigDict(dict(
        widths=(128, 128), steps=3000, batch_size=1024, learning_rate=1e-3, weight_decay=1e-4,
        checkpoint_every=500, seed=0, correction=0.5,
        generations=0, population=16, sigma=0.005, es_learning_rate=0.003, select_every=5, search="head"))
    return config
