"""The blocked, two-plane memory grid against a plain bit grid, and the word-level column search."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap.env import grid as memory
from jaxmmap.env import moves


def _bits(words: np.ndarray) -> np.ndarray:
    return ((words[..., None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool).reshape(*words.shape[:-1], -1)


def _words(bits: np.ndarray) -> np.ndarray:
    chunks = bits.reshape(*bits.shape[:-1], -1, 32).astype(np.uint64)
    return (chunks << np.arange(32, dtype=np.uint64)).sum(-1).astype(np.uint32)


@pytest.mark.parametrize("steps", [1, 64, 112, 128, 1280, 2500, 17000])
def test_block_rows_keep_moves_short_whatever_the_steps_factors(steps):
    r = memory.block_rows(steps)
    assert r & (r - 1) == 0
    cost = lambda q: -(-steps // q) + 2 * q  # noqa: E731 (summaries and tags, and two blocks of rows)
    assert cost(r) == min(cost(2 ** k) for k in range(16))
    assert cost(r) <= 3 * (2 * steps) ** 0.5 + 3  # (17,000 steps: 128 rows, not the 8 that divide it)
    grid = memory.init(steps, 2)
    assert grid.block == r and grid.plane.shape[0] * r >= steps and memory.rows(grid).shape == (steps, 2)


# Queries whole (grids below memory.CHUNKED_FROM steps) and by chunks (512 steps: blocks of 16
# rows, so `used` reads a block's rows in more than one chunk).
@pytest.mark.parametrize("steps,words,chunked", [(64, 1, False), (112, 2, False), (128, 3, False), (64, 1, True),
                                                 (112, 2, True), (128, 3, True), (512, 1, True), (100, 2, False),
                                                 (300, 1, True)])
@pytest.mark.parametrize("window", [None, 1, 2], ids=["blocks", "window1", "window2"])
def test_grid_follows_a_plain_grid_through_fills_saves_and_restores(steps, words, chunked, window, monkeypatch):
    """With `window`, grids of more words than it are filled by `_fill_window`, its windows
    clamped at the last word (two) or one word each (one)."""
    monkeypatch.setattr(memory, "CHUNKED_FROM", 0 if chunked else 10 ** 9)
    if window is not None:
        if words <= window:
            pytest.skip("filled by _fill_blocks: the case without a window")
        monkeypatch.setattr(memory, "WINDOW", window)
    rng = np.random.default_rng(steps)
    cols = 32 * words
    fill = jax.jit(lambda *a: memory.fill(*a))  # (a new function: traced with this WINDOW)
    used = jax.jit(lambda grid, a, b: memory.used(grid, a, b))  # (a new function: traced with this CHUNKED_FROM)
    save, restore, rows, row = jax.jit(memory.save), jax.jit(memory.restore), jax.jit(memory.rows), jax.jit(memory.row)
    grid, plain = memory.init(steps, words), np.zeros((steps, cols), bool)
    saved = plain.copy()
    for move in range(300):
        kind = rng.choice(["fill", "fill", "fill", "save", "restore"], p=[0.3, 0.3, 0.2, 0.12, 0.08])
        if kind == "fill":
            a = int(rng.integers(-3, steps))
            b = int(rng.integers(a - 2, min(steps + 3, a + rng.choice([2, 20, steps]))))
            lo = int(rng.integers(0, cols))
            mask = np.zeros(cols, bool)
            mask[lo:lo + int(rng.integers(1, 9))] = True
            active = bool(rng.random() < 0.9)
            grid = fill(grid, jnp.int32(a), jnp.int32(b), jnp.asarray(_words(mask)), jnp.bool_(active))
            if active:
                plain[max(a, 0):max(min(b, steps - 1) + 1, 0)] |= mask
        elif kind == "save":
            grid, saved = save(grid), plain.copy()
        else:
            grid, plain = restore(grid), saved.copy()
        np.testing.assert_array_equal(_bits(np.asarray(rows(grid))), plain, err_msg=f"move {move}")
        _check_summaries(grid)
        for _ in range(3):
            a = int(rng.integers(-3, steps + 2))
            b = int(rng.integers(a - 3, steps + 3))
            expected = plain[max(a, 0):max(min(b, steps - 1) + 1, 0)].any(axis=0)
            np.testing.assert_array_equal(_bits(np.asarray(used(grid, jnp.int32(a), jnp.int32(b)))), expected)
            t = int(rng.integers(0, steps))
            np.testing.assert_array_equal(_bits(np.asarray(row(grid, jnp.int32(t)))), plain[t])


def _check_summaries(grid):
    """Each sub summary is the OR of its rows, each super the OR of its blocks' summaries."""
    b, r, s = grid.plane.shape[0], grid.block, grid.sub
    if s:
        blocks = np.asarray(grid.planes).reshape(2, b, r + r // s, -1)[np.asarray(grid.plane).astype(int), np.arange(b)]
        subs = np.bitwise_or.reduce(blocks[:, :r].reshape(b, r // s, s, -1), axis=2)
        np.testing.assert_array_equal(blocks[:, r:], subs)
    else:
        assert grid.planes.shape[1] == b * r
    summary = np.zeros((-(-b // grid.group) * grid.group, grid.summary.shape[1]), np.uint32)
    summary[:b] = np.asarray(grid.summary)
    groups = summary.reshape(-1, grid.group, summary.shape[1])
    np.testing.assert_array_equal(np.asarray(grid.supers), np.bitwise_or.reduce(groups, axis=1))


def test_lowest_free_offset_and_fit_match_a_scan_of_the_columns():
    rng = np.random.default_rng(0)
    lowest, fits = jax.jit(moves._lowest), jax.jit(moves._fits)
    for _ in range(400):
        words = int(rng.integers(1, 9))
        used = rng.random(32 * words) < rng.random() ** 2
        width = int(rng.integers(0, 32 * words + 3))
        free_at = [o for o in range(32 * words) if o + width <= 32 * words and not used[o:o + width].any()]
        packed = jnp.asarray(_words(used))
        assert int(lowest(packed, jnp.int32(width))) == (free_at[0] if free_at else -1)
        offset = int(rng.integers(-2, 32 * words + 2))
        assert bool(fits(packed, jnp.int32(offset), jnp.int32(width))) == (offset in free_at or (
            width == 0 and 0 <= offset <= 32 * words))


@pytest.mark.parametrize("games", [1, 3])
@pytest.mark.parametrize("chunked", [False, True])
def test_batched_fills_match_one_game_at_a_time(games, chunked, monkeypatch):
    """A batch of one is filled by `_fill_window`, larger batches by `_fill_blocks` on every game:
    the same grids as the games filled one by one; and a batch's queries (`_used_chunks`, on
    grids with sub summaries) answer as each game's alone (`_used_runs`)."""
    monkeypatch.setattr(memory, "WINDOW", 1)
    monkeypatch.setattr(memory, "CHUNKED_FROM", 0 if chunked else 10 ** 9)
    used = jax.jit(lambda *a: memory.used(*a))
    used_batched = jax.jit(jax.vmap(lambda *a: memory.used(*a)))
    rng = np.random.default_rng(games)
    steps, words = 300, 3
    fill = jax.jit(lambda *a: memory.fill(*a))
    batched = jax.jit(jax.vmap(lambda *a: memory.fill(*a)))
    grids = [memory.init(steps, words) for _ in range(games)]
    together = jax.tree.map(lambda *x: jnp.stack(x), *grids)
    for _ in range(60):
        a = rng.integers(-2, steps, games)
        b = np.minimum(a + rng.choice([0, 3, 40, 200], games), steps + 2)
        lo = rng.integers(0, 32 * words - 40, games)
        width = rng.integers(1, 40, games)
        masks = np.stack([_words((np.arange(32 * words) >= o) & (np.arange(32 * words) < o + w))
                          for o, w in zip(lo, width)])
        active = rng.random(games) < 0.9
        if rng.random() < 0.1:
            grids = [memory.save(g) for g in grids]
            together = jax.vmap(memory.save)(together)
        args = [jnp.asarray(x) for x in (a.astype(np.int32), b.astype(np.int32), masks, active)]
        together = batched(together, *args)
        grids = [fill(g, *(x[k] for x in args)) for k, g in enumerate(grids)]
        qa = rng.integers(-2, steps, games).astype(np.int32)
        qb = np.minimum(qa + rng.choice([0, 5, 60, 250], games), steps + 2).astype(np.int32)
        got = np.asarray(used_batched(together, jnp.asarray(qa), jnp.asarray(qb)))
        for k, g in enumerate(grids):
            np.testing.assert_array_equal(got[k], np.asarray(used(g, jnp.int32(qa[k]), jnp.int32(qb[k]))))
    for k, g in enumerate(grids):
        np.testing.assert_array_equal(np.asarray(memory.rows(jax.tree.map(lambda x, k=k: x[k], together))),
                                      np.asarray(memory.rows(g)))
