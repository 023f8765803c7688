"""Seeded random programs turned into memory-mapping `Problem`s, for tests and quick starts.

The model (see `generate` for every option):

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
  `compute = step_overhead + mem * uniform(0.25, 1.25)`; its duration, which is the copy
  *supply* of its step, is the roofline `max(compute, mem)` (also in `metadata["step_latency"]`,
  the step's all-slow duration for `jaxmmap.latency`). With probability
  `zero_supply_prob` a step has supply 0. A buffer's copy *demand* is
  `size / copy_bandwidth` (about one to three instructions' worth of supply), 0 with probability
  `zero_demand_prob`. Its *benefit* is the time saved by accessing it from fast memory,
  `size * (1/slow_bandwidth - 1/fast_bandwidth) * lognormal(0, 0.25) > 0`.
* **Latency tables** (`latency_tables=True`). One table per instruction, over its (at most 8,
  the largest) buffers: `latency[mask] = max(compute, sum over the instruction's buffers of
  size / (fast_bandwidth if listed and its bit is set in mask else slow_bandwidth))`, a roofline,
  so the benefits of buffers of one instruction interact non-additively.

Everything is drawn from `np.random.default_rng(seed)`; the same arguments give the same problem.
`python -m jaxmmap.env.generator` regenerates the bundled `jaxmmap/data/tiny.json.gz`.
"""

from __future__ import annotations

import os

import numpy as np

from jaxmmap.core.problem import (
    MAX_TABLE_BUFFERS,
    LatencyTable,
    Problem,
    ProblemError,
    save_problem,
)

__all__ = ["generate", "make_bundled", "BUNDLED_OPTIONS"]

_SIZE_QUANTUM = 256
_MIN_LOG2, _MAX_LOG2 = 8.0, 40.0  # clip the drawn log2 sizes to [256 B, 1 TiB]


