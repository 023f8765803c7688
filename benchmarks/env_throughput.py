"""Moves per second of the jitted, batched JAX game beside the reference, in the same run.

    python benchmarks/env_throughput.py                       # CPU defaults
    python benchmarks/env_throughput.py --batches 1 64 1024 4096 16384 --max-work 2e7 --repeats 1   # a GPU
    python benchmarks/env_throughput.py -o results.json       # the figures, also as JSON
    python benchmarks/env_throughput.py --restores one-at-a-time   # the other batched restore
    python benchmarks/env_throughput.py --sizes 3000 --batches 256 --placements grid deferred  # deferred vs grid

For each standard size (about 315, 3,140 and 16,560 buffers, from the generator) both games play
the same stretch of the game, the first `--moves` moves (or the whole game if shorter), with a
random legal policy and the Drop-backup on:
* the reference (`jaxmmap.env.reference`, NumPy): one game, moves per second;
* the JAX game: `play.rollouts` over a batch of games of one instance, timed after compilation
  (best of 3); moves per second summed over the batch (only moves of unfinished games count).

Per size it prints the throughput per batch size, its ratio to the reference and to batch 1, the
compile time of the rollout, the batch where throughput peaks, the state per game (board, tables
and backup, without the shared instance), and the bytes a move reads and writes, derived from the
design (`bytes_per_move`): with a device's memory bandwidth it bounds the moves per second of a
batch too large for its caches (`--bandwidth`, default one H100's 3.35 TB/s).
"""

from __future__ import annotations

import argparse
import contextlib
import time

import jax
import numpy as np

from jaxmmap import Rules, generate, make_instance
from jaxmmap.core.files import write_json
from jaxmmap.core.rules import COPY_SUPPLY, PLACEMENTS
from jaxmmap.env import game
from jaxmmap.env import grid as memory
from jaxmmap.env.backup import TOGETHER_BELOW, restores_together, together
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.env.rollout import random_policy, rollouts

H100_BANDWIDTH = 3.35e12  # bytes per second (H100 SXM, HBM3)


def problem_of_size(buffers: int, seed: int = 0):
    """A generated program with about `buffers` buffers (about 2.9 buffers per instruction)."""
    return generate(seed, num_instructions=max(8, round(buffers / 2.9)), inplace_prob=0.1,
                    loop_prob=0.05, memory_fraction=0.5)


def reference_rate(problem, rules, moves: int, seed: int = 0) -> float:
    ref = ReferenceGame(problem, rules, backup=True)
    rng = np.random.default_rng(seed)
    t0, played = time.perf_counter(), 0
    while played < moves and not ref.done:
        ref.step(int(rng.choice(np.flatnonzero(ref.legal_actions()))))
        played += 1
    return played / (time.perf_counter() - t0)


def jax_rate(instance, batch: int, moves: int, repeats: int = 3, restores: str = "auto") -> tuple[float, float]:
    """(moves per second, compile seconds) of `rollouts` over `batch` games; `restores`: how a
    batch's restores run (`backup.together`: "auto" by the backend, "together" or
    "one-at-a-time")."""
    def run(key):
        with (contextlib.nullcontext() if restores == "auto" else restores_together(restores == "together")):
            return rollouts(instance, jax.random.split(key, batch), random_policy, backup=True,
                            max_moves=moves).moves

    t0 = time.perf_counter()
    run = jax.jit(run).lower(jax.random.key(0)).compile()
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(run(jax.random.key(0)))
    best = 0.0
    for r in range(repeats):
        t0 = time.perf_counter()
        played = jax.block_until_ready(run(jax.random.key(r + 1)))
        best = max(best, float(np.sum(played)) / (time.perf_counter() - t0))
    return best, compile_s


def state_bytes(instance) -> tuple[int, int]:
    """(bytes of one game's state without the instance, bytes of the shared instance)."""
    state = jax.eval_shape(lambda: game.init(instance, backup=True))
    size = lambda tree: sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(tree))  # noqa: E731
    return size(state.replace(instance=None)), size(state.instance)


