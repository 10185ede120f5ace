"""Specs of a given layout class, by construction (no filtering).

Properties about one layout class (non-dense, not row-major, channels_last
contiguous) draw from these instead of ``assume``-ing the class out of
:func:`~strategies.tensor_specs`, which rejected up to three draws in four and
so tripped Hypothesis' ``filter_too_much`` health check on some seeds.
"""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from strategies.tensors import TensorSpec, shapes, tensor_specs

__all__ = ["non_dense_specs", "not_row_major_specs", "channels_last_contiguous_specs"]

_FOUR_D = shapes(min_dims=4, max_dims=4, min_side=1, max_side=3)


@st.composite
def non_dense_specs(
    draw, *, shape=None, requires_grad: bool = False, values: str = "bounded"
) -> TensorSpec:
    """Non-dense, non-empty specs: any spec (every view kind, channels_last
    included), then a stepped slice (step 2-3) keeping two or more elements of
    one dim, and for half of the multi-dim ones a non-identity permute.

    The result is overlapping (when its input is), or skips - between its
    first two elements along the sliced dim - an element inside its memory
    span: non-dense either way. ``shape``: a strategy of final shapes (at
    least 1-D, sides >= 1; default 1-4 dims, sides 1-3). ``values``: the
    element value class, as in :func:`~strategies.tensor_specs`.
    """
    final = list(draw(shape if shape is not None else shapes(min_dims=1, min_side=1, max_side=3)))
    dim = draw(st.integers(0, len(final) - 1))
    step, tail = draw(st.integers(2, 3)), draw(st.integers(0, 1))
    final[dim] = max(final[dim], 2)
    span = (final[dim] - 1) * step + 1
    inner = list(final)
    inner[dim] = span + tail
    spec = draw(tensor_specs(shape=tuple(inner), requires_grad=requires_grad, values=values))
    views = (*spec.views, ("slice", dim, 0, None if tail == 0 else span, step))
    if len(final) >= 2 and draw(st.booleans()):
        perm = tuple(draw(st.permutations(range(len(final)))))
        views += (("permute", perm if perm != tuple(sorted(perm)) else perm[::-1]),)
    return dataclasses.replace(spec, views=views)


@st.composite
def _swapped_specs(draw, *, requires_grad: bool = False, values: str = "bounded") -> TensorSpec:
    """A plain row-major base with two dims of size >= 2 swapped (dense,
    not row-major)."""
    shape = list(draw(shapes(min_dims=2, min_side=1, max_side=3)))
    i, j = sorted(draw(st.permutations(range(len(shape))))[:2])
    shape[i], shape[j] = max(shape[i], 2), max(shape[j], 2)
    spec = draw(tensor_specs(shape=tuple(shape), views=False, channels_last=False,
                             requires_grad=requires_grad, values=values))  # fmt: skip
    perm = list(range(len(shape)))
    perm[i], perm[j] = j, i
    return dataclasses.replace(spec, views=(("permute", tuple(perm)),))


def not_row_major_specs(
    *, requires_grad: bool = False, values: str = "bounded"
) -> st.SearchStrategy[TensorSpec]:
    """Specs that are not row-major contiguous: non-dense ones
    (:func:`non_dense_specs`) and dense permuted ones (a swap of two dims of
    size >= 2 of a row-major base). ``values``: as in
    :func:`~strategies.tensor_specs`."""
    return st.one_of(
        non_dense_specs(requires_grad=requires_grad, values=values),
        _swapped_specs(requires_grad=requires_grad, values=values),
    )


@st.composite
def channels_last_contiguous_specs(draw, *, requires_grad: bool = False) -> TensorSpec:
    """4-D specs that are channels_last-contiguous: a channels_last base, the
    same narrowed along N (a view with a storage offset), or a row-major NHWC
    base permuted to NCHW (a view)."""
    kind = draw(st.sampled_from(["base", "narrowed", "nhwc"]))
    n, c, h, w = draw(_FOUR_D)
    if kind == "nhwc":
        spec = draw(tensor_specs(shape=(n, h, w, c), views=False, channels_last=False,
                                 requires_grad=requires_grad))  # fmt: skip
        return dataclasses.replace(spec, views=(("permute", (0, 3, 1, 2)),))
    start = 1 if kind == "narrowed" else 0
    spec = draw(tensor_specs(shape=(n + start, c, h, w), views=False, channels_last=True,
                             requires_grad=requires_grad))  # fmt: skip
    if start:
        spec = dataclasses.replace(spec, views=(("offset", 0, start, None, 1),))
    return spec
