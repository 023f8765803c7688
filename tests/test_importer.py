"""The HLO importer against XLA's own analyses of the same modules (committed dumps), and on
programs compiled here."""

import pathlib
import re
import warnings
from collections import defaultdict

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Rules, play, validate
from jaxmmap.core.io import summarize
from jaxmmap.core.problem import ProblemError
from jaxmmap.importer import PRESETS, Hardware, from_hlo_text, from_jax
from jaxmmap.importer.hlo import HloParseError, parse_module, parse_shape
from jaxmmap.importer.program import flatten
from jaxmmap.solvers import solve
from jaxmmap.solvers.cpsat import upper_bound

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "hlo"
NAMES = sorted(p.name.split(".")[0] for p in FIXTURES.glob("*.after_optimizations.txt"))


def _xla_buffers(name):
    """value name -> (allocation, offset, size) from XLA's buffer assignment."""
    text = (FIXTURES / f"{name}.after_optimizations-buffer-assignment.txt").read_text()
    out, alloc = {}, None
    for line in text.splitlines():
        m = re.match(r"allocation (\d+):", line)
        if m:
            alloc = int(m.group(1))
        m = re.match(r"\s*value: <\d+ (\S+?)(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\)", line)
        if m and alloc is not None:
            out[m.group(1).replace("{}", "")] = (alloc, int(m.group(3)), int(m.group(2)))
    return out


def _xla_live_ranges(name):
    """(instruction sequence, value name -> (start, end) positions) from XLA's live ranges."""
    text = (FIXTURES / f"{name}.after_optimizations-live-range.txt").read_text()
    sequence = re.findall(r"^\s+(\d+):(\S+)$", text.split("BufferLiveRange")[0], re.M)
    ranges = {m.group(1).replace("{}", ""): (int(m.group(2)), int(m.group(3)))
              for m in re.finditer(r"^\s+(\S+):(\d+)-(\d+)$", text.split("BufferLiveRange")[1], re.M)}
    return [n for _, n in sequence], ranges


@pytest.fixture(scope="module", params=NAMES)
def imported(request):
    text = (FIXTURES / f"{request.param}.after_optimizations.txt").read_text()
    return request.param, flatten(parse_module(text))


def test_sizes_match_xla(imported):
    name, program = imported
    xla = _xla_buffers(name)
    tensors = [t for t in program.tensors if t.bytes > 0]
    found = [t for t in tensors if t.name in xla]
    assert len(found) >= 0.9 * len(tensors), [t.name for t in tensors if t.name not in xla]
    for t in found:
        assert t.bytes == xla[t.name][2], t.name


def test_alias_groups_share_one_xla_allocation_and_offset(imported):
    name, program = imported
    xla = _xla_buffers(name)
    groups = defaultdict(list)
    for t in program.tensors:
        groups[program.group(t.id)].append(t)
    aliased = [g for g in groups.values() if len(g) > 1]
    assert aliased, "every fixture has aliasing (loop carries or donation)"
    for group in aliased:
        places = {xla[t.name][:2] for t in group if t.name in xla}
        assert len(places) == 1, (name, [(t.name, xla.get(t.name)) for t in group])


def test_live_ranges_match_xla_outside_loops(imported):
    name, program = imported
    sequence, ranges = _xla_live_ranges(name)
    position = {ins: k for k, ins in enumerate(sequence)}
    step_at = np.array([position[s.instruction.name] for s in program.steps])

    def floor_step(pos):  # the last step at or before an XLA sequence position
        return int(np.searchsorted(step_at, pos, side="right") - 1)

    in_loop = lambda step: any(a <= step <= b for a, b in program.loops)  # noqa: E731
    # XLA splits loop-carried values into phi values with live ranges of their own, and keeps
    # entry parameters alive to the end: compare the rest.
    looped = {program.group(t.id) for t in program.tensors
              if (t.producer >= 0 and in_loop(t.producer)) or any(in_loop(u) for u in t.uses)}
    checked = 0
    for t in program.tensors:
        if t.producer < 0 or t.bytes == 0 or t.name not in ranges or program.group(t.id) in looped:
            continue
        start, end = program.live_range(t)
        xla_start, xla_end = ranges[t.name]
        assert start == floor_step(xla_start), t.name
        assert end == floor_step(xla_end), (t.name, (start, end), (xla_start, xla_end))
        checked += 1
    assert checked >= 2