def bytes_per_move(instance) -> int:
    """The bytes one move of one game reads and writes, from the design (an estimate: caches,
    fusion and alignment change the real traffic). T steps, Cw words per grid row, B blocks of
    R rows; every array a move touches counts once for a read and once for a write:
    * the supply prefix, int32[T+1], and the copy edges: the move's closed-form update, then the
      Drop-backup's restore and save, each a select of the whole array (3 arrays each);
    * the grid: two queries (B block summaries and the 2R rows of their end blocks each), one
      rectangle (2 blocks of R rows read and written, tags and summaries read and written), and
      the backup's selects of tags and summaries;
    * the records: a few entries read and one row of each written (a cache line each)."""
    t, cw = instance.supply.shape[0], instance.grid_words
    r = memory.block_rows(t)
    b = t // r
    word = 4
    supply = 2 * (t + 1) * word + 2 * 3 * (t + 1) * word
    edge = 8 * -(-t // 32) * word
    marks = b * cw * word  # one of tags, summary
    grid = 2 * (marks + 2 * r * cw * word) + 4 * r * cw * word + 4 * marks + 2 * 2 * 3 * marks
    records = 12 * 64
    return supply + edge + grid + records


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000, 16000])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--moves", type=int, default=1000, help="moves played per game, from the start")
    parser.add_argument("--columns", type=int, default=256)
    parser.add_argument("--max-work", type=float, default=5e6,
                        help="skip a batch when batch * buffers exceeds this (CPU memory and time)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per batch (the best counts)")
    parser.add_argument("--restores", choices=["auto", "together", "one-at-a-time"], default="auto",
                        help="how a batch's restores run: by the backend (auto), or forced")
    parser.add_argument("--bandwidth", type=float, default=H100_BANDWIDTH,
                        help="memory bandwidth in bytes/s for the bound from bytes per move")
    parser.add_argument("--placements", nargs="+", choices=PLACEMENTS, default=["grid"],
                        help="the game's placement rules (Rules.placement); each row's 'vs grid' is its "
                        "throughput over the grid game's at the same size and batch, when both run")
    parser.add_argument("--copy-supply", choices=COPY_SUPPLY, default="near",
                        help="Rules.copy_supply (edf: the deferred game's; the grid's rows then play near)")
    parser.add_argument("-o", "--output", help="also write the figures to this JSON file")
    args = parser.parse_args()
    device = f"{jax.devices()[0].device_kind} ({jax.default_backend()})"
    mode = args.restores if args.restores != "auto" else (
        f"together below {TOGETHER_BELOW} buffers" if together(0) else "one-at-a-time")
    print(f"device: {device}, columns {args.columns}, first {args.moves} moves, Drop-backup on,"
          f" restores {mode}")
    print(f"{'placement':>9} {'buffers':>8} {'steps':>6} {'batch':>6} {'moves/s':>12} {'vs ref':>8} {'vs b1':>6}"
          f" {'vs grid':>8} {'compile':>8}")
    rows, sizes, grid_rates = [], [], {}
    for size, placement in ((s, p) for s in args.sizes for p in args.placements):
        # (edf is a rule of deferred placement: the grid plays the paper's supply beside it)
        supply = "near" if placement == "grid" and args.copy_supply == "edf" else args.copy_supply
        rules = Rules(columns=args.columns, placement=placement, copy_supply=supply)
        problem = problem_of_size(size)
        instance = make_instance(problem, rules)
        ref = reference_rate(problem, rules, args.moves)
        per_game, shared = state_bytes(instance)
        moved = bytes_per_move(instance)
        rates = {}
        for batch in args.batches:
            if batch * problem.num_buffers > args.max_work:
                continue
            rate, compile_s = jax_rate(instance, batch, args.moves, args.repeats, args.restores)
            rates[batch] = rate
            first = rates.get(min(rates))
            if placement == "grid":
                grid_rates[size, batch] = rate
            vs_grid = f"{rate / grid_rates[size, batch]:>7.2f}x" if (size, batch) in grid_rates else f"{'-':>8}"
            print(f"{placement:>9} {problem.num_buffers:>8} {problem.num_steps:>6} {batch:>6} {rate:>12,.0f}"
                  f" {rate / ref:>7.1f}x {rate / first:>5.2f}x {vs_grid} {compile_s:>7.1f}s", flush=True)
            rows.append(dict(placement=placement, buffers=problem.num_buffers, steps=problem.num_steps, batch=batch,
                             moves_per_s=rate, reference_moves_per_s=ref, compile_s=compile_s))
        peak = max(rates, key=rates.get)
        print(f"{placement:>9} {problem.num_buffers:>8} buffers: peak at batch {peak} ({rates[peak]:,.0f} moves/s,"
              f" {rates[peak] / ref:,.1f}x the reference's {ref:,.0f}); state {per_game / 2**10:,.0f} KB"
              f" per game (instance {shared / 2**10:,.0f} KB, shared); about {moved / 2**10:,.1f} KB"
              f" read and written per move, so at most {args.bandwidth / moved / 1e6:,.1f} M moves/s"
              f" at {args.bandwidth / 1e12:g} TB/s", flush=True)
        sizes.append(dict(placement=placement, buffers=problem.num_buffers, steps=problem.num_steps, peak_batch=peak,
                          state_bytes_per_game=per_game, instance_bytes=shared,
                          bytes_per_move=moved, reference_moves_per_s=ref,
                          bandwidth_bound_moves_per_s=args.bandwidth / moved))
    if args.output:
        write_json(args.output, dict(device=device, columns=args.columns, copy_supply=args.copy_supply,
                                     moves=args.moves, restores=mode,
                                     date=time.strftime("%Y-%m-%d"), rows=rows, sizes=sizes),
                   indent=1)


if __name__ == "__main__":
    main()
