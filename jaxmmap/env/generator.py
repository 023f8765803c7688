"""Seeded random programs turned into memory-mapping `Problem`s, for tests and quick starts.

The model (see `GeneratorConfig` for every option):

* **Program.** A straight-line program of `T = num_instructions` instructions (logical steps
  `0..T-1`). A few *parameters* (weights: tensors that exist from step 0) plus one output tensor
  per instruction. Instruction `i` reads 1..`max_inputs` distinct earlier tensors: its first
  operand is the previous instruction's output, or with probability `skip_prob` a *skip
  connection* to an older output or a parameter; each further operand is a parameter, or with
  probability `skip_prob` a skip connection. (So with `skip_prob = 0` every output is read only by
  the next instruction.)
* **Buffers.** For each instruction in order: one input buffer per distinct tensor it reads, in
  operand order (`is_output = False`), then one output buffer (`is_output = True`), all with
  `target_time = i`, so target times are non-decreasing. A tensor lives from its producing step
  (0 for parameters) to the last step that reads it (inclusive); every buffer of the tensor
  carries that range. The outputs nobody reads are the program's results: they are `live_out`
  (they must end in slow memory). Tensor ids are renumbered densely in order of first
  appearance (parameters nobody reads have no buffers and disappear).
* **Aliasing.** An *in-place* instruction (probability `inplace_prob`) writes its output into the
  memory of one of its operands that no later instruction reads (none such: not in place). A
  *loop carry* (probability `loop_prob` per instruction) is a chain of 2..`max_loop_length`
  consecutive instructions that each update one value in place (each reads the previous one's
  output as its first operand and aliases its output to it, unless a later instruction still
  reads that operand through a skip connection). Aliased tensors are merged with a
  union-find; all buffers of one union share one `alias_id` (dense `0..G-1`, in order of first
  appearance) and one size. Tensors in no union have `alias_id = -1`.
* **Sizes.** Bytes `2**normal(size_mean_log2, size_sigma)` rounded to a multiple of 256, at least
  256, one draw per union. With probability `oversize_prob` a union is made larger than
  `memory_size` (it can never be placed in fast memory).
* **Memory.** `memory_size = max(1, int(memory_fraction * peak))`, where `peak` is the largest,
  over steps, total of the bytes of live unions (each union counted once over the hull of its
  members' live ranges; sizes before the oversize step, so the seed alone fixes `peak`).
* **Time (microseconds).** Bandwidths are bytes per microsecond. An instruction touching `B`
  bytes needs `mem = B / slow_bandwidth` for its memory traffic and has a compute time
  `compute = step_overhead + mem * uniform(0.25, 1.25)`; its all-slow duration is the roofline
  `max(compute, mem)` (`metadata["step_latency"]`, what `jaxmmap.latency` starts from). A
  buffer's copy *demand* is `size / copy_bandwidth` (about one to three instructions' worth of
  supply), 0 with probability `zero_demand_prob`.
* **Benefits follow the roofline.** A buffer in fast memory saves at most
  `size * (1/slow_bandwidth - 1/fast_bandwidth)` of memory time, times `lognormal(0, 0.25)`
  noise; but a step can never get faster than its compute, so the benefits of one step are
  scaled down together until they add up to at most `max(0, mem - compute)`, what the step can
  save. A compute-bound step's buffers save nothing (benefit 0), as on the real machine.
* **Supply.** `supply="all_fast"` (the default, the paper's convention): a step's supply is its
  duration with all its own buffers in fast memory, a lower bound of its duration under any
  solution, so a copy the game accepts is never late and the simulated latency is exactly the
  all-slow latency less the return. `supply="all_slow"` keeps the older convention (the
  all-slow duration): copy-heavy solutions then stall once their steps get faster, and the
  return stops tracking speed. With probability `zero_supply_prob` a step has supply 0.
* **Latency tables** (`latency_tables=True`). One table per instruction, over its (at most 8,
  the largest) buffers: `latency[mask] = max(compute, sum over the instruction's buffers of
  size / (fast_bandwidth if listed and its bit is set in mask else slow_bandwidth))`, a roofline,
  so the benefits of buffers of one instruction interact non-additively (the static benefits
  of a step's buffers beyond the 8 share what the table leaves above the compute time).

Everything is drawn from `np.random.default_rng(seed)`; the same arguments give the same problem.
`python -m jaxmmap.env.generator` regenerates the bundled `jaxmmap/data/tiny.json.gz`.
"""

