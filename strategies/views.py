"""The view ops: one table of how each view is applied, printed and shaped.

Every strategy and test that makes a view of a tensor goes through
:data:`VIEWS`: a spec's layout views (:mod:`strategies.tensors`), a graph's
view ops and write targets (:mod:`strategies.graph_programs`), a compiled
program's input views and view steps (:mod:`strategies.program_records`), the
copy-sequence state machine (:mod:`conformance.copy_sequences`). So the code
a reproducer prints is the code that ran, and a view kind has one
implementation.

Each :class:`ViewKind` takes the same positional arguments in all three of its
functions::

    >>> kind = VIEWS["slice"]
    >>> kind.code("x", 0, 1, None, 2)
    'x[1::2,]'
    >>> kind.shape((5, 3), 0, 1, None, 2)
    (2, 3)

A slice is always applied as a tuple index (``x[(slice(1, None, 2),)]``), and
printed with a trailing comma on dimension 0 so that the printed code indexes
with a tuple too: ``x[0::1,]`` and ``x[0::1]`` take different paths in torch
(an alias and a ``SliceBackward0`` view on some releases).

The documented view ops of the "Tensor Views" page, with their argument
strategies, are ``conformance.test_views.DOCUMENTED_VIEW_OPS``. Its ``ViewOp``
calls each torch method by name (the same call this table makes for the kinds
both have) and not through this table, so that a failure's reproducer stays
torch-only code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ViewKind:
    """One view op.

    Attributes:
        name: the op's name, a key of :data:`VIEWS`.
        apply: ``apply(t, *args) -> Tensor``, the view of ``t`` (a view of its
            storage, as torch's docs promise for the op).
        code: ``code(receiver, *args) -> str``, the Python expression that
            ``apply`` evaluates, with ``receiver`` the tensor's name.
        shape: ``shape(shape, *args) -> tuple[int, ...]``, the view's shape from
            the input's shape by the op's documented shape rule, in plain Python
            (no torch call). Raises ``ValueError`` where torch would refuse.
        arguments: what ``*args`` are, for readers and error messages.
    """

    name: str
    apply: Callable[..., torch.Tensor]
    code: Callable[..., str]
    shape: Callable[..., tuple[int, ...]]
    arguments: str


def _dim(dim: int, ndim: int) -> int:
    """``dim`` wrapped into ``range(ndim)``; ``ValueError`` outside ``[-ndim, ndim)``."""
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise ValueError(f"dimension {dim} out of range for {ndim} dimensions")
    return dim % max(ndim, 1)


def resolve_sizes(sizes: Sequence[int], numel: int) -> tuple[int, ...]:
    """``sizes`` with its one ``-1`` entry (if any) inferred from ``numel``.

    Raises ``ValueError`` when more than one entry is ``-1`` or the sizes
    cannot hold ``numel`` elements.
    """
    sizes = tuple(sizes)
    if sizes.count(-1) > 1:
        raise ValueError(f"only one dimension can be inferred: {sizes}")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or numel % known:
            raise ValueError(f"shape {sizes} is invalid for input of size {numel}")
        sizes = tuple(numel // known if s == -1 else s for s in sizes)
    if math.prod(sizes) != numel:
        raise ValueError(f"shape {sizes} is invalid for input of size {numel}")
    return sizes


# ---- slice: (dim, start=None, stop=None, step=None) -------------------------


def _slice_apply(t: torch.Tensor, dim: int, start=None, stop=None, step=None) -> torch.Tensor:
    return t[(slice(None),) * dim + (slice(start, stop, step),)]


def _slice_code(x: str, dim: int, start=None, stop=None, step=None) -> str:
    part = f"{'' if start is None else start}:{'' if stop is None else stop}"
    part += "" if step is None else f":{step}"
    return f"{x}[{', '.join([':'] * dim + [part])}{',' if dim == 0 else ''}]"


def _slice_shape(shape, dim: int, start=None, stop=None, step=None) -> tuple[int, ...]:
    if step is not None and step <= 0:
        raise ValueError("slice step must be positive")
    if not shape:
        raise ValueError("a 0-d tensor cannot be sliced")
    d = _dim(dim, len(shape))
    out = list(shape)
    out[d] = len(range(*slice(start, stop, step).indices(shape[d])))
    return tuple(out)


# ---- select: (dim, index) ---------------------------------------------------


def _select_shape(shape, dim: int, index: int) -> tuple[int, ...]:
    if not shape:
        raise ValueError("select() cannot be applied to a 0-d tensor")
    d = _dim(dim, len(shape))
    if not -shape[d] <= index < shape[d]:
        raise ValueError(f"index {index} out of range for size {shape[d]}")
    return tuple(shape[:d]) + tuple(shape[d + 1 :])


# ---- transpose: (dim0, dim1); permute: (dims,) --------------------------------


def _transpose_shape(shape, dim0: int, dim1: int) -> tuple[int, ...]:
    d0, d1 = _dim(dim0, len(shape)), _dim(dim1, len(shape))
    out = list(shape)
    if len(shape):
        out[d0], out[d1] = shape[d1], shape[d0]
    return tuple(out)


def _permute_shape(shape, dims: Sequence[int]) -> tuple[int, ...]:
    wrapped = [_dim(d, len(shape)) for d in dims]
    if sorted(wrapped) != list(range(len(shape))):
        raise ValueError(f"{tuple(dims)} is not a permutation of {len(shape)} dimensions")
    return tuple(shape[d] for d in wrapped)


# ---- unsqueeze: (dim,) --------------------------------------------------------


def _unsqueeze_shape(shape, dim: int) -> tuple[int, ...]:
    d = _dim(dim, len(shape) + 1)
    return tuple(shape[:d]) + (1,) + tuple(shape[d:])


# ---- expand: (sizes,); view: (shape,) ----------------------------------------


def _expand_shape(shape, sizes: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(sizes)
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ValueError(f"expand to {sizes} has fewer dimensions than {tuple(shape)}")
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise ValueError(f"expand: new leading size {s} must be non-negative")
            out.append(s)
            continue
        old = shape[i - lead]
        if s == -1 or s == old:
            out.append(old)
        elif old == 1 and s >= 0:
            out.append(s)
        else:
            raise ValueError(f"expand: size {s} does not match {old} at dimension {i}")
    return tuple(out)


def _view_shape(shape, sizes: Sequence[int]) -> tuple[int, ...]:
    # the shape only: whether the strides allow a view is conformance.model's call
    return resolve_sizes(sizes, math.prod(shape))


#: The view kinds, by name. ``slice``, ``select``, ``transpose``, ``permute``,
#: ``unsqueeze`` and ``expand`` always return a view; ``view`` raises where the
#: strides cannot be viewed (``conformance.model.geometry.view_strides`` decides).
VIEWS: dict[str, ViewKind] = {
    k.name: k
    for k in (
        ViewKind(
            "slice",
            _slice_apply,
            _slice_code,
            _slice_shape,
            "dim, start=None, stop=None, step=None (one dimension sliced, the others whole)",
        ),
        ViewKind(
            "select",
            lambda t, dim, index: t.select(dim, index),
            lambda x, dim, index: f"{x}.select({dim}, {index})",
            _select_shape,
            "dim, index (an int in [-size, size))",
        ),
        ViewKind(
            "transpose",
            lambda t, dim0, dim1: t.transpose(dim0, dim1),
            lambda x, dim0, dim1: f"{x}.transpose({dim0}, {dim1})",
            _transpose_shape,
            "dim0, dim1 (the two dimensions swapped)",
        ),
        ViewKind(
            "permute",
            lambda t, dims: t.permute(tuple(dims)),
            lambda x, dims: f"{x}.permute({tuple(dims)!r})",
            _permute_shape,
            "dims (a sequence, one entry per dimension)",
        ),
        ViewKind(
            "unsqueeze",
            lambda t, dim: t.unsqueeze(dim),
            lambda x, dim: f"{x}.unsqueeze({dim})",
            _unsqueeze_shape,
            "dim (where the new size-1 dimension goes)",
        ),
        ViewKind(
            "expand",
            lambda t, sizes: t.expand(tuple(sizes)),
            lambda x, sizes: f"{x}.expand({tuple(sizes)!r})",
            _expand_shape,
            "sizes (new leading sizes, then -1 or the size for each dimension)",
        ),
        ViewKind(
            "view",
            lambda t, shape: t.view(tuple(shape)),
            lambda x, shape: f"{x}.view({tuple(shape)!r})",
            _view_shape,
            "shape (one entry may be -1)",
        ),
    )
}