def test_steps_are_the_instructions_that_do_work_in_schedule_order(imported):
    name, program = imported
    sequence, _ = _xla_live_ranges(name)
    position = {ins: k for k, ins in enumerate(sequence)}
    ops = {s.instruction.opcode for s in program.steps}
    assert not ops & {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "while"}
    order = [position[s.instruction.name] for s in program.steps]
    assert order == sorted(order)  # XLA's flattened order, loops laid out as cond then body


def test_parse_shapes_and_errors():
    assert parse_shape("f32[4,8]{1,0}").bytes == 128
    assert parse_shape("bf16[<=16,2]").bytes == 64
    s = parse_shape("(s32[], (f32[2]{0}, pred[3]), token[])")
    assert [p for p, _ in s.leaves()] == [(0,), (1, 0), (1, 1), (2,)]
    assert [leaf.bytes for _, leaf in s.leaves()] == [4, 8, 3, 0]
    with pytest.raises(HloParseError, match="HloModule"):
        parse_module("not hlo")
    bad = (FIXTURES / "scan_dus_donated.after_optimizations.txt").read_text().replace(
        "f32[4,8]{1,0} parameter(0)", "f32[4,8]{1,0 parameter(0)", 1)
    with pytest.raises(HloParseError, match="line"):
        parse_module(bad)


@pytest.mark.parametrize("hardware", sorted(PRESETS))
def test_fixture_problems_are_valid_and_playable(hardware):
    text = (FIXTURES / "mlp_train_donated.after_optimizations.txt").read_text()
    problem = from_hlo_text(text, hardware=hardware, fast_memory=64 * 1024)
    assert problem.metadata["hardware"]["name"] == hardware
    assert problem.num_buffers > 50 and np.all(problem.supply > 0)
    assert np.all(problem.demand > 0) and np.any(problem.alias_id >= 0)
    assert len(problem.latency_tables) == problem.num_steps
    solution, summary = play(problem, "greedy", rules=Rules(columns=256))
    assert validate(problem, solution).ok and summary["best_return"] > 0


def test_from_jax_while_loop_trip_count_scales_costs():
    def f(x, n):
        return jax.lax.fori_loop(0, n, lambda i, c: jnp.tanh(c @ c), x)

    x = jax.ShapeDtypeStruct((64, 64), jnp.float32)
    one = from_jax(lambda x: f(x, 1), x, name="one")
    many = from_jax(lambda x: f(x, 10), x, name="many")
    assert many.metadata["loops"] >= 1
    assert many.benefit.sum() > 5 * one.benefit.sum()  # time saved in every iteration
    assert many.supply.max() <= 1.01 * one.supply.max()  # per run: a prefetch gets one iteration


ROOFLINE_HLO = """HloModule roofline, is_scheduled=true
ENTRY %main (a: f32[1024,1024], b: f32[1024,1024]) -> f32[1024,1024] {
  %a = f32[1024,1024]{1,0} parameter(0)
  %b = f32[1024,1024]{1,0} parameter(1)
  %dot = f32[1024,1024]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %add = f32[1024,1024]{1,0} add(%dot, %a)
}
"""


