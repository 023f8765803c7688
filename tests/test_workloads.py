"""The zoo of real JAX programs (benchmarks/suite/workloads.py): fast checks, and a slow one compiling all."""

import jax
import numpy as np
import pytest

from benchmarks.suite import workloads as W

# One worker runs the whole module, so that its module fixture is made once (pytest-xdist --dist loadgroup).
pytestmark = pytest.mark.xdist_group("zoo")

# A few of the smallest programs: compiled in the fast tests (well under a second each).
SMALLEST = ("gru_infer", "lstm_infer", "alexnet_infer_b32")


@pytest.fixture(scope="module")
def zoo():
    return W.workloads()


def test_the_zoo_covers_the_papers_workload_families(zoo):
    # The paper's workloads (Section 5): these families and programs, several sizes of some.
    assert len(zoo) >= 22
    families = {w.family for w in zoo.values()}
    for family in ("alexnet", "resnet", "mnasnet", "wavenet", "transformer", "lstm", "gru",
                   "nmt", "alphatensor", "gpt"):
        assert family in families
    for name in ("alexnet_train_b32", "resnet18_infer", "resnet18_train", "resnet50_infer",
                 "mnasnet_infer", "mnasnet_train", "wavenet_infer", "transformer_bf16_infer",
                 "transformer_bf16_train", "lstm_infer", "gru_infer", "nmt_infer",
                 "alphatensor_like", "gpt_small_train", "gpt_medium_train", "gpt_train_donated",
                 "gpt_large_train"):
        assert name in zoo, name
    # Several sizes for the families where that matters.
    for family in ("resnet", "gpt", "lstm", "wavenet"):
        assert sum(w.family == family for w in zoo.values()) >= 3, family


def test_get_and_unknown_name(zoo):
    assert W.get("gpt_small_train") is zoo["gpt_small_train"]
    with pytest.raises(KeyError):
        W.get("no_such_workload")


def test_args_are_shape_dtype_structs_only(zoo):
    for name, w in zoo.items():
        assert isinstance(w.args, tuple) and w.args, name
        assert callable(w.fn) and w.description, name
        leaves = jax.tree_util.tree_leaves(w.args)
        assert leaves, name
        for leaf in leaves:
            assert isinstance(leaf, jax.ShapeDtypeStruct), (name, type(leaf))
            assert not isinstance(leaf, (jax.Array, np.ndarray))
        for i in w.donate_argnums:
            assert 0 <= i < len(w.args), name


def test_train_state_donation(zoo):
    assert zoo["gpt_train_donated"].donate_argnums == (0,)
    assert zoo["gpt_medium_train"].donate_argnums == ()
    # The donated and the plain GPT steps take the same arguments.
    same = jax.tree_util.tree_map(lambda a, b: a == b, zoo["gpt_train_donated"].args,
                                  zoo["gpt_medium_train"].args)
    assert all(jax.tree_util.tree_leaves(same))


def test_bf16_transformer(zoo):
    dtypes = {leaf.dtype for leaf in jax.tree_util.tree_leaves(zoo["transformer_bf16_infer"].args[0])}
    assert dtypes == {np.dtype(jax.numpy.bfloat16)}


def test_count_instructions():
    text = """HloModule m, is_scheduled=true

%fused (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  ROOT %t = f32[2]{0} tanh(%p)
}

ENTRY %main (a: f32[2]) -> (f32[2], f32[2]) {
  %a = f32[2]{0} parameter(0)
  %c = f32[] constant(1)
  %f = f32[2]{0} fusion(%a), kind=kLoop, calls=%fused
  %b = f32[2]{0} bitcast(%f)
  %x = (f32[2]{0}, f32[2]{0}) custom-call(%b), custom_call_target="x"
  ROOT %tuple = (f32[2]{0}, f32[2]{0}) tuple(%f, %b)
}
"""
    assert W.count_instructions(text) == (2, 3)


@pytest.mark.parametrize("name", SMALLEST)
def test_smallest_compile_to_scheduled_hlo(name):
    w = W.get(name)
    text = W.compiled_hlo_text(w)
    assert text.startswith("HloModule")
    assert "is_scheduled=true" in text.splitlines()[0]
    assert "\nENTRY " in text
    entry, total = W.count_instructions(text)
    assert 0 < entry <= total


@pytest.mark.slow
def test_all_workloads_compile(zoo):
    sizes = {}
    for name, w in zoo.items():
        text = W.compiled_hlo_text(w)
        assert "is_scheduled=true" in text.splitlines()[0], name
        assert "\nENTRY " in text, name
        if w.donate_argnums:
            assert "input_output_alias" in text.splitlines()[0], name
        sizes[name] = W.count_instructions(text)
        assert 0 < sizes[name][0] <= sizes[name][1], name
    # The largest program reaches the paper's size (its instance has ~16,000 buffers).
    assert max(entry for entry, _ in sizes.values()) >= 6000
    assert sizes["gpt_large_train"][0] > sizes["gpt_medium_train"][0] > sizes["gpt_small_train"][0]