from __future__ import annotations

import dataclasses
import os
import types

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.core.problem import (
    MAX_TABLE_BUFFERS,
    LatencyTable,
    Problem,
    ProblemError,
    save_problem,
)
from jaxmmap.core.unionfind import UnionFind

__all__ = ["BUNDLED_OPTIONS", "Generator", "GeneratorConfig", "generate", "make_bundled"]

_SIZE_QUANTUM = 256
_MIN_LOG2, _MAX_LOG2 = 8.0, 40.0  # clip the drawn log2 sizes to [256 B, 1 TiB]


#: What a step's copy supply is: its duration with its own buffers fast (default), or all slow.
SUPPLY_CONVENTIONS = ("all_fast", "all_slow")

#: The most instructions `generate` makes: about 3 buffers each, so under `problem.MAX_BUFFERS`.
MAX_INSTRUCTIONS = 250_000


@dataclasses.dataclass(frozen=True)
class GeneratorConfig:
    """The options of a random program (the model is in the module docstring).

    Attributes:
      num_instructions: T, the number of instructions (logical steps), >= 1.
      max_inputs: each instruction reads 1..max_inputs distinct earlier tensors (uniform count;
        fewer when there are not enough candidates).
      skip_prob: probability that an operand is a skip connection (an output older than the
        previous instruction's, or a parameter) instead of the previous output (first operand)
        or a parameter (further operands).
      inplace_prob: probability that an instruction works in place (output aliased to an
        operand).
      loop_prob: probability, per instruction not already in a loop, that a loop carry (a chain
        of in-place updates of one value) starts there.
      size_mean_log2, size_sigma: tensor sizes are 2**normal(size_mean_log2, size_sigma) bytes,
        rounded to a multiple of 256 (>= 256).
      memory_fraction: memory_size as a fraction of the peak live bytes (> 0; small = tight,
        1.0 = every tensor fits at its peak).
      zero_demand_prob: probability that a buffer has demand 0 (copies for free).
      oversize_prob: probability that a tensor (with its alias union) is larger than memory_size.
      zero_supply_prob: probability that a step has supply 0 (no copy can overlap it).
      latency_tables: add one roofline latency table per instruction (dynamic benefits).
      name: the problem's name; default f"random-{seed}-{num_instructions}".
      num_params: number of parameters; default max(1, min(16, num_instructions // 8)).
      max_loop_length: longest loop carry, in instructions (>= 2).
      slow_bandwidth, fast_bandwidth: bytes per microsecond of slow (HBM) and fast memory
        (fast > slow > 0).
      copy_bandwidth: bytes per microsecond of the copy engine (> 0).
      step_overhead: fixed compute time of every instruction, microseconds (>= 0).
      supply: "all_fast" (a step's supply is its duration with its own buffers fast: the
        paper's convention, copies are never late) or "all_slow" (its all-slow duration, the
        older generator's: solutions can stall, so the return is a weaker proxy of speed).
    """

    num_instructions: int = 64
    max_inputs: int = 3
    skip_prob: float = 0.3
    inplace_prob: float = 0.1
    loop_prob: float = 0.05
    size_mean_log2: float = 16.0
    size_sigma: float = 1.5
    memory_fraction: float = 0.5
    zero_demand_prob: float = 0.0
    oversize_prob: float = 0.0
    zero_supply_prob: float = 0.0
    latency_tables: bool = False
    name: str | None = None
    num_params: int | None = None
    max_loop_length: int = 6
    slow_bandwidth: float = 1.0e6
    fast_bandwidth: float = 4.0e6
    copy_bandwidth: float = 1.0e5
    step_overhead: float = 0.01
    supply: str = "all_fast"

    def check(self) -> None:
        """Raises `ProblemError` naming the first option out of its range."""
        T = int(self.num_instructions)
        if not 1 <= T <= MAX_INSTRUCTIONS:
            raise ProblemError(f"num_instructions must be in [1, {MAX_INSTRUCTIONS:,}], got {T:,}"
                               " (a program of about 3 buffers per instruction must stay under the"
                               " game's 1,000,000 buffers)")
        if self.max_inputs < 1:
            raise ProblemError(f"max_inputs must be >= 1, got {self.max_inputs}")
        for name in ("skip_prob", "inplace_prob", "loop_prob", "zero_demand_prob", "oversize_prob",
                     "zero_supply_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ProblemError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if not 0 < self.memory_fraction <= 1e6:
            raise ProblemError(f"memory_fraction must be in (0, 1e6] (a fraction of the peak live bytes), got"
                               f" {self.memory_fraction}")
        if self.size_sigma < 0:
            raise ProblemError(f"size_sigma must be >= 0, got {self.size_sigma}")
        if self.max_loop_length < 2:
            raise ProblemError(f"max_loop_length must be >= 2, got {self.max_loop_length}")
        if not (self.fast_bandwidth > self.slow_bandwidth > 0 and self.copy_bandwidth > 0
                and self.step_overhead >= 0):
            raise ProblemError("need fast_bandwidth > slow_bandwidth > 0, copy_bandwidth > 0 and"
                               " step_overhead >= 0")
        if self.supply not in SUPPLY_CONVENTIONS:
            raise ProblemError(f"supply must be one of {', '.join(SUPPLY_CONVENTIONS)}, got {self.supply!r}")
        if self.num_params is not None and int(self.num_params) < 1:
            raise ProblemError(f"num_params must be >= 1, got {self.num_params}")

    @property
    def params(self) -> int:
        """P, the number of parameters."""
        T = int(self.num_instructions)
        return max(1, min(16, T // 8)) if self.num_params is None else int(self.num_params)


class Generator:
    """Random programs as problems, as jumanji's generators: `Generator(config)(seed)`.

    The seed is an int >= 0 (`np.random.default_rng`) or a JAX PRNG key (an int is drawn from
    it); the same config and seed give the same problem."""

    def __init__(self, config: GeneratorConfig = GeneratorConfig()):
        config.check()
        self.config = config

    def __call__(self, seed) -> Problem:
        if isinstance(seed, jax.Array):
            seed = int(jax.random.randint(seed, (), 0, jnp.iinfo(jnp.int32).max))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 63:
            raise ProblemError(f"a generator seed is a whole number in [0, 2**63), got {seed!r}")
        cfg = self.config
        T, P = int(cfg.num_instructions), cfg.params
        n_tensors = P + T  # tensors 0..P-1 are parameters, P+i is the output of instruction i
        u = _draws(np.random.default_rng(seed), T, P, int(cfg.max_inputs), cfg)
        in_loop, loop_cont = _loops(u, cfg.loop_prob, T)
        reads, last_read = _operands(u, in_loop, loop_cont, cfg.skip_prob, T, P)
        root = _alias_roots(u, reads, last_read, in_loop, cfg.inplace_prob, T, P)
        counts, buf_tensor, is_output = _buffers(reads, T, P)
        target_time = np.repeat(np.arange(T, dtype=np.int64), counts)
        t_start = np.zeros(n_tensors, dtype=np.int64)  # live ranges per tensor
        t_start[P:] = np.arange(T)
        t_end = np.maximum(t_start, last_read)
        t_size, memory_size, peak = _sizes(u, root, buf_tensor, t_start, t_end, cfg, T)
        size = t_size[buf_tensor]
        # The program's results: the outputs no instruction reads (they must end in slow memory).
        t_live_out = np.zeros(n_tensors, dtype=bool)
        t_live_out[P:] = last_read[P:] < 0
        alias_id, tensor_id = _dense_ids(root, buf_tensor, n_tensors)
        supply, demand, benefit, tables, duration = _times(u, counts, target_time, size, cfg, T)
        metadata = {"generator": "jaxmmap.generator", "seed": int(seed), **_options(cfg),
                    "time_unit": "microseconds", "size_unit": "bytes",
                    "bandwidth_unit": "bytes per microsecond", "peak_live_bytes": int(peak),
                    "step_latency": duration.tolist()}
        return Problem(
            name=f"random-{seed}-{T}" if cfg.name is None else cfg.name,
            memory_size=int(memory_size), supply=supply, size=size, is_output=is_output,
            target_time=target_time, tensor_id=tensor_id, alias_id=alias_id,
            live_start=t_start[buf_tensor], live_end=t_end[buf_tensor], demand=demand,
            benefit=benefit, latency_tables=tables, metadata=metadata,
            live_out=t_live_out[buf_tensor])


def generate(seed: int, **options) -> Problem:
    """A random program as a `Problem`: `Generator(GeneratorConfig(**options))(seed)`; the
    options are `GeneratorConfig`'s. The result passes `jaxmmap.core.problem.check_problem` and
    keeps the options in `metadata`."""
    try:
        config = GeneratorConfig(**options)
    except TypeError as e:
        raise ProblemError(f"generate: {e}") from None
    return Generator(config)(seed)


def _options(cfg: GeneratorConfig) -> dict:
    return {
        "num_instructions": int(cfg.num_instructions), "max_inputs": int(cfg.max_inputs),
        "skip_prob": float(cfg.skip_prob), "inplace_prob": float(cfg.inplace_prob),
        "loop_prob": float(cfg.loop_prob), "size_mean_log2": float(cfg.size_mean_log2),
        "size_sigma": float(cfg.size_sigma), "memory_fraction": float(cfg.memory_fraction),
        "zero_demand_prob": float(cfg.zero_demand_prob), "oversize_prob": float(cfg.oversize_prob),
        "zero_supply_prob": float(cfg.zero_supply_prob), "latency_tables": bool(cfg.latency_tables),
        "num_params": cfg.params, "max_loop_length": int(cfg.max_loop_length),
        "slow_bandwidth": float(cfg.slow_bandwidth), "fast_bandwidth": float(cfg.fast_bandwidth),
        "copy_bandwidth": float(cfg.copy_bandwidth), "step_overhead": float(cfg.step_overhead),
        "supply": cfg.supply,
    }


def _draws(rng: np.random.Generator, T: int, P: int, max_inputs: int, cfg: GeneratorConfig
           ) -> types.SimpleNamespace:
    """Every random number, drawn up front in a fixed order that depends only on the structural
    options (T, max_inputs, P), so the float options change values, not streams."""
    n_tensors = P + T
    u = types.SimpleNamespace()
    u.n_inputs = rng.integers(1, max_inputs + 1, size=T)
    u.skip = rng.random((T, max_inputs))
    u.pick = rng.random((T, max_inputs))
    u.inplace = rng.random(T)
    u.inplace_pick = rng.random(T)
    u.loop = rng.random(T)
    u.loop_len = rng.integers(2, int(cfg.max_loop_length) + 1, size=T)
    u.size_log2 = rng.normal(cfg.size_mean_log2, cfg.size_sigma, size=n_tensors)
    u.oversize = rng.random(n_tensors)
    u.oversize_factor = 1.05 + 0.95 * rng.random(n_tensors)
    u.compute_factor = rng.uniform(0.25, 1.25, size=T)
    u.zero_supply = rng.random(T)
    n_max = T * (max_inputs + 1)  # per-buffer draws: at most max_inputs + 1 buffers per instruction
    u.benefit_noise = rng.lognormal(0.0, 0.25, size=n_max)
    u.zero_demand = rng.random(n_max)
    return u


def _loops(u, loop_prob: float, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Loop carries: instructions loop_start..loop_start+L-1 form a chain of in-place updates.
    Returns (in_loop: the instruction aliases its output to its first operand, loop_cont: and
    that operand is the previous output), bool[T] each."""
    in_loop = np.zeros(T, dtype=bool)
    loop_cont = np.zeros(T, dtype=bool)
    i = 0
    while i < T:
        if u.loop[i] < loop_prob:
            L = int(min(u.loop_len[i], T - i))
            in_loop[i:i + L] = True
            loop_cont[i + 1:i + L] = True
            i += L
        else:
            i += 1
    return in_loop, loop_cont


def _pick(lo_n: int, u: float, chosen: list[int]) -> int:
    """A tensor of 0..lo_n-1 not in `chosen` (uniform start, then probe upwards), or -1."""
    if lo_n <= 0:
        return -1
    j = int(u * lo_n)
    for _ in range(lo_n):
        if j not in chosen:
            return j
        j = j + 1 if j + 1 < lo_n else 0
    return -1


def _operands(u, in_loop, loop_cont, skip_prob: float, T: int, P: int) -> tuple[list[list[int]], np.ndarray]:
    """The tensors every instruction reads, and the last instruction reading each tensor (-1:
    none)."""
    reads: list[list[int]] = []
    last_read = np.full(P + T, -1, dtype=np.int64)
    for i in range(T):
        prev = P + i - 1 if i > 0 else -1
        n_older = P + max(i - 1, 0)  # parameters and outputs of instructions 0..i-2
        chosen: list[int] = []
        for s in range(int(u.n_inputs[i])):
            if s == 0:
                if prev >= 0 and (loop_cont[i] or u.skip[i, 0] >= skip_prob):
                    t = prev
                else:
                    t = _pick(n_older, u.pick[i, 0], chosen)
            elif u.skip[i, s] < skip_prob:
                t = _pick(n_older, u.pick[i, s], chosen)
            else:
                t = _pick(P, u.pick[i, s], chosen)
            if t >= 0:
                chosen.append(t)
        reads.append(chosen)
        last_read[chosen] = i
    return reads, last_read


def _alias_roots(u, reads, last_read, in_loop, inplace_prob: float, T: int, P: int) -> np.ndarray:
    """int64[P + T]: the root of each tensor's alias union. An instruction may only write over
    an operand that nobody reads afterwards (as XLA does); otherwise it would destroy a value
    still in use, and the memory of the two tensors, which an alias group shares, would have to
    hold both at once."""
    sets = UnionFind(P + T)
    for i in range(T):
        dead = [t for t in reads[i] if last_read[t] == i]
        if in_loop[i]:
            target = reads[i][0] if reads[i][0] in dead else -1
        elif u.inplace[i] < inplace_prob and dead:
            target = dead[int(u.inplace_pick[i] * len(dead))]
        else:
            continue
        if target >= 0:
            sets.union(P + i, target)
    return sets.roots()


def _buffers(reads, T: int, P: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Buffers in game order: per instruction, one per tensor it reads, then its output. Returns
    (buffers per instruction int64[T], tensor int64[N], is_output bool[N])."""
    counts = np.asarray([len(r) + 1 for r in reads], dtype=np.int64)
    N = int(counts.sum())
    buf_tensor = np.empty(N, dtype=np.int64)
    is_output = np.zeros(N, dtype=bool)
    pos = 0
    for i in range(T):
        r = reads[i]
        k = len(r)
        buf_tensor[pos:pos + k] = r
        buf_tensor[pos + k] = P + i
        is_output[pos + k] = True
        pos += k + 1
    return counts, buf_tensor, is_output


def _sizes(u, root, buf_tensor, t_start, t_end, cfg: GeneratorConfig, T: int
           ) -> tuple[np.ndarray, int, float]:
    """(bytes per tensor, one size per union; memory_size; the peak of live bytes, each union
    once over its hull, before the oversize unions grow)."""
    n_tensors = root.shape[0]
    log2 = np.clip(u.size_log2, _MIN_LOG2, _MAX_LOG2)
    raw = np.maximum(np.rint(np.exp2(log2) / _SIZE_QUANTUM), 1).astype(np.int64) * _SIZE_QUANTUM
    t_size = raw[root]
    present = np.zeros(n_tensors, dtype=bool)
    present[buf_tensor] = True
    g_start = np.full(n_tensors, T, dtype=np.int64)
    g_end = np.full(n_tensors, -1, dtype=np.int64)
    np.minimum.at(g_start, root[present], t_start[present])
    np.maximum.at(g_end, root[present], t_end[present])
    groups = np.flatnonzero(g_end >= 0)
    live = np.zeros(T + 1, dtype=np.float64)
    np.add.at(live, g_start[groups], raw[groups].astype(np.float64))
    np.add.at(live, g_end[groups] + 1, -raw[groups].astype(np.float64))
    peak = float(np.cumsum(live)[:T].max())
    memory_size = max(1, int(cfg.memory_fraction * peak))
    over_root = u.oversize < cfg.oversize_prob  # indexed by root
    big = (np.ceil(memory_size * u.oversize_factor / _SIZE_QUANTUM).astype(np.int64)
           * _SIZE_QUANTUM)
    big = np.maximum(big, (memory_size // _SIZE_QUANTUM + 1) * _SIZE_QUANTUM)
    return np.where(over_root[root], big[root], t_size), memory_size, peak


def _dense_ids(root, buf_tensor, n_tensors: int) -> tuple[np.ndarray, np.ndarray]:
    """(alias_id: dense over the unions of more than one tensor with buffers, in order of first
    appearance, -1 elsewhere; tensor_id: dense in order of first appearance), int64[N] each."""
    present = np.zeros(n_tensors, dtype=bool)
    present[buf_tensor] = True
    members = np.bincount(root[present], minlength=n_tensors)
    buf_root = root[buf_tensor]
    aliased = members[buf_root] > 1
    alias_id = np.full(buf_tensor.shape[0], -1, dtype=np.int64)
    if aliased.any():
        roots_in_order, first = np.unique(buf_root[aliased], return_index=True)
        order = np.argsort(first, kind="stable")
        dense = np.empty(n_tensors, dtype=np.int64)
        dense[roots_in_order[order]] = np.arange(order.size)
        alias_id[aliased] = dense[buf_root[aliased]]
    seen_t, first_t = np.unique(buf_tensor, return_index=True)
    remap = np.empty(n_tensors, dtype=np.int64)
    remap[seen_t[np.argsort(first_t, kind="stable")]] = np.arange(seen_t.size)
    return alias_id, remap[buf_tensor]


def _times(u, counts, target_time, size, cfg: GeneratorConfig, T: int):
    """Supply, demand, benefit, latency tables, and the steps' all-slow durations (the module
    docstring has the model)."""
    N = size.shape[0]
    sizef = size.astype(np.float64)
    mem_time = np.bincount(target_time, weights=sizef / cfg.slow_bandwidth, minlength=T)
    compute = cfg.step_overhead + mem_time * u.compute_factor
    duration = np.maximum(compute, mem_time)
    saving = sizef * (1.0 / cfg.slow_bandwidth - 1.0 / cfg.fast_bandwidth)
    tables: tuple[LatencyTable, ...] = ()
    headroom = duration - compute  # what the step's static benefits may save together, >= 0
    static = np.ones(N, dtype=bool)
    if cfg.latency_tables:
        tables = _roofline_tables(counts, saving, compute, mem_time)
        for table in tables:
            static[table.buffers] = False
            headroom[table.step] = table.latency[-1] - compute[table.step]
    benefit = _clipped(saving * u.benefit_noise[:N], target_time, static, headroom, T)
    all_fast = duration - np.bincount(target_time[static], weights=benefit[static], minlength=T)
    for table in tables:
        all_fast[table.step] -= table.latency[0] - table.latency[-1]
    supply = np.maximum(all_fast, 0.0) if cfg.supply == "all_fast" else duration.copy()
    supply[u.zero_supply < cfg.zero_supply_prob] = 0.0
    demand = sizef / cfg.copy_bandwidth
    demand[u.zero_demand[:N] < cfg.zero_demand_prob] = 0.0
    return supply, demand, benefit, tables, duration


def _clipped(benefit, target_time, static, headroom, T: int) -> np.ndarray:
    """The benefits of each step's `static` buffers, scaled down together where they add up to
    more than the step's `headroom` (float64[T]); the others are kept as they are."""
    total = np.bincount(target_time[static], weights=benefit[static], minlength=T)
    scale = np.where(total > headroom, headroom / np.where(total > 0, total, 1.0), 1.0)
    return np.where(static, benefit * scale[target_time], benefit)


def _roofline_tables(counts, saving, compute, mem_time):
    """One table per instruction over its (at most 8, largest) buffers: the roofline
    max(compute, memory time) with the listed buffers in fast memory per the mask bits."""
    bits = {k: ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(np.float64)
            for k in range(1, MAX_TABLE_BUFFERS + 1)}
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    tables = []
    for i, (s, c) in enumerate(zip(starts.tolist(), counts.tolist())):
        idx = np.arange(s, s + c, dtype=np.int64)
        if c > MAX_TABLE_BUFFERS:
            keep = np.argsort(-saving[idx], kind="stable")[:MAX_TABLE_BUFFERS]
            idx = np.sort(idx[keep])
        k = idx.size
        mem = np.maximum(mem_time[i] - bits[k] @ saving[idx], 0.0)
        lat = np.maximum(compute[i], mem)
        tables.append(LatencyTable(step=i, buffers=idx, latency=lat))
    return tuple(tables)


# ----------------------------------------------------------------------------- bundled problems

#: The options of the bundled `tiny` problem (see `make_bundled`).
BUNDLED_OPTIONS = {
    "tiny": dict(seed=7, num_instructions=40, max_inputs=3, skip_prob=0.3, inplace_prob=0.15,
                 loop_prob=0.05, memory_fraction=0.4, name="tiny"),
}


def make_bundled(name: str = "tiny", directory: str | os.PathLike | None = None) -> str:
    """Regenerates the bundled problem `name` (default into this package's `data/` folder) and
    returns the path written."""
    opts = dict(BUNDLED_OPTIONS[name])
    problem = generate(opts.pop("seed"), **opts)
    directory = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data") \
        if directory is None else os.fspath(directory)
    path = os.path.join(directory, f"{name}.json.gz")
    save_problem(problem, path)  # checked, atomic, reproducible bytes (gzip time stamp 0)
    return path


if __name__ == "__main__":
    for _name in BUNDLED_OPTIONS:
        print(make_bundled(_name))