def test_roofline_costs_by_hand():
    """A matmul is compute-bound (fast memory cannot help); an add is memory-bound."""
    hw = Hardware(name="test", fast_memory=2 ** 30, slow_bandwidth=1e12, fast_bandwidth=4e12,
                  copy_bandwidth=0.5e12, peak_flops=1e12, overhead_us=1.0, source="by hand")
    p = from_hlo_text(ROOFLINE_HLO, hardware=hw)
    mb = 4 * 2 ** 20  # bytes of one matrix
    dot_us = 1.0 + 2 * 1024 ** 3 / 1e12 * 1e6  # compute-bound
    add_slow_us = 1.0 + 3 * mb / 1e12 * 1e6  # memory-bound: read dot and a, write add
    np.testing.assert_allclose(p.supply, [dot_us, 1.0 + 3 * mb / 4e12 * 1e6])
    dot_buffers = p.target_time == 0
    assert p.num_buffers == 6 and np.all(p.benefit[dot_buffers] == 0)
    np.testing.assert_allclose(p.benefit[~dot_buffers], mb / 1e12 * 1e6 * (1 - 1 / 4))
    np.testing.assert_allclose(p.demand, mb / 0.5e12 * 1e6)
    table = p.latency_tables[1].latency
    np.testing.assert_allclose([table[0], table[-1]], [add_slow_us, 1.0 + 3 * mb / 4e12 * 1e6])
    assert (p.alias_id == -1).all() and p.live_end[p.tensor_id == p.tensor_id[-1]].max() == 1


ASYNC_HLO = """HloModule async, is_scheduled=true
ENTRY main {
  %a = f32[256]{0} parameter(0)
  %cs = (f32[256]{0}, f32[256]{0}, u32[]) copy-start(%a)
  %n = f32[256]{0} negate(%a)
  %cd = f32[256]{0} copy-done(%cs)
  %tok = token[] after-all()
  %dep = f32[256]{0} add-dependency(%n, %tok)
  %packed = s4[64,128]{1,0:E(4)} constant({...})
  ROOT %r = f32[256]{0} add(%cd, %dep)
}
"""


def test_forwarding_ops_short_form_and_packed_types():
    """copy-start/done (XLA's own prefetch) and add-dependency keep the value's identity."""
    program = flatten(parse_module(ASYNC_HLO))
    assert [s.instruction.opcode for s in program.steps] == ["negate", "add"]
    a, n = program.steps[0].inputs[0], program.steps[0].outputs[0]
    assert program.steps[1].inputs == [a, n]
    assert program.live_range(program.tensors[n]) == (0, 1)
    assert parse_shape("s4[64,128]{1,0:E(4)}").bytes == 4096
    assert parse_shape("s4[64,128]{1,0}").bytes == 8192
    with pytest.raises(HloParseError, match="not defined"):
        flatten(parse_module(ASYNC_HLO.replace("%n = f32[256]{0} negate(%a)",
                                               "%n = f32[256]{0} call(%a), to_apply=%nowhere")))


def test_unscheduled_modules_are_refused():
    text = (FIXTURES / "scan_dus_donated.after_optimizations.txt").read_text()
    with pytest.raises(HloParseError, match="not scheduled"):
        from_hlo_text(text.replace("is_scheduled=true", "is_scheduled=false", 1))


def test_every_branch_of_a_conditional_can_be_placed():
    """All branch results share the output's memory and live as long as it does."""
    def f(p, x):
        y = jax.lax.switch(p, [lambda v: v * 2.0, lambda v: jnp.sin(v), lambda v: v + 1.0], x)
        return (y @ y).sum()

    S = jax.ShapeDtypeStruct
    problem = from_jax(f, S((), jnp.int32), S((64, 64), jnp.float32), hardware="gpu")
    groups = problem.alias_id[problem.alias_id >= 0]
    assert groups.size >= 3
    for g in np.unique(groups):
        members = problem.alias_id == g
        assert np.all(problem.live_end[members] == problem.live_end[members].max())
    solution, summary = play(problem, "greedy")
    assert summary["restores"] == 0
    assert np.all(solution.action[problem.alias_id >= 0] != 2)  # nothing forced to Drop