def _check_prob(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ProblemError(f"{name} must be in [0, 1], got {value}")


#: The most instructions `generate` makes: about 3 buffers each, so under `problem.MAX_BUFFERS`.
MAX_INSTRUCTIONS = 250_000


def generate(seed: int, *, num_instructions: int = 64, max_inputs: int = 3,
             skip_prob: float = 0.3, inplace_prob: float = 0.1, loop_prob: float = 0.05,
             size_mean_log2: float = 16.0, size_sigma: float = 1.5,
             memory_fraction: float = 0.5, zero_demand_prob: float = 0.0,
             oversize_prob: float = 0.0, zero_supply_prob: float = 0.0,
             latency_tables: bool = False, name: str | None = None,
             num_params: int | None = None, max_loop_length: int = 6,
             slow_bandwidth: float = 1.0e6, fast_bandwidth: float = 4.0e6,
             copy_bandwidth: float = 1.0e5, step_overhead: float = 0.01) -> Problem:
    """A random program as a `Problem` (the model is in the module docstring).

    Args:
      seed: seed of `np.random.default_rng` (an int >= 0); fixes the problem.
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

    Returns:
      A `Problem` that passes `jaxmmap.core.problem.check_problem`, with the options in `metadata`.
    """
    T = int(num_instructions)
    if not 1 <= T <= MAX_INSTRUCTIONS:
        raise ProblemError(f"num_instructions must be in [1, {MAX_INSTRUCTIONS:,}], got {num_instructions:,}"
                           " (a program of about 3 buffers per instruction must stay under the"
                           " game's 1,000,000 buffers)")
    if max_inputs < 1:
        raise ProblemError(f"max_inputs must be >= 1, got {max_inputs}")
    for pname, pval in (("skip_prob", skip_prob), ("inplace_prob", inplace_prob),
                        ("loop_prob", loop_prob), ("zero_demand_prob", zero_demand_prob),
                        ("oversize_prob", oversize_prob), ("zero_supply_prob", zero_supply_prob)):
        _check_prob(pname, pval)
    if not memory_fraction > 0:
        raise ProblemError(f"memory_fraction must be > 0, got {memory_fraction}")
    if size_sigma < 0:
        raise ProblemError(f"size_sigma must be >= 0, got {size_sigma}")
    if max_loop_length < 2:
        raise ProblemError(f"max_loop_length must be >= 2, got {max_loop_length}")
    if not (fast_bandwidth > slow_bandwidth > 0 and copy_bandwidth > 0 and step_overhead >= 0):
        raise ProblemError("need fast_bandwidth > slow_bandwidth > 0, copy_bandwidth > 0 and"
                         " step_overhead >= 0")
    P = max(1, min(16, T // 8)) if num_params is None else int(num_params)
    if P < 1:
        raise ProblemError(f"num_params must be >= 1, got {num_params}")
    max_inputs = int(max_inputs)
    n_tensors = P + T  # tensors 0..P-1 are parameters, P+i is the output of instruction i

    rng = np.random.default_rng(seed)
    # Every random number is drawn up front, in a fixed order that depends only on the
    # structural options (T, max_inputs, P), so the float options change values, not streams.
    n_inputs = rng.integers(1, max_inputs + 1, size=T)
    u_skip = rng.random((T, max_inputs))
    u_pick = rng.random((T, max_inputs))
    u_inplace = rng.random(T)
    u_inplace_pick = rng.random(T)
    u_loop = rng.random(T)
    loop_len = rng.integers(2, max_loop_length + 1, size=T)
    size_log2 = rng.normal(size_mean_log2, size_sigma, size=n_tensors)
    u_oversize = rng.random(n_tensors)
    oversize_factor = 1.05 + 0.95 * rng.random(n_tensors)
    compute_factor = rng.uniform(0.25, 1.25, size=T)
    u_zero_supply = rng.random(T)
    # Per-buffer draws: at most max_inputs + 1 buffers per instruction.
    n_max = T * (max_inputs + 1)
    benefit_noise = rng.lognormal(0.0, 0.25, size=n_max)
    u_zero_demand = rng.random(n_max)

    # --- loops: instructions loop_start..loop_start+L-1 form a chain of in-place updates.
    in_loop = np.zeros(T, dtype=bool)  # instruction aliases its output to its first operand
    loop_cont = np.zeros(T, dtype=bool)  # ... and that operand is the previous output
    i = 0
    while i < T:
        if u_loop[i] < loop_prob:
            L = int(min(loop_len[i], T - i))
            in_loop[i:i + L] = True
            loop_cont[i + 1:i + L] = True
            i += L
        else:
            i += 1

    # --- operands of every instruction.
    reads: list[list[int]] = []
    last_read = np.full(n_tensors, -1, dtype=np.int64)

    def pick(lo_n: int, u: float, chosen: list[int]) -> int:
        """A tensor of 0..lo_n-1 not in `chosen` (uniform start, then probe upwards), or -1."""
        if lo_n <= 0:
            return -1
        j = int(u * lo_n)
        for _ in range(lo_n):
            if j not in chosen:
                return j
            j = j + 1 if j + 1 < lo_n else 0
        return -1

    for i in range(T):
        prev = P + i - 1 if i > 0 else -1
        n_older = P + max(i - 1, 0)  # parameters and outputs of instructions 0..i-2
        chosen: list[int] = []
        for s in range(int(n_inputs[i])):
            if s == 0:
                if prev >= 0 and (loop_cont[i] or u_skip[i, 0] >= skip_prob):
                    t = prev
                else:
                    t = pick(n_older, u_pick[i, 0], chosen)
            elif u_skip[i, s] < skip_prob:
                t = pick(n_older, u_pick[i, s], chosen)
            else:
                t = pick(P, u_pick[i, s], chosen)
            if t >= 0:
                chosen.append(t)
        reads.append(chosen)
        last_read[chosen] = i

    # --- aliasing (union-find over tensors).
    parent = list(range(n_tensors))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for i in range(T):
        # An instruction may only write over an operand that nobody reads afterwards (as XLA
        # does); otherwise it would destroy a value still in use, and the memory of the two
        # tensors, which an alias group shares, would have to hold both at once.
        dead = [t for t in reads[i] if last_read[t] == i]
        if in_loop[i]:
            target = reads[i][0] if reads[i][0] in dead else -1
        elif u_inplace[i] < inplace_prob and dead:
            target = dead[int(u_inplace_pick[i] * len(dead))]
        else:
            continue
        if target >= 0:
            union(P + i, target)
    root = np.asarray([find(x) for x in range(n_tensors)], dtype=np.int64)

    # --- buffers, in game order.
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
    target_time = np.repeat(np.arange(T, dtype=np.int64), counts)

    # Live ranges per tensor.
    t_start = np.zeros(n_tensors, dtype=np.int64)
    t_start[P:] = np.arange(T)
    t_end = np.maximum(t_start, last_read)

    # --- sizes: one per union.
    log2 = np.clip(size_log2, _MIN_LOG2, _MAX_LOG2)
    raw = np.maximum(np.rint(np.exp2(log2) / _SIZE_QUANTUM), 1).astype(np.int64) * _SIZE_QUANTUM
    t_size = raw[root]

    # --- memory size from the peak of live bytes, each union once over its hull.
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
    memory_size = max(1, int(memory_fraction * peak))

    # --- oversize unions.
    over_root = u_oversize < oversize_prob  # indexed by root
    big = (np.ceil(memory_size * oversize_factor / _SIZE_QUANTUM).astype(np.int64)
           * _SIZE_QUANTUM)
    big = np.maximum(big, (memory_size // _SIZE_QUANTUM + 1) * _SIZE_QUANTUM)
    t_size = np.where(over_root[root], big[root], t_size)

    size = t_size[buf_tensor]
    # The program's results: the outputs no instruction reads (they must end in slow memory).
    t_live_out = np.zeros(n_tensors, dtype=bool)
    t_live_out[P:] = last_read[P:] < 0
    live_out = t_live_out[buf_tensor]
    live_start = t_start[buf_tensor]
    live_end = t_end[buf_tensor]

    # --- alias ids: dense over unions with more than one tensor that have buffers.
    members = np.bincount(root[present], minlength=n_tensors)
    buf_root = root[buf_tensor]
    aliased = members[buf_root] > 1
    alias_id = np.full(N, -1, dtype=np.int64)
    if aliased.any():
        roots_in_order, first = np.unique(buf_root[aliased], return_index=True)
        order = np.argsort(first, kind="stable")
        dense = np.empty(n_tensors, dtype=np.int64)
        dense[roots_in_order[order]] = np.arange(order.size)
        alias_id[aliased] = dense[buf_root[aliased]]

    # --- dense tensor ids in order of first appearance.
    seen_t, first_t = np.unique(buf_tensor, return_index=True)
    remap = np.empty(n_tensors, dtype=np.int64)
    remap[seen_t[np.argsort(first_t, kind="stable")]] = np.arange(seen_t.size)
    tensor_id = remap[buf_tensor]

    # --- time: supply (roofline duration), demand, benefit.
    sizef = size.astype(np.float64)
    mem_time = np.bincount(target_time, weights=sizef / slow_bandwidth, minlength=T)
    compute = step_overhead + mem_time * compute_factor
    duration = np.maximum(compute, mem_time)
    supply = duration.copy()
    supply[u_zero_supply < zero_supply_prob] = 0.0
    demand = sizef / copy_bandwidth
    demand[u_zero_demand[:N] < zero_demand_prob] = 0.0
    benefit = sizef * (1.0 / slow_bandwidth - 1.0 / fast_bandwidth) * benefit_noise[:N]

    tables: tuple[LatencyTable, ...] = ()
    if latency_tables:
        tables = _roofline_tables(counts, sizef, compute, mem_time, slow_bandwidth,
                                  fast_bandwidth)

    options = {
        "num_instructions": T, "max_inputs": max_inputs, "skip_prob": float(skip_prob),
        "inplace_prob": float(inplace_prob), "loop_prob": float(loop_prob),
        "size_mean_log2": float(size_mean_log2), "size_sigma": float(size_sigma),
        "memory_fraction": float(memory_fraction), "zero_demand_prob": float(zero_demand_prob),
        "oversize_prob": float(oversize_prob), "zero_supply_prob": float(zero_supply_prob),
        "latency_tables": bool(latency_tables), "num_params": P,
        "max_loop_length": int(max_loop_length), "slow_bandwidth": float(slow_bandwidth),
        "fast_bandwidth": float(fast_bandwidth), "copy_bandwidth": float(copy_bandwidth),
        "step_overhead": float(step_overhead),
    }
    metadata = {"generator": "jaxmmap.generator", "seed": int(seed), **options,
                "time_unit": "microseconds", "size_unit": "bytes",
                "bandwidth_unit": "bytes per microsecond", "peak_live_bytes": int(peak),
                "step_latency": duration.tolist()}
    return Problem(
        name=f"random-{seed}-{T}" if name is None else name,
        memory_size=int(memory_size), supply=supply, size=size, is_output=is_output,
        target_time=target_time, tensor_id=tensor_id, alias_id=alias_id,
        live_start=live_start, live_end=live_end, demand=demand, benefit=benefit,
        latency_tables=tables, metadata=metadata, live_out=live_out)


def _roofline_tables(counts, sizef, compute, mem_time, slow_bw, fast_bw):
    """One table per instruction over its (at most 8, largest) buffers: the roofline
    max(compute, memory time) with the listed buffers in fast memory per the mask bits."""
    bits = {k: ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(np.float64)
            for k in range(1, MAX_TABLE_BUFFERS + 1)}
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    saving = sizef * (1.0 / slow_bw - 1.0 / fast_bw)
    tables = []
    for i, (s, c) in enumerate(zip(starts.tolist(), counts.tolist())):
        idx = np.arange(s, s + c, dtype=np.int64)
        if c > MAX_TABLE_BUFFERS:
            keep = np.argsort(-sizef[idx], kind="stable")[:MAX_TABLE_BUFFERS]
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
