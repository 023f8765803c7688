"""One function, two implementations: one for a single game, one for a batch.

A game alone (or a batch of one) can skip work with a data-dependent loop or write only the
part of an array it touches: its loops carry its arrays in place. Under `vmap`, a loop whose
length differs between games runs while any game needs it and selects every game's whole
carry on every iteration, so a batch wants fixed work instead. `alone_or_batched(one, many)`
is `one` where it is called on one game and `many`, vmapped, on a batch (the same results);
`maybe(pred, fn, x)` is the conditional such a `one` uses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap


def alone_or_batched(one, many):
    """A function that runs `one(*args)` on one game (unbatched arguments, or a batch of one,
    squeezed) and `jax.vmap(many)` on a batch of more; both must compute the same thing."""
    fn = custom_vmap(one)

    @fn.def_vmap
    def _batched(size, in_batched, *args):
        batched = tuple(in_batched)
        if size == 1:
            alone = jax.tree.map(lambda x, b: x[0] if b else x, args, batched)
            out = jax.tree.map(lambda x: x[None], one(*alone))
        else:
            axes = jax.tree.map(lambda b: 0 if b else None, batched)
            out = jax.vmap(many, in_axes=axes)(*args)
        return out, jax.tree.map(lambda _: True, out)

    return fn


def maybe(pred, fn, x):
    """fn(x) where `pred`, else x: a loop of zero or one iteration on its carry, so that `x` is
    updated in place or not touched (a `cond` copies its operand into its result)."""
    return jax.lax.while_loop(lambda c: c[0], lambda c: (jnp.bool_(False), fn(c[1])), (pred, x))[1]