def test_in_place_update_costs_only_the_update():
    """A loop writing one row per iteration into a large buffer touches a row, not the buffer."""
    def f(rows):
        def body(i, acc):
            return jax.lax.dynamic_update_slice(acc, jnp.tanh(rows[i])[None], (i, 0))
        return jax.lax.fori_loop(0, rows.shape[0], body, jnp.zeros_like(rows))

    rows = jax.ShapeDtypeStruct((256, 1024), jnp.float32)
    problem = from_jax(f, rows, hardware="tpu_v4i", latency_tables=False)
    big = problem.size == 256 * 1024 * 4
    full_read_us = 256 * 1024 * 4 / PRESETS["tpu_v4i"].slow_bandwidth * 1e6
    inside = big & (problem.target_time >= 1)
    assert inside.any()
    # Saved time per iteration is at most a row's worth, times 256 iterations: far below a full
    # read and write of the buffer in every iteration.
    assert problem.benefit[inside].max() < 0.1 * 256 * full_read_us


def test_program_results_and_donated_inputs_are_live_out():
    """The entry computation's results and donated inputs must end in slow memory (they cannot
    be pinned); intermediates and non-donated inputs are not marked."""
    def f(w, x):
        h = jnp.tanh(x @ w)
        return w - 0.1 * (h.T @ x), (h * h).sum()

    S = jax.ShapeDtypeStruct
    w, x = S((128, 128), jnp.float32), S((64, 128), jnp.float32)
    problem = from_jax(f, w, x, donate_argnums=(0,), hardware="gpu", latency_tables=False)
    last = problem.num_steps - 1
    results = problem.is_output & (problem.live_end == last) & problem.live_out
    assert results.sum() >= 2  # the new weights and the loss
    assert (problem.is_output & ~problem.live_out).sum() >= 2  # the intermediates
    inputs = ~problem.is_output & (problem.live_start == 0)
    donated = np.unique(problem.tensor_id[inputs & problem.live_out])
    assert donated.size == 1  # w, not x
    assert np.all(problem.size[inputs & problem.live_out] == 128 * 128 * 4)
    solution, _ = play(problem, "greedy")
    assert not np.any((solution.action == 1) & problem.is_output & problem.live_out)


class _Block(nn.Module):
    """A pre-norm transformer block (GPT-2's shape, small)."""

    heads: int = 4

    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads)(h, mask=nn.make_causal_mask(x[..., 0]))
        h = nn.LayerNorm()(x)
        return x + nn.Dense(x.shape[-1])(nn.gelu(nn.Dense(4 * x.shape[-1])(h)))


class _Gpt(nn.Module):
    vocab: int = 512
    width: int = 128
    layers: int = 2

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(self.vocab, self.width)(tokens)
        for _ in range(self.layers):
            x = _Block()(x)
        return nn.Dense(self.vocab)(nn.LayerNorm()(x))


def test_a_transformer_that_fits_warns_and_the_memory_fraction_gives_it_pressure():
    model = _Gpt()
    tokens = jnp.zeros((4, 64), jnp.int32)
    params = jax.eval_shape(model.init, jax.random.key(0), tokens)
    forward = lambda p, t: model.apply(p, t)  # noqa: E731
    with pytest.warns(UserWarning, match="holds every tensor at once"):
        roomy = from_jax(forward, params, tokens, hardware="gpu", name="gpt")
    assert roomy.metadata["hardware"]["fast_memory"] == PRESETS["gpu"].fast_memory
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no warning now
        tight = from_jax(forward, params, tokens, hardware="gpu", name="gpt", memory_fraction=0.3)
    peak = summarize(tight)["peak_live_bytes"]
    assert tight.memory_size == int(0.3 * peak) and tight.metadata["fast_memory_fraction"] == 0.3
    bound = upper_bound(tight)
    ret = solve(tight, "heuristic", budget_s=5, seed=0).solution.ret
    assert 0 < ret < bound * (1 - 1e-3)  # room left for a better solver, unlike with the preset
    with pytest.raises(ProblemError, match="not both"):
        from_jax(forward, params, tokens, fast_memory=1 << 20, memory_fraction=0.3)
