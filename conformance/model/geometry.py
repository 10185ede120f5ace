"""Stride geometry: ports of the ATen helpers that decide strides and view
legality, and the overlap tests of in-place writes. Pure functions of shapes
and strides (the overlap tests read ``shape``/``strides``/``offset``/``storage``
of tensor models)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from conformance.model.claims import MSG

__all__ = [
    "contiguous_strides",
    "channels_last_strides",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "infer_dense_strides",
    "view_strides",
    "expand_geometry",
    "broadcast_shapes",
    "positions",
    "internal_overlap",
    "partial_overlap",
]


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides (size-0/1 dims count as 1, as ``empty_tensor_restride``)."""
    out = [0] * len(shape)
    acc = 1
    for i in reversed(range(len(shape))):
        out[i] = acc
        acc *= max(shape[i], 1)
    return tuple(out)


def channels_last_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """NHWC strides of a 4-D shape (``get_channels_last_strides_2d``)."""
    _, c, h, w = shape
    s3 = c
    s2 = s3 * w
    return (s2 * h, 1, s2, s3)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """``Tensor.is_contiguous()``: row-major, ignoring size-1 dims."""
    if math.prod(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """``compute_non_overlapping_and_dense``: the elements exactly fill a block
    of memory in some dimension order (size-0/1 dims are ignored). A
    zero-size tensor is contiguous, hence dense, whatever its strides."""
    if math.prod(shape) == 0:
        return True
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    require = 1
    for d in dims:
        if strides[d] != require:
            return False
        require *= shape[d]
    return True


def infer_dense_strides(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """``at::infer_dense_strides``: dense strides keeping the input's stride
    order (stable insertion sort; stride-0 dims compare as ambiguous)."""
    n = len(shape)
    if n == 0:
        return ()
    if n == 1:
        return (1,)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, n):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    out = [0] * n
    cur = 1
    for idx in perm:
        out[idx] = cur
        if shape[idx] > 1:
            cur *= shape[idx]
    return tuple(out)


def view_strides(
    old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """``at::detail::computeStride``: the strides of ``view(new_shape)``, or
    ``None`` when the view is impossible without copying."""
    if math.prod(old_shape) != math.prod(new_shape):
        raise ValueError("view_strides needs shapes with the same number of elements")
    if len(old_shape) == 0:
        return (1,) * len(new_shape)
    if math.prod(old_shape) == 0:
        # numel 0: the same shape keeps its strides, any other gets the
        # strides of a resize (contiguous, size-0 dims counting as 1)
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_strides)
        return contiguous_strides(new_shape)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new)


def expand_geometry(
    shape: Sequence[int], strides: Sequence[int], sizes: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]] | str:
    """``inferExpandGeometry``: ``(shape, strides)`` of ``expand(*sizes)``, or
    the error message torch raises."""
    ndim, tdim = len(sizes), len(shape)
    if ndim < tdim:
        return "the number of sizes provided must be greater or equal"
    if tdim == 0:
        if any(s == -1 for s in sizes):
            return f"{MSG['expand']} (-1) isn't allowed in a leading, non-existing dimension"
        return tuple(sizes), (0,) * ndim
    out_shape = [0] * ndim
    out_strides = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        dim = tdim - 1 - offset
        size = shape[dim] if dim >= 0 else 1
        stride = strides[dim] if dim >= 0 else out_shape[i + 1] * out_strides[i + 1]
        target = sizes[i]
        if target == -1:
            if dim < 0:
                return (
                    f"{MSG['expand']} (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            target = size
        if size != target:
            if size != 1:
                return f"{MSG['expand']} ({target}) must match the existing size ({size})"
            size = target
            stride = 0
        out_shape[i] = size
        out_strides[i] = stride
    return tuple(out_shape), tuple(out_strides)


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy/torch broadcasting of two shapes, or ``None`` when incompatible."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def positions(start: int, shape: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Element positions (into the buffer) addressed by a strided geometry,
    as an int64 array of ``shape``."""
    pos = np.array(start, dtype=np.int64)
    for size, stride in zip(shape, strides, strict=True):
        pos = pos[..., None] + np.arange(size, dtype=np.int64) * stride
    return pos


def internal_overlap(t) -> bool:
    """``has_internal_overlap == YES``: a size>1 dim with stride 0."""
    if is_non_overlapping_and_dense(t.shape, t.strides):
        return False
    return any(st == 0 and s > 1 for s, st in zip(t.shape, t.strides, strict=True))


def partial_overlap(a, b) -> bool:
    """``get_overlap_status == PARTIAL``: both dense, the same storage object,
    intersecting memory ranges that are not the identical layout."""
    if a is b or a.numel == 0 or b.numel == 0:
        return False
    if not (
        is_non_overlapping_and_dense(a.shape, a.strides)
        and is_non_overlapping_and_dense(b.shape, b.strides)
    ):
        return False
    if a.storage is not b.storage:
        return False
    a0, a1 = a.offset, a.offset + a.numel
    b0, b1 = b.offset, b.offset + b.numel
    if (a0, a1) == (b0, b1):
        return a.strides != b.strides
    return a0 < b1 and b0 < a1
