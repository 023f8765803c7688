"""A zoo of real JAX programs to turn into memory-mapping problem instances.

The MMap-MuZero paper evaluates on 60 XLA workloads (169 to 16,490 buffers): AlexNet training,
ResNet and MnasNet-like inference and training, WaveNet, a bf16 Transformer, LSTM and other RNN
inference, an NMT encoder-decoder, an AlphaTensor-like model and GPT-style forward and backward
passes, with and without a donated train state. This module rebuilds such a zoo with flax and optax.

Each :class:`Workload` is a function and example arguments made only of
:class:`jax.ShapeDtypeStruct` pytrees (parameter shapes come from ``jax.eval_shape``), so nothing big
is ever allocated: the program is only lowered and compiled, and :func:`compiled_hlo_text` returns
the optimized, scheduled HLO module that the importer parses::

    from benchmarks.suite import workloads
    w = workloads.get("gpt_small_train")
    text = workloads.compiled_hlo_text(w)          # "HloModule ..., is_scheduled=true, ..."

Everything is deterministic: no dropout, and the same shapes on every machine. Models are built
with unrolled Python loops over layers (and, for the ``*_unrolled`` RNNs, over time steps) so that
the instruction count of the ENTRY computation grows with depth; the ``lax.scan`` variants compile to
XLA ``while`` loops instead. ``python -m benchmarks.suite.workloads`` compiles every workload and prints a
table of instruction counts and compile times.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

__all__ = [
    "FAMILIES",
    "Workload",
    "workloads",
    "names",
    "get",
    "compiled_hlo_text",
    "count_instructions",
]

FAMILIES = ("alexnet", "resnet", "mnasnet", "wavenet", "transformer", "lstm", "gru", "nmt",
            "alphatensor", "gpt")


@dataclasses.dataclass(frozen=True)
class Workload:
    """A JAX program and example arguments (``jax.ShapeDtypeStruct`` pytrees only)."""

    name: str
    family: str
    description: str
    fn: Callable
    args: tuple
    donate_argnums: tuple[int, ...] = ()

    def lower(self):
        return jax.jit(self.fn, donate_argnums=self.donate_argnums).lower(*self.args)


def compiled_hlo_text(w: Workload) -> str:
    """The optimized, scheduled HLO text of ``w`` compiled for the default backend."""
    return jax.jit(w.fn, donate_argnums=w.donate_argnums).lower(*w.args).compile().as_text()


_TRIVIAL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast"})
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+ = .+? ([a-z][a-z0-9\-]*)\(")


def count_instructions(hlo_text: str) -> tuple[int, int]:
    """``(entry, total)``: non-trivial instructions in the ENTRY computation and in all of them.

    Trivial instructions are parameter, constant, tuple, get-tuple-element and bitcast.
    """
    entry = total = 0
    in_entry = False
    for line in hlo_text.splitlines():
        if line.startswith("ENTRY "):
            in_entry = True
            continue
        if line.startswith("}"):
            in_entry = False
            continue
        m = _INSTRUCTION.match(line)
        if m is None or m.group(1) in _TRIVIAL:
            continue
        total += 1
        entry += in_entry
    return entry, total


# --------------------------------------------------------------------------------------------
# Helpers.


def _sds(shape: Sequence[int], dtype=jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))


def _init_shapes(model: nn.Module, *dummies, **kwargs):
    """The variables of ``model`` as ShapeDtypeStructs (``jax.eval_shape`` of ``model.init``)."""
    return jax.eval_shape(functools.partial(model.init, **kwargs), jax.random.key(0), *dummies)


def _xent(logits, labels):
    return optax.softmax_cross_entropy_with_integer_labels(
        logits.astype(jnp.float32), labels).mean()


def _inference(name, family, description, model, variables, *inputs, **apply_kwargs) -> Workload:
    def infer(variables, *xs):
        return model.apply(variables, *xs, **apply_kwargs)
    return Workload(name, family, description, infer, (variables, *inputs))


def _train(name, family, description, variables, loss_fn, batch, tx, donate=False) -> Workload:
    """One optimizer step: ``step(state, *batch) -> (new_state, loss)``.

    ``state`` is ``{"params", "opt_state", "mutable"}`` where ``mutable`` holds any other variable
    collections (BatchNorm statistics); ``loss_fn(params, mutable, *batch) -> (loss, new_mutable)``.
    """
    params = variables["params"]
    mutable = {k: v for k, v in variables.items() if k != "params"}
    state = {"params": params, "opt_state": jax.eval_shape(tx.init, params), "mutable": mutable}

    def step(state, *batch):
        (loss, new_mutable), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state["params"], state["mutable"], *batch)
        updates, opt_state = tx.update(grads, state["opt_state"], state["params"])
        params = optax.apply_updates(state["params"], updates)
        return {"params": params, "opt_state": opt_state, "mutable": new_mutable}, loss

    return Workload(name, family, description, step, (state, *batch),
                    donate_argnums=(0,) if donate else ())


def _classifier_train(name, family, description, model, x, num_classes, tx, donate=False):
    variables = _init_shapes(model, x, train=False)
    labels = _sds(x.shape[:1], jnp.int32)
    del num_classes

    def loss_fn(params, mutable, x, y):
        if mutable:
            logits, new = model.apply({"params": params, **mutable}, x, train=True,
                                      mutable=list(mutable))
            return _xent(logits, y), dict(new)
        return _xent(model.apply({"params": params}, x, train=True), y), mutable

    return _train(name, family, description, variables, loss_fn, (x, labels), tx, donate)


# --------------------------------------------------------------------------------------------
# AlexNet.


class AlexNet(nn.Module):
    num_classes: int = 1000

    @nn.compact
    def __call__(self, x, train: bool = False):
        del train
        x = nn.relu(nn.Conv(96, (11, 11), strides=(4, 4), padding="SAME")(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        x = nn.relu(nn.Conv(256, (5, 5), padding="SAME")(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        x = nn.relu(nn.Conv(384, (3, 3), padding="SAME")(x))
        x = nn.relu(nn.Conv(384, (3, 3), padding="SAME")(x))
        x = nn.relu(nn.Conv(256, (3, 3), padding="SAME")(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        x = x.reshape(x.shape[0], -1)
        x = nn.relu(nn.Dense(4096)(x))
        x = nn.relu(nn.Dense(4096)(x))
        return nn.Dense(self.num_classes)(x)


def _alexnet_train(batch=32, image=64):
    x = _sds((batch, image, image, 3))
    return _classifier_train(
        f"alexnet_train_b{batch}", "alexnet",
        f"AlexNet training step (SGD with momentum), batch {batch}, {image}x{image} images",
        AlexNet(), x, 1000, optax.sgd(0.01, momentum=0.9))


def _alexnet_infer(batch=32, image=64):
    model = AlexNet()
    x = _sds((batch, image, image, 3))
    return _inference(f"alexnet_infer_b{batch}", "alexnet",
                      f"AlexNet inference, batch {batch}, {image}x{image} images",
                      model, _init_shapes(model, x), x)


# --------------------------------------------------------------------------------------------
# ResNet (v1.5, as in the flax examples).


class _BasicBlock(nn.Module):
    filters: int
    strides: int = 1

    @nn.compact
    def __call__(self, x, train):
        norm = functools.partial(nn.BatchNorm, use_running_average=not train, momentum=0.9)
        y = nn.Conv(self.filters, (3, 3), (self.strides,) * 2, use_bias=False)(x)
        y = nn.relu(norm()(y))
        y = nn.Conv(self.filters, (3, 3), use_bias=False)(y)
        y = norm(scale_init=nn.initializers.zeros)(y)
        if x.shape != y.shape:
            x = norm()(nn.Conv(self.filters, (1, 1), (self.strides,) * 2, use_bias=False)(x))
        return nn.relu(x + y)


class _Bottleneck(nn.Module):
    filters: int
    strides: int = 1

    @nn.compact
    def __call__(self, x, train):
        norm = functools.partial(nn.BatchNorm, use_running_average=not train, momentum=0.9)
        y = nn.relu(norm()(nn.Conv(self.filters, (1, 1), use_bias=False)(x)))
        y = nn.Conv(self.filters, (3, 3), (self.strides,) * 2, use_bias=False)(y)
        y = nn.relu(norm()(y))
        y = nn.Conv(self.filters * 4, (1, 1), use_bias=False)(y)
        y = norm(scale_init=nn.initializers.zeros)(y)
        if x.shape != y.shape:
            x = norm()(nn.Conv(self.filters * 4, (1, 1), (self.strides,) * 2, use_bias=False)(x))
        return nn.relu(x + y)


class ResNet(nn.Module):
    stages: Sequence[int]
    bottleneck: bool = False
    num_classes: int = 1000
    width: int = 64

    @nn.compact
    def __call__(self, x, train: bool = False):
        block = _Bottleneck if self.bottleneck else _BasicBlock
        x = nn.Conv(self.width, (7, 7), (2, 2), padding=((3, 3), (3, 3)), use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9)(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        for i, n in enumerate(self.stages):
            for j in range(n):
                x = block(self.width * 2**i, strides=2 if i > 0 and j == 0 else 1)(x, train)
        return nn.Dense(self.num_classes)(jnp.mean(x, axis=(1, 2)))


_RESNETS = {18: ((2, 2, 2, 2), False), 34: ((3, 4, 6, 3), False), 50: ((3, 4, 6, 3), True),
            101: ((3, 4, 23, 3), True)}


def _resnet_infer(depth, batch=8, image=224):
    stages, bottleneck = _RESNETS[depth]
    model = ResNet(stages, bottleneck)
    x = _sds((batch, image, image, 3))
    return _inference(f"resnet{depth}_infer", "resnet",
                      f"ResNet-{depth} inference, batch {batch}, {image}x{image} images",
                      model, _init_shapes(model, x), x, train=False)


def _resnet_train(depth, batch=16, image=128):
    stages, bottleneck = _RESNETS[depth]
    x = _sds((batch, image, image, 3))
    return _classifier_train(
        f"resnet{depth}_train", "resnet",
        f"ResNet-{depth} training step (SGD with momentum, BatchNorm statistics updated), "
        f"batch {batch}, {image}x{image} images",
        ResNet(stages, bottleneck), x, 1000, optax.sgd(0.1, momentum=0.9))


# --------------------------------------------------------------------------------------------
# MnasNet-A1: MBConv inverted-residual blocks, some with squeeze-and-excite.


class _MBConv(nn.Module):
    out: int
    expand: int
    kernel: int
    strides: int
    se: bool

    @nn.compact
    def __call__(self, x, train):
        norm = functools.partial(nn.BatchNorm, use_running_average=not train, momentum=0.99)
        c = x.shape[-1]
        h = x
        if self.expand != 1:
            h = nn.relu(norm()(nn.Conv(c * self.expand, (1, 1), use_bias=False)(h)))
        ch = h.shape[-1]
        h = nn.Conv(ch, (self.kernel,) * 2, (self.strides,) * 2, feature_group_count=ch,
                    use_bias=False)(h)
        h = nn.relu(norm()(h))
        if self.se:
            s = jnp.mean(h, axis=(1, 2), keepdims=True)
            s = nn.relu(nn.Conv(max(1, c // 4), (1, 1))(s))
            h = h * nn.sigmoid(nn.Conv(ch, (1, 1))(s))
        h = norm()(nn.Conv(self.out, (1, 1), use_bias=False)(h))
        if self.strides == 1 and c == self.out:
            h = h + x
        return h


# (expand, kernel, stride, out, repeats, squeeze-excite) of MnasNet-A1.
_MNASNET_A1 = ((6, 3, 2, 24, 2, False), (3, 5, 2, 40, 3, True), (6, 3, 2, 80, 4, False),
               (6, 3, 1, 112, 2, True), (6, 5, 2, 160, 3, True), (6, 3, 1, 320, 1, False))


class MnasNet(nn.Module):
    num_classes: int = 1000

    @nn.compact
    def __call__(self, x, train: bool = False):
        norm = functools.partial(nn.BatchNorm, use_running_average=not train, momentum=0.99)
        x = nn.relu(norm()(nn.Conv(32, (3, 3), (2, 2), use_bias=False)(x)))
        x = _MBConv(16, 1, 3, 1, False)(x, train)  # the separable conv of the stem
        for expand, kernel, stride, out, repeats, se in _MNASNET_A1:
            for j in range(repeats):
                x = _MBConv(out, expand, kernel, stride if j == 0 else 1, se)(x, train)
        x = nn.relu(norm()(nn.Conv(1280, (1, 1), use_bias=False)(x)))
        return nn.Dense(self.num_classes)(jnp.mean(x, axis=(1, 2)))


def _mnasnet_infer(batch=8, image=224):
    model = MnasNet()
    x = _sds((batch, image, image, 3))
    return _inference("mnasnet_infer", "mnasnet",
                      f"MnasNet-A1 inference (MBConv blocks with squeeze-excite), batch {batch}, "
                      f"{image}x{image} images", model, _init_shapes(model, x), x, train=False)


def _mnasnet_train(batch=16, image=128):
    x = _sds((batch, image, image, 3))
    return _classifier_train(
        "mnasnet_train", "mnasnet",
        f"MnasNet-A1 training step (RMSProp), batch {batch}, {image}x{image} images",
        MnasNet(), x, 1000, optax.rmsprop(0.016, decay=0.9, momentum=0.9))


# --------------------------------------------------------------------------------------------
# WaveNet: a stack of dilated causal convolutions with gated activations and skip connections.


class WaveNet(nn.Module):
    layers_per_stack: int = 10
    stacks: int = 2
    channels: int = 64
    skip_channels: int = 128
    classes: int = 256

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(self.classes, self.channels)(tokens)           # [B, T, C]
        x = nn.Conv(self.channels, (2,), padding=((1, 0),))(x)     # causal
        skips = 0.0
        for _ in range(self.stacks):
            for i in range(self.layers_per_stack):
                d = 2**i
                h = nn.Conv(2 * self.channels, (2,), kernel_dilation=(d,), padding=((d, 0),))(x)
                f, g = jnp.split(h, 2, axis=-1)
                h = jnp.tanh(f) * nn.sigmoid(g)
                skips = skips + nn.Conv(self.skip_channels, (1,))(h)
                x = x + nn.Conv(self.channels, (1,))(h)
        h = nn.relu(skips)
        h = nn.relu(nn.Conv(self.skip_channels, (1,))(h))
        return nn.Conv(self.classes, (1,))(h)                        # logits [B, T, classes]


def _wavenet_infer(name="wavenet_infer", stacks=2, layers=10, batch=4, length=4096):
    model = WaveNet(layers_per_stack=layers, stacks=stacks)
    tokens = _sds((batch, length), jnp.int32)
    return _inference(name, "wavenet",
                      f"WaveNet forward pass (teacher forcing): {stacks} stacks of {layers} dilated "
                      f"causal conv layers, batch {batch}, {length} samples",
                      model, _init_shapes(model, tokens), tokens)


def _wavenet_train(stacks=2, layers=10, batch=4, length=2048):
    model = WaveNet(layers_per_stack=layers, stacks=stacks)
    tokens = _sds((batch, length + 1), jnp.int32)

    def loss_fn(params, mutable, tokens):
        logits = model.apply({"params": params}, tokens[:, :-1])
        return _xent(logits, tokens[:, 1:]), mutable

    return _train("wavenet_train", "wavenet",
                  f"WaveNet training step (Adam), {stacks}x{layers} layers, batch {batch}, "
                  f"{length} samples", _init_shapes(model, _sds((batch, length), jnp.int32)),
                  loss_fn, (tokens,), optax.adam(1e-3))


# --------------------------------------------------------------------------------------------
# Transformers: an encoder-decoder in bf16 and a GPT-style decoder.


class _MLP(nn.Module):
    hidden: int
    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, x):
        dense = functools.partial(nn.Dense, dtype=self.dtype, param_dtype=self.dtype)
        return dense(x.shape[-1])(nn.gelu(dense(self.hidden)(x)))


class _EncoderLayer(nn.Module):
    heads: int
    hidden: int
    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, x, mask=None):
        kw = dict(dtype=self.dtype, param_dtype=self.dtype)
        h = nn.MultiHeadDotProductAttention(self.heads, **kw)(x, x, mask=mask)
        x = nn.LayerNorm(**kw)(x + h)
        return nn.LayerNorm(**kw)(x + _MLP(self.hidden, self.dtype)(x))


class _DecoderLayer(nn.Module):
    heads: int
    hidden: int
    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, y, memory, self_mask):
        kw = dict(dtype=self.dtype, param_dtype=self.dtype)
        y = nn.LayerNorm(**kw)(y + nn.MultiHeadDotProductAttention(self.heads, **kw)(
            y, y, mask=self_mask))
        y = nn.LayerNorm(**kw)(y + nn.MultiHeadDotProductAttention(self.heads, **kw)(
            y, memory))
        return nn.LayerNorm(**kw)(y + _MLP(self.hidden, self.dtype)(y))


class Seq2SeqTransformer(nn.Module):
    vocab: int = 8192
    d_model: int = 512
    heads: int = 8
    hidden: int = 2048
    encoder_layers: int = 6
    decoder_layers: int = 6
    dtype: Any = jnp.bfloat16

    @nn.compact
    def __call__(self, src, tgt):
        kw = dict(dtype=self.dtype, param_dtype=self.dtype)
        embed = nn.Embed(self.vocab, self.d_model, **kw)
        pos = self.param("pos", nn.initializers.normal(0.02),
                         (max(src.shape[1], tgt.shape[1]), self.d_model), self.dtype)
        x = embed(src) + pos[: src.shape[1]]
        for _ in range(self.encoder_layers):
            x = _EncoderLayer(self.heads, self.hidden, self.dtype)(x)
        y = embed(tgt) + pos[: tgt.shape[1]]
        causal = nn.make_causal_mask(tgt)
        for _ in range(self.decoder_layers):
            y = _DecoderLayer(self.heads, self.hidden, self.dtype)(y, x, causal)
        return embed.attend(y)


def _transformer_infer(batch=8, length=128, layers=6):
    model = Seq2SeqTransformer(encoder_layers=layers, decoder_layers=layers)
    src = tgt = _sds((batch, length), jnp.int32)
    return _inference("transformer_bf16_infer", "transformer",
                      f"Encoder-decoder Transformer ({layers}+{layers} layers, d=512) in bf16, "
                      f"teacher-forced forward pass, batch {batch}, length {length}",
                      model, _init_shapes(model, src, tgt), src, tgt)


def _transformer_train(batch=8, length=128, layers=4):
    model = Seq2SeqTransformer(encoder_layers=layers, decoder_layers=layers)
    src = _sds((batch, length), jnp.int32)
    tgt = _sds((batch, length + 1), jnp.int32)

    def loss_fn(params, mutable, src, tgt):
        logits = model.apply({"params": params}, src, tgt[:, :-1])
        return _xent(logits, tgt[:, 1:]), mutable

    return _train("transformer_bf16_train", "transformer",
                  f"Encoder-decoder Transformer ({layers}+{layers} layers, d=512) in bf16, "
                  f"training step (Adam), batch {batch}, length {length}",
                  _init_shapes(model, src, src), loss_fn, (src, tgt), optax.adam(1e-4))


class GPT(nn.Module):
    vocab: int = 4096
    d_model: int = 256
    heads: int = 8
    layers: int = 4
    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, tokens):
        kw = dict(dtype=self.dtype, param_dtype=self.dtype)
        embed = nn.Embed(self.vocab, self.d_model, **kw)
        pos = self.param("pos", nn.initializers.normal(0.02), (tokens.shape[1], self.d_model),
                         self.dtype)
        x = embed(tokens) + pos
        mask = nn.make_causal_mask(tokens)
        for _ in range(self.layers):
            h = nn.LayerNorm(**kw)(x)
            x = x + nn.MultiHeadDotProductAttention(self.heads, **kw)(h, h, mask=mask)
            x = x + _MLP(4 * self.d_model, self.dtype)(nn.LayerNorm(**kw)(x))
        return embed.attend(nn.LayerNorm(**kw)(x))


_GPTS = {  # name: (layers, d_model, heads, vocab, batch, length)
    "small": (2, 128, 4, 2048, 8, 128),
    "medium": (8, 256, 8, 4096, 8, 256),
    "large": (48, 256, 8, 4096, 4, 256),
}


def _gpt_model(size):
    layers, d, heads, vocab, batch, length = _GPTS[size]
    return GPT(vocab=vocab, d_model=d, heads=heads, layers=layers), batch, length


def _gpt_infer(size):
    model, batch, length = _gpt_model(size)
    tokens = _sds((batch, length), jnp.int32)
    return _inference(f"gpt_{size}_infer", "gpt",
                      f"GPT-style decoder ({model.layers} layers, d={model.d_model}) forward pass, "
                      f"batch {batch}, length {length}",
                      model, _init_shapes(model, tokens), tokens)


def _gpt_train(size, donate=False, name=None):
    model, batch, length = _gpt_model(size)
    tokens = _sds((batch, length + 1), jnp.int32)

    def loss_fn(params, mutable, tokens):
        logits = model.apply({"params": params}, tokens[:, :-1])
        return _xent(logits, tokens[:, 1:]), mutable

    name = name or f"gpt_{size}_train"
    return _train(name, "gpt",
                  f"GPT-style decoder ({model.layers} layers, d={model.d_model}) forward+backward "
                  f"and Adam update, batch {batch}, length {length}"
                  + (", train state donated" if donate else ""),
                  _init_shapes(model, _sds((batch, length), jnp.int32)), loss_fn, (tokens,),
                  optax.adam(3e-4), donate=donate)


# --------------------------------------------------------------------------------------------
# Recurrent networks: LSTM and GRU, with lax.scan (XLA while loops) or unrolled in time.


class RNNLM(nn.Module):
    """Embedding, a stack of recurrent layers and a softmax head over every time step."""

    cell: str = "lstm"
    hidden: int = 256
    layers: int = 1
    vocab: int = 4096
    unroll: bool = False

    @nn.compact
    def __call__(self, tokens):
        cell_type = {"lstm": nn.OptimizedLSTMCell, "gru": nn.GRUCell}[self.cell]
        x = nn.Embed(self.vocab, self.hidden)(tokens)
        for _ in range(self.layers):
            if self.unroll:
                cell = cell_type(self.hidden)
                carry = cell.initialize_carry(jax.random.key(0), x[:, 0].shape)
                ys = []
                for t in range(x.shape[1]):
                    carry, y = cell(carry, x[:, t])
                    ys.append(y)
                x = jnp.stack(ys, axis=1)
            else:
                x = nn.RNN(cell_type(self.hidden))(x)
        return nn.Dense(self.vocab)(x)


def _rnn_infer(name, cell, layers=1, unroll=False, batch=16, length=64, hidden=256):
    model = RNNLM(cell=cell, hidden=hidden, layers=layers, unroll=unroll)
    tokens = _sds((batch, length), jnp.int32)
    how = "unrolled in time" if unroll else "lax.scan over time"
    return _inference(name, cell,
                      f"{cell.upper()} language model inference ({layers} layer(s) of {hidden}, "
                      f"{how}), batch {batch}, {length} steps",
                      model, _init_shapes(model, tokens), tokens)


# --------------------------------------------------------------------------------------------
# NMT: an LSTM encoder-decoder with additive (Bahdanau) attention, unrolled in time.


class NMT(nn.Module):
    vocab: int = 8192
    hidden: int = 256
    encoder_layers: int = 2

    @nn.compact
    def __call__(self, src, tgt):
        embed_src = nn.Embed(self.vocab, self.hidden)
        embed_tgt = nn.Embed(self.vocab, self.hidden)
        x = embed_src(src)
        # Bidirectional first layer, then unidirectional layers (GNMT-style), with lax.scan.
        x = nn.Bidirectional(nn.RNN(nn.OptimizedLSTMCell(self.hidden)),
                             nn.RNN(nn.OptimizedLSTMCell(self.hidden)))(x)
        x = nn.Dense(self.hidden)(x)
        for _ in range(self.encoder_layers - 1):
            x = x + nn.RNN(nn.OptimizedLSTMCell(self.hidden))(x)
        memory = x                                            # [B, S, H]
        keys = nn.Dense(self.hidden, use_bias=False)(memory)  # precomputed attention keys
        query_proj = nn.Dense(self.hidden, use_bias=False)
        score = nn.Dense(1, use_bias=False)
        cell = nn.OptimizedLSTMCell(self.hidden)
        attn_out = nn.Dense(self.hidden)
        y = embed_tgt(tgt)
        carry = cell.initialize_carry(jax.random.key(0), y[:, 0].shape)
        context = jnp.zeros_like(y[:, 0])
        outs = []
        for t in range(tgt.shape[1]):                         # unrolled decoder (input feeding)
            carry, h = cell(carry, jnp.concatenate([y[:, t], context], axis=-1))
            e = score(jnp.tanh(keys + query_proj(h)[:, None]))[..., 0]   # [B, S]
            a = jax.nn.softmax(e, axis=-1)
            context = jnp.einsum("bs,bsh->bh", a, memory)
            outs.append(jnp.tanh(attn_out(jnp.concatenate([h, context], axis=-1))))
        return embed_tgt.attend(jnp.stack(outs, axis=1))


def _nmt_infer(batch=16, src_len=48, tgt_len=32):
    model = NMT()
    src, tgt = _sds((batch, src_len), jnp.int32), _sds((batch, tgt_len), jnp.int32)
    return _inference("nmt_infer", "nmt",
                      f"NMT encoder-decoder (bidirectional LSTM encoder, attention LSTM decoder "
                      f"unrolled over {tgt_len} steps), teacher-forced, batch {batch}",
                      model, _init_shapes(model, src, tgt), src, tgt)


def _nmt_train(batch=16, src_len=32, tgt_len=24):
    model = NMT()
    src, tgt = _sds((batch, src_len), jnp.int32), _sds((batch, tgt_len + 1), jnp.int32)

    def loss_fn(params, mutable, src, tgt):
        logits = model.apply({"params": params}, src, tgt[:, :-1])
        return _xent(logits, tgt[:, 1:]), mutable

    return _train("nmt_train", "nmt",
                  f"NMT encoder-decoder training step (Adam), batch {batch}, source {src_len}, "
                  f"target {tgt_len}",
                  _init_shapes(model, src, _sds((batch, tgt_len), jnp.int32)), loss_fn,
                  (src, tgt), optax.adam(1e-3))


# --------------------------------------------------------------------------------------------
# AlphaTensor-like: a torso of axial attention over the three S x S grids of an S x S x S tensor,
# an autoregressive policy head over action tokens and a quantile value head.


class _AttentiveModes(nn.Module):
    heads: int

    @nn.compact
    def __call__(self, grids):
        grids = list(grids)
        s = grids[0].shape[1]
        for i, j in ((0, 1), (2, 0), (1, 2)):
            a, b = grids[i], jnp.swapaxes(grids[j], 1, 2)
            x = jnp.concatenate([a, b], axis=2)                              # [B, S, 2S, C]
            h = nn.LayerNorm()(x)
            x = x + nn.MultiHeadDotProductAttention(self.heads)(h, h)
            x = x + _MLP(4 * x.shape[-1])(nn.LayerNorm()(x))
            grids[i], grids[j] = x[:, :, :s], jnp.swapaxes(x[:, :, s:], 1, 2)
        return grids


class AlphaTensorNet(nn.Module):
    channels: int = 64
    torso_layers: int = 4
    heads: int = 4
    action_tokens: int = 12
    token_vocab: int = 32
    policy_layers: int = 2
    quantiles: int = 8

    @nn.compact
    def __call__(self, tensor, actions):
        # tensor [B, T, S, S, S]: the current tensor and T-1 previous ones; actions [B, A].
        b, t, s = tensor.shape[:3]
        x = jnp.moveaxis(tensor, 1, -1)                                      # [B, S, S, S, T]
        views = (x, jnp.transpose(x, (0, 2, 3, 1, 4)), jnp.transpose(x, (0, 3, 1, 2, 4)))
        grids = [nn.Dense(self.channels)(v.reshape(b, s, s, s * t)) for v in views]
        for _ in range(self.torso_layers):
            grids = _AttentiveModes(self.heads)(grids)
        emb = jnp.concatenate([g.reshape(b, s * s, -1) for g in grids], axis=1)  # [B, 3S^2, C]
        # Policy head: a causal transformer decoder over action tokens, attending to the torso.
        y = nn.Embed(self.token_vocab, self.channels)(actions)
        y = y + self.param("pos", nn.initializers.normal(0.02),
                           (actions.shape[1], self.channels))
        mask = nn.make_causal_mask(actions)
        for _ in range(self.policy_layers):
            h = nn.LayerNorm()(y)
            y = y + nn.MultiHeadDotProductAttention(self.heads)(h, h, mask=mask)
            y = y + nn.MultiHeadDotProductAttention(self.heads)(nn.LayerNorm()(y), emb)
            y = y + _MLP(4 * self.channels)(nn.LayerNorm()(y))
        policy = nn.Dense(self.token_vocab)(nn.LayerNorm()(y))               # [B, A, vocab]
        # Value head: quantiles of the return.
        v = nn.relu(nn.Dense(256)(jnp.mean(emb, axis=1)))
        value = nn.Dense(self.quantiles)(nn.relu(nn.Dense(256)(v)))
        return policy, value


def _alphatensor_inputs(batch, size, history, tokens):
    return (_sds((batch, history, size, size, size)), _sds((batch, tokens), jnp.int32))


def _alphatensor_infer(batch=32, size=4, history=8, tokens=12):
    model = AlphaTensorNet(action_tokens=tokens)
    tensor, actions = _alphatensor_inputs(batch, size, history, tokens)
    return _inference("alphatensor_like", "alphatensor",
                      f"AlphaTensor-like network inference: axial attention over the 3 grids of a "
                      f"{size}x{size}x{size} tensor, policy and value heads, batch {batch}",
                      model, _init_shapes(model, tensor, actions), tensor, actions)


def _alphatensor_train(batch=32, size=4, history=8, tokens=12):
    model = AlphaTensorNet(action_tokens=tokens)
    tensor, actions = _alphatensor_inputs(batch, size, history, tokens)
    targets = _sds((batch,))

    def loss_fn(params, mutable, tensor, actions, returns):
        policy, value = model.apply({"params": params}, tensor, actions)
        policy_loss = _xent(policy[:, :-1], actions[:, 1:])
        taus = (jnp.arange(value.shape[-1]) + 0.5) / value.shape[-1]
        err = returns[:, None] - value
        value_loss = jnp.mean(jnp.abs(taus - (err < 0)) * optax.huber_loss(err, delta=1.0))
        return policy_loss + value_loss, mutable

    return _train("alphatensor_like_train", "alphatensor",
                  f"AlphaTensor-like network training step (policy cross-entropy and quantile "
                  f"value loss, Adam), {size}x{size}x{size} tensors, batch {batch}",
                  _init_shapes(model, tensor, actions), loss_fn, (tensor, actions, targets),
                  optax.adam(1e-4))


# --------------------------------------------------------------------------------------------
# The registry.

_BUILDERS: dict[str, Callable[[], Workload]] = {
    "alexnet_infer_b32": _alexnet_infer,
    "alexnet_train_b32": _alexnet_train,
    "resnet18_infer": functools.partial(_resnet_infer, 18),
    "resnet18_train": functools.partial(_resnet_train, 18),
    "resnet34_infer": functools.partial(_resnet_infer, 34),
    "resnet50_infer": functools.partial(_resnet_infer, 50),
    "resnet50_train": functools.partial(_resnet_train, 50),
    "resnet101_infer": functools.partial(_resnet_infer, 101),
    "mnasnet_infer": _mnasnet_infer,
    "mnasnet_train": _mnasnet_train,
    "wavenet_small_infer": functools.partial(_wavenet_infer, "wavenet_small_infer", stacks=1,
                                             layers=8, length=2048),
    "wavenet_infer": _wavenet_infer,
    "wavenet_train": _wavenet_train,
    "transformer_bf16_infer": _transformer_infer,
    "transformer_bf16_train": _transformer_train,
    "lstm_infer": functools.partial(_rnn_infer, "lstm_infer", "lstm"),
    "lstm_infer_unrolled": functools.partial(_rnn_infer, "lstm_infer_unrolled", "lstm",
                                             unroll=True, length=32),
    "lstm_stacked_infer_unrolled": functools.partial(
        _rnn_infer, "lstm_stacked_infer_unrolled", "lstm", layers=3, unroll=True, length=48),
    "gru_infer": functools.partial(_rnn_infer, "gru_infer", "gru"),
    "gru_infer_unrolled": functools.partial(_rnn_infer, "gru_infer_unrolled", "gru",
                                            unroll=True, length=32),
    "nmt_infer": _nmt_infer,
    "nmt_train": _nmt_train,
    "alphatensor_like": _alphatensor_infer,
    "alphatensor_like_train": _alphatensor_train,
    "gpt_small_infer": functools.partial(_gpt_infer, "small"),
    "gpt_small_train": functools.partial(_gpt_train, "small"),
    "gpt_medium_train": functools.partial(_gpt_train, "medium"),
    "gpt_train_donated": functools.partial(_gpt_train, "medium", donate=True,
                                           name="gpt_train_donated"),
    "gpt_large_train": functools.partial(_gpt_train, "large"),
    "gpt_large_train_donated": functools.partial(_gpt_train, "large", donate=True,
                                                 name="gpt_large_train_donated"),
}


def names() -> tuple[str, ...]:
    """The names of all workloads, without building them."""
    return tuple(_BUILDERS)


@functools.cache
def get(name: str) -> Workload:
    """The workload called ``name`` (built on first use, then cached)."""
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(_BUILDERS)}") from None
    w = builder()
    assert w.name == name, (w.name, name)
    return w


def workloads() -> dict[str, Workload]:
    """Every workload, by name."""
    return {name: get(name) for name in _BUILDERS}


def _main(argv: Sequence[str] = ()) -> None:
    selected = list(argv) or list(_BUILDERS)
    print(f"{'name':30s} {'family':12s} {'entry':>7s} {'all':>7s} {'compile_s':>9s}")
    total_time = 0.0
    for name in selected:
        w = get(name)
        start = time.perf_counter()
        text = compiled_hlo_text(w)
        seconds = time.perf_counter() - start
        total_time += seconds
        entry, total = count_instructions(text)
        print(f"{name:30s} {w.family:12s} {entry:7d} {total:7d} {seconds:9.1f}", flush=True)
    print(f"total compile time: {total_time:.1f} s ({len(selected)} workloads)")


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
