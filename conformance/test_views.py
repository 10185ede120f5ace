"""Properties of view ops, reshape/flatten/expand/view(dtype), the storage
identity APIs and ``detach_`` (claims in ``claims/views.toml``).

Every op on the "Tensor Views" docs page is drawn from
:data:`DOCUMENTED_VIEW_OPS` with arguments valid for the generated tensor
(:func:`view_op_args`). Viewability of a shape is decided by
:func:`can_view`, an independent model of the rule in the ``Tensor.view``
docstring. What each property kills (the broken torch
it would catch) is in its docstring.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import (
    first_index,
    raises_with,
    same_bits,
    same_storage,
    sentinel_for,
    shares_storage,
    shares_version_counter,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    TensorSpec,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    PlainSubclass,
    build_kind,
    domain_examples,
    non_empty,
    tensor_kind_of,
    value_examples,
)

# ----------------------------------------------------------------------------
# Reference models (no torch view machinery involved)


def row_major(t: torch.Tensor) -> list:
    """``t``'s values in row-major order, read element by element (``tolist``)."""

    def flat(x):
        if isinstance(x, list):
            return [v for item in x for v in flat(item)]
        return [x]

    return flat(t.detach().resolve_conj().cpu().tolist())


def can_view(shape, stride, target) -> bool:
    """The ``Tensor.view`` docstring's compatibility rule.

    Same number of elements, and each target dimension is a subspace of an
    original dimension or spans original dimensions ``d..d+k`` with
    ``stride[i] == stride[i+1] * size[i+1]``. Made precise in two places the
    docstring leaves implicit: size-1 dimensions carry no data and so no
    constraint, and a tensor with no elements has no layout to be
    incompatible with.
    """
    numel = math.prod(shape)
    if numel != math.prod(target):
        return False
    if numel == 0:
        return True
    chunks: list[int] = []  # element counts of maximal mutually-contiguous runs of dims
    prev_stride = None
    for size, st_ in zip(shape, stride, strict=True):
        if size == 1:
            continue
        if chunks and prev_stride == st_ * size:
            chunks[-1] *= size
        else:
            chunks.append(size)
        prev_stride = st_
    new = [s for s in target if s != 1]
    i = 0
    for chunk in chunks:
        acc = 1
        while acc < chunk:
            if i == len(new):
                return False
            acc *= new[i]
            i += 1
        if acc != chunk:
            return False
    return i == len(new)


def resolve_shape(target, numel: int) -> tuple[int, ...]:
    """``target`` with a ``-1`` entry replaced by the inferred size."""
    if -1 not in target:
        return tuple(target)
    known = math.prod(s for s in target if s != -1)
    return tuple(numel // known if s == -1 else s for s in target)


def byte_addresses(t: torch.Tensor) -> np.ndarray:
    """Address of the first byte of every element of ``t`` (shape ``t.shape``),
    from its storage address, storage offset, strides and element size."""
    es = t.element_size()
    addr = np.full(tuple(t.shape), t.untyped_storage().data_ptr() + t.storage_offset() * es)
    addr = addr.astype(np.int64)
    for d, (size, stride) in enumerate(zip(t.shape, t.stride(), strict=True)):
        shp = [1] * t.dim()
        shp[d] = size
        addr = addr + (np.arange(size, dtype=np.int64) * stride * es).reshape(shp)
    return addr


def snapshot(t: torch.Tensor) -> np.ndarray:
    """A copy of ``t``'s values as a comparable NumPy array (complex as (re, im) pairs)."""
    v = t.detach().resolve_conj().cpu()
    if v.dtype == torch.bfloat16:
        v = v.float()
    if v.is_complex():
        v = torch.view_as_real(v)
    return np.array(v.numpy(), copy=True)


def changed(before: np.ndarray, t: torch.Tensor) -> np.ndarray:
    """Boolean mask (shape ``t.shape``) of the elements of ``t`` that differ from ``before``."""
    diff = before != snapshot(t)
    if t.is_complex():
        diff = diff.any(axis=-1)
    return np.asarray(diff)


def overlapping(addr: np.ndarray, es: int, start: int, width: int) -> np.ndarray:
    """Mask of elements (first-byte ``addr``, size ``es``) overlapping bytes ``[start, start+width)``."""
    return (addr < start + width) & (start < addr + es)


def write_sentinel(t: torch.Tensor, index: tuple[int, ...]) -> None:
    """Write a value different from ``t[index]`` into ``t[index]`` (under no_grad)."""
    value = sentinel_for(t[index])
    with torch.no_grad():
        t[index] = value


def root_of(t: torch.Tensor) -> torch.Tensor:
    return t._base if t._base is not None else t


# ----------------------------------------------------------------------------
# The "Tensor Views" page's list of view ops, with argument strategies

#: Every op on https://docs.pytorch.org/docs/stable/tensor_view.html except
#: ``detach`` (tested on its own: views.detach-listed-as-view) and the
#: sparse-only ``indices``/``values``: op names, with arguments drawn per tensor
#: by :func:`view_op_args` (unlike ``test_gradmode.ALWAYS_VIEW_OPS``, fixed calls valid
#: on every tensor, and ``strategies.graphs.VIEW_OPS``, the view kinds of a graph's ops).
DOCUMENTED_VIEW_OPS: tuple[str, ...] = (
    "slicing",
    "adjoint",
    "as_strided",
    "diagonal",
    "expand",
    "expand_as",
    "movedim",
    "narrow",
    "permute",
    "select",
    "squeeze",
    "transpose",
    "t",
    "T",
    "H",
    "mT",
    "mH",
    "real",
    "imag",
    "view_as_real",
    "unflatten",
    "unfold",
    "unsqueeze",
    "view",
    "view_as",
    "unbind",
    "split",
    "hsplit",
    "vsplit",
    "tensor_split",
    "split_with_sizes",
    "swapaxes",
    "swapdims",
    "chunk",
)
TENSOR_VIEWS_PAGE = DOCUMENTED_VIEW_OPS + ("detach", "indices", "values")
#: The ops grouped so that each test case draws from a handful: every op is
#: exercised many times per run without a run per op.
VIEW_OP_FAMILIES: dict[str, tuple[str, ...]] = {
    "indexing": ("slicing", "select", "narrow", "as_strided", "diagonal", "unfold"),
    "dims": ("permute", "movedim", "transpose", "swapaxes", "swapdims", "t", "T", "mT"),
    "complex": ("adjoint", "H", "mH", "real", "imag", "view_as_real"),
    "shape": ("expand", "expand_as", "squeeze", "unsqueeze", "unflatten", "view", "view_as"),
    "multi-output": (
        "unbind",
        "split",
        "hsplit",
        "vsplit",
        "tensor_split",
        "split_with_sizes",
        "chunk",
    ),
}

_COMPLEX_ONLY = {"real", "imag", "view_as_real"}  # real/imag of a real tensor return self or raise
_NDIM_2 = {"T", "H"}  # T/H on other ranks are deprecated (warn) or raise
_NDIM_GE_2 = {"adjoint", "diagonal", "mT", "mH", "vsplit"}
_NDIM_LE_2 = {"t"}
# need a dimension to act on
_NDIM_GE_1 = {"narrow", "select", "unflatten", "unfold", "unbind", "split"}
_NDIM_GE_1 |= {"split_with_sizes", "hsplit", "tensor_split", "chunk"}


@dataclass(frozen=True)
class ViewOp:
    """One drawn view op with its arguments (``repr`` is readable Python)."""

    name: str
    args: tuple = ()

    def apply(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Apply to ``t``; always returns a tuple of outputs."""
        n, a = self.name, self.args
        if n == "slicing":
            out = t[a[0]]
        elif n in ("T", "H", "mT", "mH", "real", "imag"):
            out = getattr(t, n)
        elif n == "view_as_real":
            out = torch.view_as_real(t)
        elif n == "expand_as":
            out = t.expand_as(torch.empty(a[0], dtype=t.dtype, device=t.device))
        elif n == "view_as":
            out = t.view_as(torch.empty(a[0], dtype=t.dtype, device=t.device))
        elif n == "squeeze" and a and a[0] is None:
            out = t.squeeze()
        else:
            out = getattr(t, n)(*a)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def accepts(name: str, t: torch.Tensor) -> bool:
    """Whether op ``name`` is defined for ``t`` (dtype and rank requirements)."""
    n = t.dim()
    if name == "view_as_real":
        # Not on a conjugate view (adjoint/H/mH of a complex tensor): it raises
        # "view_as_real doesn't work on unresolved conjugated tensors" on every
        # release, so a chain never draws it there.
        return t.is_complex() and not t.is_conj()
    if name in _COMPLEX_ONLY:
        return t.is_complex()
    if name in _NDIM_2:
        return n == 2
    if name in _NDIM_GE_2:
        return n >= 2
    if name in _NDIM_LE_2:
        return n <= 2
    if name == "select":
        return any(s > 0 for s in t.shape)
    if name in _NDIM_GE_1:
        return n >= 1
    return True


def family_specs(family: str) -> st.SearchStrategy:
    """Specs for a family's inputs: every dtype and layout; half complex for
    the complex family (real/imag/view_as_real accept only complex)."""
    if family == "complex":
        return tensor_specs(dtype=st.one_of(st.sampled_from(COMPLEX), st.sampled_from(ALL_DTYPES)))
    return tensor_specs()


@st.composite
def same_numel_shapes(draw, numel: int, *, infer: bool = True) -> tuple[int, ...]:
    """Shapes with ``numel`` elements (a ``-1`` entry sometimes, when inferable)."""
    if numel == 0:
        k = draw(st.integers(1, 4))
        dims = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
        dims[draw(st.integers(0, k - 1))] = 0
        return tuple(dims)
    factors, n, p = [], numel, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    k = draw(st.integers(1 if factors else 0, 4))
    dims = [1] * k
    for f in factors:
        dims[draw(st.integers(0, k - 1))] *= f
    if infer and k and draw(st.booleans()):
        dims[draw(st.integers(0, k - 1))] = -1
    return tuple(dims)


def _dims(n: int) -> st.SearchStrategy[int]:
    return st.integers(-n, n - 1) if n else st.sampled_from([0, -1])


@st.composite
def _composition(draw, size: int) -> list[int]:
    cuts = sorted(draw(st.lists(st.integers(0, size), max_size=3)))
    bounds = [0, *cuts, size]
    return [b - a for a, b in zip(bounds, bounds[1:], strict=False)]


@st.composite
def view_op_args(draw, name: str, t: torch.Tensor) -> ViewOp:
    """Valid arguments of op ``name`` for the tensor ``t``."""
    shape, n = tuple(t.shape), t.dim()

    def sized_dim():
        d = draw(st.integers(0, n - 1))
        return d, shape[d]

    if name == "slicing":
        parts: list = []
        for size in shape[: draw(st.integers(0, n))]:
            kind = draw(st.sampled_from(["int", "slice", "all"] if size else ["slice", "all"]))
            if kind == "int":
                parts.append(draw(st.integers(-size, size - 1)))
            elif kind == "slice":
                start = draw(st.integers(-size, size))
                stop = draw(st.one_of(st.none(), st.integers(-size, size)))
                parts.append(slice(start, stop, draw(st.integers(1, 3))))
            else:
                parts.append(slice(None))
        if draw(st.booleans()):
            parts.append(Ellipsis)
        if draw(st.booleans()):
            parts.insert(draw(st.integers(0, len(parts))), None)
        return ViewOp(name, (tuple(parts),))
    if name == "as_strided":
        storage_numel = t.untyped_storage().nbytes() // t.element_size()
        k = draw(st.integers(0, 2))
        size = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
        stride = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
        extent = sum((s - 1) * st_ for s, st_ in zip(size, stride, strict=True))
        if 0 in size:
            offset = draw(st.integers(0, storage_numel))
        elif storage_numel == 0:
            size, stride, offset = [0], [1], 0
        else:
            if extent > storage_numel - 1:
                size = [1] * k
                extent = 0
            offset = draw(st.integers(0, storage_numel - 1 - extent))
        return ViewOp(name, (tuple(size), tuple(stride), offset))
    if name == "diagonal":
        d1, d2 = draw(st.permutations(range(n)))[:2]
        return ViewOp(name, (draw(st.integers(-3, 3)), d1, d2))
    if name in ("expand", "expand_as"):
        lead = draw(st.lists(st.integers(0, 3), max_size=2))
        rest = [draw(st.sampled_from([1, 2, 3, 0, -1] if s == 1 else [s, -1])) for s in shape]
        target = tuple(lead + rest)
        if name == "expand_as":
            target = tuple(s if s != -1 else shape[i - len(lead)] for i, s in enumerate(target))
        return ViewOp(name, (target,))
    if name == "movedim":
        if n == 0:
            return ViewOp(name, (0, 0))
        k = draw(st.integers(0, n))
        src = draw(st.permutations(range(n)))[:k]
        dst = draw(st.permutations(range(n)))[:k]
        return ViewOp(name, (list(src), list(dst)))
    if name == "narrow":
        d, size = sized_dim()
        start = draw(st.integers(0, size))
        return ViewOp(name, (d, start, draw(st.integers(0, size - start))))
    if name == "permute":
        return ViewOp(name, (tuple(draw(st.permutations(range(n)))),))
    if name == "select":
        d = draw(st.sampled_from([i for i, s in enumerate(shape) if s > 0]))
        return ViewOp(name, (d, draw(st.integers(-shape[d], shape[d] - 1))))
    if name == "squeeze":
        form = draw(st.sampled_from(["all", "dim", "dims"]))
        if form == "all":
            return ViewOp(name, (None,))
        if form == "dim":
            return ViewOp(name, (draw(_dims(n)),))
        return ViewOp(name, (tuple(draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))),))
    if name in ("transpose", "swapaxes", "swapdims"):
        return ViewOp(name, (draw(_dims(n)), draw(_dims(n))))
    if name in ("adjoint", "t", "T", "H", "mT", "mH", "real", "imag", "view_as_real"):
        return ViewOp(name)
    if name == "unflatten":
        d, size = sized_dim()
        if size == 0:
            sizes = draw(st.sampled_from([(0,), (1, 0), (0, 2)]))
        else:
            sizes = draw(same_numel_shapes(size).filter(lambda s: len(s) > 0))
        return ViewOp(name, (d, sizes))
    if name == "unfold":
        d, size = sized_dim()
        return ViewOp(name, (d, draw(st.integers(0, size)), draw(st.integers(1, 3))))
    if name == "unsqueeze":
        return ViewOp(name, (draw(st.integers(-n - 1, n)),))
    if name in ("view", "view_as"):
        candidates = draw(st.lists(same_numel_shapes(t.numel(), infer=name == "view"), max_size=6))
        fits = [
            c
            for c in candidates
            if can_view(shape, t.stride(), resolve_shape(c, t.numel()))
            and (-1 not in c or t.numel() > 0)
        ]
        target = fits[0] if fits else shape
        return ViewOp(name, (target,))
    if name == "unbind":
        return ViewOp(name, (draw(st.integers(0, n - 1)),))
    if name == "split":
        d, size = sized_dim()
        if draw(st.booleans()):
            return ViewOp(name, (draw(st.integers(1, 4)), d))
        return ViewOp(name, (draw(_composition(size)), d))
    if name == "split_with_sizes":
        d, size = sized_dim()
        return ViewOp(name, (draw(_composition(size)), d))
    if name in ("hsplit", "vsplit", "tensor_split"):
        if name == "tensor_split":
            d, size = sized_dim()
        else:
            d = 1 if (name == "hsplit" and n > 1) else 0
            size = shape[d]
        if draw(st.booleans()):
            if name == "tensor_split":
                sections = draw(st.integers(1, 4))
            else:
                divisors = [k for k in range(1, 5) if size % k == 0]
                sections = draw(st.sampled_from(divisors))
            args: tuple = (sections,)
        else:
            args = (sorted(draw(st.lists(st.integers(0, size), max_size=3))),)
        return ViewOp(name, args + ((d,) if name == "tensor_split" else ()))
    if name == "chunk":
        return ViewOp(name, (draw(st.integers(1, 4)), draw(st.integers(0, n - 1))))
    raise AssertionError(f"no argument strategy for {name}")


def _build(spec, device, requires_grad: bool) -> torch.Tensor:
    return spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)


# ----------------------------------------------------------------------------
# TV-01: the Tensor Views list


@pytest.mark.claim("views.real-of-real-is-self")
@grid_examples(dtypes=[d for d in ALL_DTYPES if not d.is_complex], form="function")
@given(
    spec=tensor_specs(dtype=[d for d in ALL_DTYPES if not d.is_complex]),
    form=st.sampled_from(["attribute", "function"]),
)
def test_real_of_a_real_tensor_is_itself(device, spec, form):
    """Pins why ``real``/``imag``/``view_as_real`` are only drawn on complex
    inputs by the view-op properties. Kills: a ``real`` that starts copying
    or viewing real tensors, or an ``imag`` that starts returning zeros."""
    t = spec.build(device)
    out = t.real if form == "attribute" else torch.real(t)
    assert out is t, f"{form} real of a {spec.dtype} tensor is not the tensor itself"
    with raises_with(RuntimeError, "imag"):
        t.imag if form == "attribute" else torch.imag(t)


@pytest.mark.claim("views.tensor-views-ops-return-views")
@pytest.mark.parametrize("family", sorted(VIEW_OP_FAMILIES))
@given(data=st.data(), requires_grad=st.booleans())
def test_view_op_returns_view(device, family, data, requires_grad):
    """Kills: a view op that copies, or returns an alias without view tracking
    (``_is_view()`` False / wrong ``_base``), or with its own version counter,
    for some layout, dtype or argument."""
    spec = data.draw(family_specs(family), label="spec")
    t = _build(spec, device, requires_grad)
    root = root_of(t)
    for name in VIEW_OP_FAMILIES[family]:
        if not accepts(name, t):
            continue
        op = data.draw(view_op_args(name, t), label=name)
        evidence.tally(f"{name} checked")
        for out in op.apply(t):
            assert out._is_view(), f"{name} result is not a view (_is_view() is False)"
            assert out._base is root, f"{name} result's _base is not the input's root base"
            assert shares_storage(out, t), f"{name} result does not share storage with its input"
            assert shares_version_counter(out, t), f"{name} result has its own version counter"


@pytest.mark.claim("views.tensor-views-writes-visible")
@pytest.mark.observes("detach", "numpy")
@pytest.mark.parametrize("family", sorted(VIEW_OP_FAMILIES))
@given(data=st.data(), requires_grad=st.booleans())
def test_view_op_writes_visible_both_ways(device, family, data, requires_grad):
    """Kills: a view op whose result does not alias the input's memory element
    for element (a copy, a copy-on-write alias, wrong strides or offset), seen
    as a write through one that does not land in exactly the aliased elements
    of the other."""
    spec = data.draw(family_specs(family), label="spec")
    t = _build(spec, device, requires_grad)
    for name in VIEW_OP_FAMILIES[family]:
        if not accepts(name, t):
            continue
        op = data.draw(view_op_args(name, t), label=name)
        outs = [o for o in op.apply(t) if o.numel() > 0]
        if outs:
            out = outs[data.draw(st.integers(0, len(outs) - 1), label=f"{name} output")]
            _check_writes_visible(name, t, out)


@pytest.mark.claim("views.tensor-views-ops-return-views")
@grid_examples(requires_grad=False)
@given(spec=tensor_specs(), requires_grad=st.booleans())
def test_view_ops_on_the_grid_return_views(device, spec, requires_grad):
    """Every op of the table that accepts the input, with fixed arguments
    (:func:`canonical_view_op`), on every (dtype, layout) pair of the grid
    and on random specs: the family properties above draw their inputs
    through ``st.data``, which explicit examples cannot supply.

    Kills: a view op that copies, or aliases without view tracking or with
    its own version counter, for one dtype on one layout."""
    t = _build(spec, device, requires_grad)
    root = root_of(t)
    for name, out in canonical_views(t):
        assert out._is_view(), f"{name} result is not a view (_is_view() is False)"
        assert out._base is root, f"{name} result's _base is not the input's root base"
        assert shares_storage(out, t), f"{name} result does not share storage with its input"
        assert shares_version_counter(out, t), f"{name} result has its own version counter"


@pytest.mark.claim("views.tensor-views-writes-visible")
@pytest.mark.observes("detach", "numpy")
@grid_examples()
@given(spec=tensor_specs())
def test_view_ops_on_the_grid_writes_visible(device, spec):
    """Writes both ways through every op of the table that accepts the input
    (first non-empty output, :func:`canonical_view_op` arguments), on every
    (dtype, layout) pair of the grid and on random specs. The input does not
    require grad: the outputs of several ops are written one after another,
    which autograd refuses for multi-output views (the family property above
    covers inputs requiring grad).

    Kills: a view op whose result does not alias the input element for
    element (a copy, a copy-on-write alias) for one dtype on one layout."""
    t = spec.build(device)
    seen = set()
    for name, out in canonical_views(t):
        if name not in seen and out.numel() > 0:
            seen.add(name)
            _check_writes_visible(name, t, out)


def _check_writes_visible(name: str, t: torch.Tensor, out: torch.Tensor) -> None:
    """Write through ``out`` and check exactly the aliased elements of ``t``
    (and of its root, which covers the whole storage) change; then write to
    the input (or, for an as_strided view outside ``t``'s elements, to the
    root) and check exactly the aliased elements of ``out`` change."""
    root = root_of(t)
    o_addr, o_es = byte_addresses(out), out.element_size()
    i0 = first_index(out)
    aliased = {}
    before = {}
    for label, u in (("input", t), ("root", root)):
        aliased[label] = overlapping(byte_addresses(u), u.element_size(), int(o_addr[i0]), o_es)
        before[label] = snapshot(u)
    assert aliased["root"].any(), f"{name} result's first element is not in its base's storage"
    write_sentinel(out, i0)
    for label, u in (("input", t), ("root", root)):
        assert np.array_equal(changed(before[label], u), aliased[label]), (
            f"a write through {name} result did not land in exactly the aliased {label} elements"
        )
    label, u = ("input", t) if aliased["input"].any() else ("root", root)
    p = tuple(int(i) for i in np.argwhere(aliased[label])[0])
    before_out = snapshot(out)
    write_sentinel(u, p)
    expected = overlapping(o_addr, o_es, int(byte_addresses(u)[p]), u.element_size())
    assert np.array_equal(changed(before_out, out), expected), (
        f"a write to the {label} was not seen in exactly the aliased {name} elements"
    )


def draw_view(data, t: torch.Tensor, label: str) -> tuple[ViewOp, tuple[torch.Tensor, ...]]:
    """Draw an op of the table that accepts ``t``, with arguments; apply it."""
    name = data.draw(
        st.sampled_from([n for n in DOCUMENTED_VIEW_OPS if accepts(n, t)]), label=f"{label} op"
    )
    op = data.draw(view_op_args(name, t), label=label)
    return op, op.apply(t)


def canonical_view_op(name: str, t: torch.Tensor) -> ViewOp:
    """Fixed, always valid arguments of op ``name`` for ``t`` (``accepts(name,
    t)`` must hold): what the dtype x layout grid applies, where no Hypothesis
    draw is available."""
    shape, n = tuple(t.shape), t.dim()
    size0 = shape[0] if n else 0
    if name == "slicing":
        return ViewOp(name, ((slice(1, None, 2),) if n else (None,),))
    if name == "as_strided":
        return ViewOp(name, (shape, t.stride(), t.storage_offset()))
    if name == "diagonal":
        return ViewOp(name, (0, 0, 1))
    if name in ("expand", "expand_as"):
        return ViewOp(name, ((2, *shape),))
    if name == "movedim":
        return ViewOp(name, (0, max(n - 1, 0)))
    if name == "narrow":
        start = min(1, size0)
        return ViewOp(name, (0, start, size0 - start))
    if name == "permute":
        return ViewOp(name, (tuple(reversed(range(n))),))
    if name == "select":
        d = next(i for i, s in enumerate(shape) if s > 0)
        return ViewOp(name, (d, shape[d] - 1))
    if name == "squeeze":
        return ViewOp(name, (None,))
    if name in ("transpose", "swapaxes", "swapdims"):
        return ViewOp(name, (0, -1))
    if name == "unflatten":
        return ViewOp(name, (0, (1, size0)))
    if name == "unfold":
        return ViewOp(name, (0, min(size0, 2), 1))
    if name == "unsqueeze":
        return ViewOp(name, (n,))
    if name == "view":
        flat = t.numel() > 0 and can_view(shape, t.stride(), (t.numel(),))
        return ViewOp(name, ((-1,) if flat else shape,))
    if name == "view_as":
        return ViewOp(name, (shape,))
    if name in ("unbind", "split_with_sizes"):
        return ViewOp(name, (0,) if name == "unbind" else ([size0], 0))
    if name in ("split", "chunk", "tensor_split"):
        return ViewOp(name, (2, 0))
    if name in ("hsplit", "vsplit"):
        return ViewOp(name, (1,))
    return ViewOp(name)  # adjoint, t, T, H, mT, mH, real, imag, view_as_real


def canonical_views(t: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
    """(op name, output) for every op of the table that accepts ``t``, with
    :func:`canonical_view_op` arguments."""
    return [
        (name, out)
        for name in DOCUMENTED_VIEW_OPS
        if accepts(name, t)
        for out in canonical_view_op(name, t).apply(t)
    ]


def grid_target(t: torch.Tensor) -> tuple[int, ...]:
    """A shape for the grid examples of view/reshape properties: flat
    (``(-1,)``) for a non-empty tensor (viewable or not), else its own."""
    return (-1,) if t.numel() else tuple(t.shape)


def grid_expansion(shape: tuple[int, ...]) -> tuple[int, ...]:
    """An expand target that repeats every element: a new leading dimension
    of size 2, and every size-1 dimension expanded to 2."""
    return (2, *(2 if s == 1 else s for s in shape))


# ----------------------------------------------------------------------------
# DET-06: detach is on the list but is not a tracked view


@pytest.mark.claim("views.detach-listed-as-view")
@pytest.mark.observes("detach")
@grid_examples(requires_grad=False)
@given(spec=tensor_specs(), requires_grad=st.booleans())
def test_detach_is_a_tracked_view(device, spec, requires_grad):
    """The docs page's claim as stated: detach is a view op. detach is a
    non-differentiable view (not tracked): recorded in expectations.
    Kills (once fixed): a detach that stops being listed-and-tracked consistently."""
    t = _build(spec, device, requires_grad)
    d = t.detach()
    assert d._is_view(), "detach() result is not a view (_is_view() is False)"
    assert d._base is root_of(t), "detach() result's _base is not the input's root base"


@pytest.mark.claim("views.detach-untracked-alias")
@pytest.mark.observes("detach")
@grid_examples(requires_grad=False)
@given(spec=tensor_specs(), requires_grad=st.booleans())
def test_detach_is_an_untracked_alias(device, spec, requires_grad):
    """Kills: a detach that copies or gets its own version counter, and one
    that starts tracking its result as a view (a change either way)."""
    t = _build(spec, device, requires_grad)
    d = t.detach()
    assert shares_storage(d, t), "detach() result does not share storage with its input"
    assert shares_version_counter(d, t), "detach() result has its own version counter"
    assert not d._is_view(), "detach() result is tracked as a view"
    assert d._base is None, "detach() result has a _base"


# ----------------------------------------------------------------------------
# VIEW-01 / VAS-01: view and view_as


@pytest.mark.claim("views.view-shares-data")
@pytest.mark.observes("detach")
@grid_examples(data=None, requires_grad=False)
@given(spec=tensor_specs(), data=st.data(), requires_grad=st.booleans())
def test_view_shares_data(device, spec, data, requires_grad):
    """Grid examples (no data to draw from) view as :func:`canonical_view_op`
    does: flat when that is viewable, else as the input's own shape.

    Kills: a view() that copies, reorders elements, changes the element
    count or does not share the version counter."""
    t = _build(spec, device, requires_grad)
    if data is None:
        (target,) = canonical_view_op("view", t).args
    else:
        (target,) = data.draw(view_op_args("view", t), label="view op").args
    v = t.view(target)
    assert tuple(v.shape) == resolve_shape(target, t.numel()), "view() has the wrong shape"
    assert v._is_view() and v._base is root_of(t), "view() result is not a view of its input"
    assert shares_storage(v, t), "view() result does not share storage with its input"
    assert v.storage_offset() == t.storage_offset(), "view() moved the storage offset"
    assert shares_version_counter(v, t), "view() result has its own version counter"
    assert row_major(v) == row_major(t), "view() elements are not the input's in row-major order"


@pytest.mark.claim("views.view-stride-compatibility")
# Issue 29, layout ("t's size and stride"): every layout family, by
# construction; the spec reports it. Explicit examples (no data to draw
# from) view as grid_target: flat, which some layouts can view and others
# cannot.
@domain_examples(data=None)
@given(spec=tensor_specs(), data=st.data())
def test_view_succeeds_iff_stride_compatible(device, spec, data):
    """Kills: a view() that refuses a compatible shape, or silently succeeds
    (e.g. by copying or mis-striding) for an incompatible shape or a wrong
    element count, for every layout family or for one only."""
    t = spec.build(device)
    if data is None:
        target = grid_target(t)
    else:
        shape_strategy = st.one_of(same_numel_shapes(t.numel()), shapes(max_dims=3))
        target = data.draw(shape_strategy, label="target")
    same_numel = -1 in target or math.prod(target) == t.numel()
    if same_numel and can_view(tuple(t.shape), t.stride(), resolve_shape(target, t.numel())):
        v = t.view(target)
        assert tuple(v.shape) == resolve_shape(target, t.numel()), "view() has the wrong shape"
    elif same_numel:
        with raises_with(RuntimeError, "view size is not compatible with input tensor's size"):
            t.view(target)
    else:
        with raises_with(RuntimeError, "is invalid for input of size"):
            t.view(target)


def _attempt(fn):
    try:
        r = fn()
    except RuntimeError as e:
        return ("error", str(e)), None
    return ("ok", tuple(r.shape), r.stride(), r.storage_offset()), r


@pytest.mark.claim("views.view-as-equivalence")
# Issue 29: every layout and dtype family of t, by construction; explicit
# examples (no data to draw from) view as other of grid_target's size (flat),
# which some layouts can view and others cannot.
@domain_examples(data=None)
@given(spec=tensor_specs(), data=st.data())
def test_view_as_is_view_of_other_size(device, spec, data):
    """Kills: a view_as that differs from view(other.size()) in result
    geometry, storage, or in which inputs it rejects."""
    t = spec.build(device)
    if data is None:
        target = tuple(t.shape) if not t.numel() else (t.numel(),)
    else:
        target = data.draw(
            st.one_of(same_numel_shapes(t.numel(), infer=False), shapes(max_dims=3)),
            label="other",
        )
    other = torch.empty(target, device=device)
    got, r = _attempt(lambda: t.view_as(other))
    want, _ = _attempt(lambda: t.view(other.size()))
    assert got == want, f"view_as gave {got}, view(other.size()) gave {want}"
    if r is not None:
        assert shares_storage(r, t), "view_as result does not share storage with its input"


# ----------------------------------------------------------------------------
# VIEW-02 / VIEW-03: view(dtype)


def view_dtype_allowed(t: torch.Tensor, dtype: torch.dtype) -> bool:
    """The conditions listed in the ``Tensor.view(dtype)`` docstring."""
    old, new = t.element_size(), torch.empty((), dtype=dtype).element_size()
    if old == new:
        return True
    if t.dim() == 0 or t.stride(-1) != 1:
        return False
    if new < old:
        return True
    r = new // old
    return (
        t.size(-1) % r == 0
        and t.storage_offset() % r == 0
        and all(s % r == 0 for s in t.stride()[:-1])
    )


_VIEW_DTYPES = st.one_of(st.none(), st.sampled_from(ALL_DTYPES))  # None: the input's own


@pytest.mark.claim("views.view-dtype-conditions")
# Issue 29: the grids draw every layout family and every dtype family (the
# spec reports both) with a 2-byte and a 16-byte target.
@grid_examples(dtype=torch.int16, requires_grad=False)
@grid_examples(dtype=torch.complex128, requires_grad=False)
@given(spec=tensor_specs(), dtype=_VIEW_DTYPES, requires_grad=st.booleans())
def test_view_dtype_conditions(device, spec, dtype, requires_grad):
    """``dtype`` None views as the input's own dtype. The grid tries a 2-byte
    and a 16-byte target on every (dtype, layout) pair: smaller, equal and
    larger element sizes.

    Kills: a view(dtype) that accepts a layout the docs forbid, rejects one
    they allow, copies, or scales the last dimension wrongly."""
    t = _build(spec, device, requires_grad)
    dtype = t.dtype if dtype is None else dtype
    if not view_dtype_allowed(t, dtype):
        with raises_with(RuntimeError, "different element sizes"):
            t.view(dtype)
        return
    v = t.view(dtype)
    old, new = t.element_size(), v.element_size()
    assert v.dtype == dtype, "view(dtype) has the wrong dtype"
    want = tuple(t.shape) if old == new else (*t.shape[:-1], t.shape[-1] * old // new)
    assert tuple(v.shape) == want, f"view(dtype) has shape {tuple(v.shape)}, expected {want}"
    assert shares_storage(v, t), "view(dtype) result does not share storage with its input"
    assert v.storage_offset() * new == t.storage_offset() * old, "view(dtype) moved the start"


@pytest.mark.claim("views.view-dtype-untracked-alias")
@grid_examples(dtype=None, requires_grad=False)
@given(spec=tensor_specs(), dtype=_VIEW_DTYPES, requires_grad=st.booleans())
def test_view_dtype_is_an_untracked_alias(device, spec, dtype, requires_grad):
    """``dtype`` None (drawn often, and on the whole grid) views as the
    input's own dtype, which the claim covers too.

    Kills: a change in view(dtype)'s autograd/aliasing: a result that
    requires grad or is tracked as a view, or one that stops sharing the
    storage or version counter."""
    t = _build(spec, device, requires_grad)
    dtype = t.dtype if dtype is None else dtype
    assume(view_dtype_allowed(t, dtype))
    v = t.view(dtype)
    assert not v.requires_grad and v.grad_fn is None, "view(dtype) result requires grad"
    assert not v._is_view() and v._base is None, "view(dtype) result is tracked as a view"
    assert shares_storage(v, t), "view(dtype) result does not share storage with its input"
    assert shares_version_counter(v, t), "view(dtype) result has its own version counter"


# ----------------------------------------------------------------------------
# RESH-01: reshape


#: The spellings of reshape (issue 29: ``call_form``): the method
#: ``t.reshape(shape)``, the function ``torch.reshape(t, shape)``, and the
#: function with keyword arguments ``torch.reshape(input=t, shape=shape)``.
RESHAPE_FORMS = ("method", "function", "keyword")


def _reshape(t: torch.Tensor, target: tuple[int, ...], form: str) -> torch.Tensor:
    """``reshape(t, target)`` in the spelling ``form`` (:data:`RESHAPE_FORMS`)."""
    if form == "method":
        return t.reshape(target)
    if form == "function":
        return torch.reshape(t, target)
    return torch.reshape(input=t, shape=target)


@pytest.mark.claim("views.reshape-values")
@pytest.mark.observes("detach")
# Issue 29: every layout and dtype family, and every spelling, by construction
# (explicit examples have no data to draw from: they reshape to grid_target).
@domain_examples(data=None, form="method")
@value_examples("form", RESHAPE_FORMS, spec=DOMAIN_SPEC, data=None)
@given(spec=tensor_specs(), data=st.data(), form=st.sampled_from(RESHAPE_FORMS))
def test_reshape_values_are_row_major(device, spec, data, form):
    """Kills: a reshape that reorders elements (e.g. copies a non-contiguous
    input in memory order) or gets the shape wrong, for every layout and
    dtype family or in one spelling only (method, function, keywords)."""
    t = spec.build(device)
    evidence.features(call_form=form)
    if data is None:
        target = grid_target(t)
    else:
        target = data.draw(same_numel_shapes(t.numel()), label="shape")
    r = _reshape(t, target, form)
    assert tuple(r.shape) == resolve_shape(target, t.numel()), "reshape has the wrong shape"
    assert row_major(r) == row_major(t), "reshape elements are not the input's in row-major order"


@pytest.mark.claim("views.reshape-view-when-viewable")
@grid_examples(data=None, requires_grad=False)
@given(spec=tensor_specs(), data=st.data(), requires_grad=st.booleans())
def test_reshape_is_view_iff_viewable(device, spec, data, requires_grad):
    """Grid examples (no data to draw from) reshape to :func:`grid_target`:
    flat, which some layouts can view and others must copy.

    Kills: a reshape that copies a viewable input, or aliases one that
    view() refuses (a change in torch's view-vs-copy choice)."""
    t = _build(spec, device, requires_grad)
    if data is None:
        target = grid_target(t)
    else:
        target = data.draw(same_numel_shapes(t.numel()), label="shape")
    viewable = _attempt(lambda: t.view(target))[1] is not None
    r = t.reshape(target)
    if viewable:
        assert r._is_view() and r._base is root_of(t), "reshape of a viewable input is not a view"
        assert shares_storage(r, t), "reshape of a viewable input does not share storage"
    else:
        assert not shares_storage(r, t), "reshape of a non-viewable input shares storage"
        assert r._base is None, "reshape copy has a _base"


# ----------------------------------------------------------------------------
# EXP-01 / EXP-02: expand


@pytest.mark.claim("views.expand-no-new-memory")
@grid_examples(data=None)
@given(spec=tensor_specs(), data=st.data())
def test_expand_sets_stride_zero_without_allocating(device, spec, data):
    """Grid examples (no data to draw from) expand to :func:`grid_expansion`.

    Kills: an expand that materializes (copies/allocates), or gives a
    non-zero stride to an expanded dimension, or alters kept dimensions."""
    t = spec.build(device)
    storage = t.untyped_storage()
    nbytes = storage.nbytes()
    if data is None:
        target = grid_expansion(tuple(t.shape))
    else:
        (target,) = data.draw(view_op_args("expand", t), label="expand op").args
    e = t.expand(target)
    lead = len(target) - t.dim()
    assert same_storage(e.untyped_storage(), storage), (
        "expand() result is not in its input's storage"
    )
    assert storage.nbytes() == nbytes, "expand() changed the storage size"
    assert e.storage_offset() == t.storage_offset(), "expand() moved the storage offset"
    assert e._is_view() and e._base is root_of(t), "expand() result is not a view of its input"
    for i, size in enumerate(target):
        d = i - lead
        if d < 0:
            if size != 1:
                assert e.stride(i) == 0, f"new dimension {i} has stride {e.stride(i)}, not 0"
        elif size in (-1, t.shape[d]):
            assert e.stride(i) == t.stride(d), f"kept dimension {i} changed stride"
        else:
            assert e.stride(i) == 0, f"expanded dimension {i} has stride {e.stride(i)}, not 0"


@pytest.mark.claim("views.expand-size-rules")
@given(
    spec=tensor_specs(shape=shapes(min_dims=1)),
    data=st.data(),
    case=st.sampled_from(["valid", "leading-minus-one", "non-singleton", "too-few-sizes"]),
)
def test_expand_size_rules(device, spec, data, case):
    """Kills: an expand where -1 does not keep the size, new dims are not
    prepended, or that accepts -1 for a new dimension, resizes a
    non-singleton dimension, or drops dimensions."""
    t = spec.build(device)
    shape = tuple(t.shape)
    if case == "valid":
        (target,) = data.draw(view_op_args("expand", t), label="expand op").args
        lead = len(target) - t.dim()
        e = t.expand(target)
        assert tuple(e.shape[:lead]) == target[:lead], "new dimensions were not prepended"
        for d, size in enumerate(target[lead:]):
            want = shape[d] if size == -1 else size
            assert e.shape[lead + d] == want, f"dimension {d} has size {e.shape[lead + d]}"
    elif case == "leading-minus-one":
        with raises_with(RuntimeError, "isn't allowed in a leading, non-existing dimension"):
            t.expand(-1, *shape)
    elif case == "non-singleton":
        dims = [d for d, s in enumerate(shape) if s != 1]
        assume(dims)
        d = data.draw(st.sampled_from(dims), label="dim")
        target = list(shape)
        target[d] = data.draw(st.sampled_from([s for s in (0, 1, 2, 3, 4) if s != shape[d]]))
        with raises_with(RuntimeError, "must match the existing size"):
            t.expand(*target)
    else:
        with raises_with(RuntimeError, "the number of sizes provided"):
            t.expand(shape[1:])


@st.composite
def _expansions(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """An expand target that repeats some element: a new leading dim of size
    2-3, or a size-1 dimension expanded to 2-3."""
    ones = [d for d, s in enumerate(shape) if s == 1]
    target = list(shape)
    for d in draw(st.sets(st.sampled_from(ones))) if ones else ():
        target[d] = draw(st.integers(2, 3))
    if target == list(shape) or draw(st.booleans()):
        target.insert(0, draw(st.integers(2, 3)))
    return tuple(target)


@pytest.mark.claim("views.expand-aliased-elements")
@pytest.mark.observes("detach", "numpy")
@grid_examples(where=lambda s: math.prod(s.shape) > 0, data=None)
@given(spec=tensor_specs(shape=shapes(min_side=1)), data=st.data())
def test_expanded_elements_share_memory(device, spec, data):
    """Grid examples (no data to draw from) expand to :func:`grid_expansion`.

    Kills: an expand that materializes copies of the repeated element, seen
    as a write to one element not showing in the others and in the source."""
    t = spec.build(device)
    target = grid_expansion(tuple(t.shape)) if data is None else None
    e = t.expand(target or data.draw(_expansions(tuple(t.shape)), label="target"))
    addr = byte_addresses(e)
    i0 = first_index(e)
    before_e, before_t = snapshot(e), snapshot(t)
    write_sentinel(e, i0)
    assert np.array_equal(changed(before_e, e), addr == addr[i0]), (
        "a write to one expanded element did not change exactly the elements sharing its memory"
    )
    assert changed(before_t, t)[first_index(t)], (
        "a write through expand() is not seen in the source"
    )


@pytest.mark.claim("views.expand-clone-before-write")
@pytest.mark.observes("clone", "copy_", "detach", "numpy")
@grid_examples(where=lambda s: math.prod(s.shape) > 0, data=None)
@given(spec=tensor_specs(shape=shapes(min_side=1)), data=st.data())
def test_clone_of_expanded_is_writable(device, spec, data):
    """Grid examples (no data to draw from) expand to :func:`grid_expansion`.

    Kills: a clone of an expanded tensor that keeps stride 0 (aliasing
    elements, so the write is refused or lands in the source)."""
    t = spec.build(device)
    target = grid_expansion(tuple(t.shape)) if data is None else None
    e = t.expand(target or data.draw(_expansions(tuple(t.shape)), label="target"))
    c = e.clone()
    before_e, before_t = snapshot(e), snapshot(t)
    fill = torch.full_like(c, sentinel_for(c))
    c.copy_(fill)
    assert same_bits(c, fill), "clone of an expanded tensor did not take the written values"
    assert not changed(before_t, t).any(), "writing the clone changed the expanded tensor's source"
    assert not changed(before_e, e).any(), "writing the clone changed the expanded tensor"


@pytest.mark.claim("views.expand-inplace-overlap-raises")
@pytest.mark.observes("copy_", "detach", "numpy")
# Issue 29: every non-empty layout family of the expanded source and every
# dtype family, for each op (explicit examples, no data to draw from, expand
# to grid_expansion; bool and wide unsigned dtypes take copy_).
@domain_examples(where=non_empty, data=None, op="add_")
@domain_examples(where=non_empty, data=None, op="mul_")
@domain_examples(where=non_empty, data=None, op="copy_")
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    data=st.data(),
    op=st.sampled_from(["add_", "mul_", "copy_"]),
)
def test_inplace_on_expanded_raises(device, spec, data, op):
    """Kills: in-place arithmetic/copy_ into an expanded tensor that runs
    (silently accumulating into shared memory) instead of raising."""
    # Inputs do not require grad: the in-place-on-a-leaf-view error would fire first.
    t = spec.build(device)
    shape = tuple(t.shape)
    e = t.expand(
        grid_expansion(shape) if data is None else data.draw(_expansions(shape), label="target")
    )
    if spec.dtype not in ARITHMETIC:
        op = "copy_"  # bool and wide unsigned ints have no add_/mul_ kernels
    before = snapshot(t)
    with raises_with(RuntimeError, "more than one element of the written-to tensor refers to"):
        if op == "copy_":
            e.copy_(torch.full_like(e, sentinel_for(e)))
        else:
            getattr(e, op)(2)
    assert not changed(before, t).any(), f"the refused {op} changed memory"


# ----------------------------------------------------------------------------
# FLAT-01 / FLAT-02: flatten

_AT_LEAST_1D = st.one_of(
    shapes(min_dims=1, min_side=1),
    shapes(min_dims=4, max_dims=4, min_side=1, max_side=3),
    shapes(min_dims=1),
)


def _either_sign(data, d: int, n: int, label: str) -> int:
    return d - n if data.draw(st.booleans(), label=f"{label} negative") else d


@pytest.mark.claim("views.flatten-no-dims-returns-input")
@grid_examples(where=lambda s: len(s.shape) >= 1, data=None, requires_grad=False)
@given(spec=tensor_specs(shape=_AT_LEAST_1D), data=st.data(), requires_grad=st.booleans())
def test_flatten_nothing_returns_input(device, spec, data, requires_grad):
    """Grid examples (no data to draw from) flatten the last dimension,
    spelled -1 to -1.

    Kills: a flatten that returns a new view or copy when start_dim ==
    end_dim (also when spelled with negative dims)."""
    t = _build(spec, device, requires_grad)
    n = t.dim()
    if data is None:
        start = end = -1
    else:
        d = data.draw(st.integers(0, n - 1), label="dim")
        start, end = _either_sign(data, d, n, "start"), _either_sign(data, d, n, "end")
    assert torch.flatten(t, start, end) is t, "torch.flatten(t, d, d) is not t itself"
    assert t.flatten(start, end) is t, "t.flatten(d, d) is not t itself"


@pytest.mark.claim("views.flatten-view-when-viewable")
@pytest.mark.observes("detach")
# Issue 29: the grid draws every layout family of at least two dimensions and
# every dtype family (the spec reports both).
@grid_examples(where=lambda s: len(s.shape) >= 2, data=None, requires_grad=False)
@given(spec=tensor_specs(shape=shapes(min_dims=2)), data=st.data(), requires_grad=st.booleans())
def test_flatten_views_when_viewable(device, spec, data, requires_grad):
    """Grid examples (no data to draw from) flatten every dimension.

    Kills: a flatten that copies a viewable input, aliases a non-viewable
    one, or reorders elements."""
    t = _build(spec, device, requires_grad)
    n = t.dim()
    if data is None:
        start, end = 0, n - 1
    else:
        start, end = sorted(
            data.draw(
                st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True),
                label="dims",
            )
        )
    shape = tuple(t.shape)
    flat = (*shape[:start], math.prod(shape[start : end + 1]), *shape[end + 1 :])
    viewable = _attempt(lambda: t.view(flat))[1] is not None
    if data is not None:
        start, end = _either_sign(data, start, n, "start"), _either_sign(data, end, n, "end")
    f = torch.flatten(t, start, end)
    assert tuple(f.shape) == flat, f"flatten has shape {tuple(f.shape)}, expected {flat}"
    assert row_major(f) == row_major(t), "flatten elements are not the input's in row-major order"
    if viewable:
        assert f._is_view() and f._base is root_of(t), "flatten of a viewable input is not a view"
        assert shares_storage(f, t), "flatten of a viewable input does not share storage"
    else:
        assert not shares_storage(f, t), "flatten of a non-viewable input shares storage"


#: The spellings of flatten (issue 29: ``call_form`` of views.flatten-zero-dim):
#: the method ``t.flatten()``, the function ``torch.flatten(t)`` and the
#: function with a keyword argument ``torch.flatten(input=t)``.
FLATTEN_FORMS = ("method", "function", "keyword")

_ZERO_DIM_SPEC = TensorSpec(dtype=torch.float32, base_shape=(), storage=(1.5,))


def _flatten(t: torch.Tensor, form: str) -> torch.Tensor:
    """``flatten(t)`` in the spelling ``form`` (:data:`FLATTEN_FORMS`)."""
    if form == "method":
        return t.flatten()
    if form == "function":
        return torch.flatten(t)
    return torch.flatten(input=t)


@pytest.mark.claim("views.flatten-zero-dim")
@pytest.mark.observes("detach")
@grid_examples(where=lambda s: s.shape == (), requires_grad=False, form="function")
# Issue 29, call_form: every spelling of flatten, by construction.
@value_examples("form", FLATTEN_FORMS, spec=_ZERO_DIM_SPEC, requires_grad=False)
@given(
    spec=tensor_specs(shape=()),
    requires_grad=st.booleans(),
    form=st.sampled_from(FLATTEN_FORMS),
)
def test_flatten_zero_dim_is_1d_view(device, spec, requires_grad, form):
    """Kills: a flatten of a 0-d tensor that copies, returns the input itself,
    or keeps 0 dimensions, in every spelling or in one only (method,
    function, keyword)."""
    t = _build(spec, device, requires_grad)
    evidence.features(call_form=form)
    f = _flatten(t, form)
    assert tuple(f.shape) == (1,), f"flatten of a 0-d tensor has shape {tuple(f.shape)}"
    assert f is not t, "flatten of a 0-d tensor returned the input itself"
    assert f._is_view() and f._base is root_of(t), "flatten of a 0-d tensor is not a view"
    assert shares_storage(f, t), "flatten of a 0-d tensor does not share storage"
    assert f.storage_offset() == t.storage_offset(), "flatten of a 0-d tensor moved the start"
    assert row_major(f) == row_major(t), "flatten of a 0-d tensor changed the value"


# ----------------------------------------------------------------------------
# DET_-01..03: detach_


#: The kinds of non-view tensor detach_ is drawn on (issue 29: ``tensor_kind``
#: of views.detach_-makes-leaf).
DETACH__KINDS = ("plain", "leaf", "non_leaf", "parameter", "subclass", "inference")


def _non_view_of_kind(spec, device, kind: str) -> torch.Tensor:
    """``spec``'s layout as a non-view tensor of ``kind`` (one of
    :data:`DETACH__KINDS`): ``set_`` aliases the built tensor's storage
    without view tracking; ``leaf`` flags it with ``requires_grad_()``,
    ``non_leaf`` multiplies that leaf by 1 (a contiguous non-leaf),
    ``parameter`` wraps it in ``nn.Parameter``, ``subclass`` is
    ``Tensor._make_subclass`` (``as_subclass`` would make a view) and
    ``inference`` is built and aliased inside ``torch.inference_mode()``.
    Kinds that need grad fall back to requires_grad False on integral and
    bool dtypes: report :func:`tensor_kind_of` of the result."""
    grad = spec.dtype in DIFFERENTIABLE

    def alias(v):
        t = torch.empty(0, dtype=v.dtype, device=device)
        return t.set_(v.untyped_storage(), v.storage_offset(), v.size(), v.stride())

    if kind == "inference":
        with torch.inference_mode():
            return alias(spec.build(device))
    t = alias(spec.build(device))
    if kind == "parameter":
        return torch.nn.Parameter(t, requires_grad=grad)
    if kind == "subclass":
        return torch.Tensor._make_subclass(PlainSubclass, t, grad)
    if kind in ("leaf", "non_leaf") and grad:
        t.requires_grad_(True)
        if kind == "non_leaf":
            t = t * 1
    return t


@pytest.mark.claim("views.detach_-makes-leaf")
@pytest.mark.observes("detach", "numpy")
# Issue 29, tensor_kind ("a non-view tensor"): every kind, by construction.
@value_examples("kind", DETACH__KINDS, spec=DOMAIN_SPEC)
@given(spec=tensor_specs(), kind=st.sampled_from(DETACH__KINDS))
def test_detach__makes_a_leaf(device, spec, kind):
    """Each kind of non-view tensor (plain, leaf, non-leaf, ``nn.Parameter``,
    ``__torch_function__`` subclass instance, inference tensor), reported as
    the kind ``detach_`` is called on.

    Kills: a detach_ that returns a different object, keeps requires_grad
    or grad_fn, or touches the storage or values (for every kind or for one
    only)."""
    t = _non_view_of_kind(spec, device, kind)
    assert not t._is_view(), "test bug: detach_ is drawn on a view"
    evidence.features(tensor_kind=tensor_kind_of(t))
    before = snapshot(t)
    storage = t.untyped_storage()
    geometry = (tuple(t.shape), t.stride(), t.storage_offset())
    r = t.detach_()
    assert r is t, "detach_() did not return self"
    assert not t.requires_grad, "detach_() left requires_grad set"
    assert t.grad_fn is None, f"detach_() left grad_fn {t.grad_fn}"
    assert t.is_leaf, "detach_() result is not a leaf"
    assert same_storage(t.untyped_storage(), storage), "detach_() changed the storage"
    assert (tuple(t.shape), t.stride(), t.storage_offset()) == geometry, (
        "detach_() changed geometry"
    )
    assert not changed(before, t).any(), "detach_() changed values"


#: The kinds of view detach_ is drawn on (issue 29: ``tensor_kind`` of
#: views.detach_-views-raise): a view not requiring grad (``plain``), one
#: requiring grad with a grad_fn (``non_leaf``), one made under no_grad of a
#: tensor whose root requires grad (requires grad, no grad_fn: ``leaf``) and a
#: view of a ``__torch_function__`` subclass instance (``subclass``).
DETACH__VIEW_KINDS = ("plain", "leaf", "non_leaf", "subclass")


@pytest.mark.claim("views.detach_-views-raise")
# Issue 29, tensor_kind ("whether or not the view requires grad"): every kind
# of view, by construction; explicit examples (no data to draw from) take a
# stepped slice (canonical_view_op).
@value_examples("kind", DETACH__VIEW_KINDS, spec=DOMAIN_SPEC, data=None)
@given(spec=tensor_specs(), data=st.data(), kind=st.sampled_from(DETACH__VIEW_KINDS))
def test_detach__on_view_raises(device, spec, data, kind):
    """The view is reported as its tensor kind (a kind that needs grad falls
    back to a plain view on integral and bool dtypes).

    Kills: a detach_ that silently detaches (or ignores) a view, whether or
    not it requires grad (for every kind of view or for one only)."""
    if kind == "subclass":
        t = build_kind(spec, device, "subclass")
    else:  # the root requires grad for leaf and non_leaf: a view of it does too
        t = _build(spec, device, kind in ("leaf", "non_leaf"))
    # A view made under no_grad of a tensor whose root requires grad still
    # requires grad, without a grad_fn (kind leaf).
    with torch.no_grad() if kind == "leaf" else contextlib.nullcontext():
        if data is None:
            outs = canonical_view_op("slicing", t).apply(t)
        else:
            _, outs = draw_view(data, t, "view")
    assume(outs)
    v = outs[0]
    evidence.features(tensor_kind=tensor_kind_of(v))
    was = v.requires_grad
    with raises_with(RuntimeError, "Can't detach views in-place"):
        v.detach_()
    assert v.requires_grad == was, "a refused detach_() changed requires_grad"


@pytest.mark.claim("views.detach_-base-keeps-views")
@pytest.mark.observes("backward")
# Issue 29: every differentiable dtype family (explicit examples, no data to
# draw from, slice the base).
@domain_examples(dtypes=DIFFERENTIABLE, data=None)
@given(spec=tensor_specs(requires_grad=True), data=st.data())
def test_detach__on_base_keeps_views_attached(device, spec, data):
    """Kills: a detach_ on a base that also detaches (or re-bases) the views
    already taken from it."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = x * 1  # a non-leaf base
    if data is None:
        op = canonical_view_op("slicing", y)
        outs = op.apply(y)
    else:
        op, outs = draw_view(data, y, "view")
    assume(outs)
    name = op.name
    v = outs[0]
    grad_fn = v.grad_fn
    y.detach_()
    assert not y.requires_grad, "detach_() did not detach the base"
    assert v.requires_grad, "detach_() on the base detached an existing view"
    assert v.grad_fn is grad_fn, "detach_() on the base changed an existing view's grad_fn"
    assert v._base is y, "detach_() on the base changed an existing view's _base"
    if name == "view_as_real" and v.numel() == 0:
        # backward of view_as_real on a zero-size tensor raises "Tensor must have a
        # last dimension with stride 1" with or without detach_ (pinned by
        # views.view-as-real-zero-size-backward-raises): not this claim's business.
        evidence.tally("backward not applicable: view_as_real of a zero-size tensor")
        return
    loss = v.sum()
    (loss.real if loss.is_complex() else loss).backward()
    assert x.grad is not None, "backward through the existing view did not reach the leaf"


@pytest.mark.claim("views.view-as-real-zero-size-backward-raises")
@pytest.mark.observes("backward")
@given(
    dtype=st.sampled_from(COMPLEX),
    shape=st.builds(
        lambda s, i: tuple(0 if k == i % len(s) else n for k, n in enumerate(s)),
        shapes(min_dims=1),
        st.integers(0, 3),
    ),
)
def test_view_as_real_zero_size_backward_raises(device, dtype, shape):
    """Pins a torch bug found by this suite: the backward of view_as_real on a
    zero-size complex tensor receives an expanded (stride-0) gradient and
    view_as_complex refuses it. Kills: any change (a fix should retire the pin)."""
    x = torch.zeros(shape, dtype=dtype, device=device, requires_grad=True)
    r = torch.view_as_real(x * 1)
    with raises_with(RuntimeError, "Tensor must have a last dimension with stride 1"):
        r.sum().backward()


# ----------------------------------------------------------------------------
# STO-01..05: storage identity APIs


@pytest.mark.claim("views.data-ptr-first-element")
@pytest.mark.observes("detach")
# Issue 29: every non-empty layout family ("for views at any offset") and
# every dtype family (element sizes 1 to 16 bytes), by construction; the spec
# reports both. Explicit examples (no data to draw from) check every op of the
# table (canonical_views).
@domain_examples(where=lambda s: math.prod(s.shape) > 0, data=None, requires_grad=False)
@given(spec=tensor_specs(), data=st.data(), requires_grad=st.booleans())
def test_data_ptr_is_first_element(device, spec, data, requires_grad):
    """Kills: a data_ptr that ignores the storage offset or element size, or
    does not point at the element t[0, ..., 0] (for every layout and dtype
    family or for one only)."""
    t = _build(spec, device, requires_grad)
    if data is None:
        outs = tuple(out for _, out in canonical_views(t))
    else:
        _, outs = draw_view(data, t, "view")
    for u in (t, *outs):
        if u.numel() == 0:
            continue  # no first element; data_ptr() is 0 for empty tensors
        storage = u.untyped_storage()
        want = storage.data_ptr() + u.storage_offset() * u.element_size()
        assert u.data_ptr() == want, "data_ptr() != storage address + offset * element size"
        if not u.is_conj():
            at = torch.empty(0, dtype=u.dtype, device=u.device)
            at.set_(storage, u.storage_offset(), (1,), (1,))
            assert row_major(at) == row_major(u[first_index(u)]), (
                "the element at data_ptr() is not t[0, ..., 0]"
            )


@pytest.mark.claim("views.data-ptr-materializes-cow")
@pytest.mark.observes("detach", "numpy")
@grid_examples(where=lambda s: math.prod(s.shape) > 0)
@given(spec=tensor_specs(shape=shapes(min_side=1)))
def test_data_ptr_materializes_lazy_clone(device, spec):
    """Kills: a const_data_ptr that materializes a copy-on-write tensor, or a
    data_ptr that hands out the shared memory for writing."""
    t = spec.build(device)
    before = snapshot(t)
    cap.require(cap.has_api(t, "_lazy_clone"), "Tensor._lazy_clone (copy-on-write, torch 2.3)")
    cap.require(cap.has_api(t, "const_data_ptr"), "Tensor.const_data_ptr in Python (torch 2.13)")
    c = t._lazy_clone()
    assert c.const_data_ptr() == t.const_data_ptr(), "const_data_ptr() materialized the copy"
    c.data_ptr()
    assert c.const_data_ptr() != t.const_data_ptr(), "data_ptr() did not materialize the copy"
    assert torch.equal(c, t), "the materialized copy has different values"
    write_sentinel(c, first_index(c))
    assert not changed(before, t).any(), "a write to the materialized copy reached the source"


@pytest.mark.claim("views.untyped-storage-shared")
@grid_examples(data=None, requires_grad=False)
@given(spec=tensor_specs(), data=st.data(), requires_grad=st.booleans())
def test_views_return_the_same_untyped_storage(device, spec, data, requires_grad):
    """Grid examples (no data to draw from) check every op of the table
    (:func:`canonical_views`).

    Kills: views whose untyped_storage() is a different object (or a copy)
    from the base's."""
    t = _build(spec, device, requires_grad)
    root = root_of(t)
    storage = root.untyped_storage()
    if data is None:  # a grid example: every op of the table
        outs = tuple(out for _, out in canonical_views(t))
    else:
        _, outs = draw_view(data, t, "view")
    for u in (t, *outs):
        s = u.untyped_storage()
        assert s is storage, "a view's untyped_storage() is not its base's object"
        assert (s.data_ptr(), s.nbytes()) == (storage.data_ptr(), storage.nbytes())


_IS_SET_TO_KINDS = {
    "self": True,
    "detach": True,
    "data": True,
    "full-view": True,
    "as_strided-same": True,
    "narrowed": False,
    "unsqueezed": False,
    "clone": False,
    "conj": True,  # a conjugate view of a complex tensor; t itself otherwise
    "drawn-view": None,  # decided by the definition alone
}


def _math_bit(*ts: torch.Tensor) -> bool:
    """Whether any of ``ts`` is a conjugate or negative view (its conj or
    neg bit is set): the math-bit fallback materializes such an argument of
    ``is_set_to`` into a fresh tensor."""
    return any(t.is_conj() or t.is_neg() for t in ts)


@pytest.mark.claim("views.is-set-to")
@pytest.mark.observes("clone", "detach")
@grid_examples(data=None, kind="detach")
@grid_examples(data=None, kind="full-view")
@grid_examples(data=None, kind="unsqueezed")
@grid_examples(data=None, kind="clone")
@grid_examples(data=None, kind="conj")
@given(spec=tensor_specs(), data=st.data(), kind=st.sampled_from(sorted(_IS_SET_TO_KINDS)))
def test_is_set_to(device, spec, data, kind):
    """The grid checks the detach, full-view, unsqueezed, clone and conj
    kinds on every (dtype, layout) pair. Feature ``math_bit_same_layout``: the
    two tensors have the same storage, offset, sizes and strides and one is a
    conjugate or negative view (where torch deviates, see
    views.is-set-to-false-for-math-bit-views).

    Kills: an is_set_to that ignores storage, offset, sizes or strides, or
    is not symmetric."""
    t = spec.build(device)
    if kind == "narrowed":
        assume(t.dim() > 0)
        d = data.draw(st.integers(0, t.dim() - 1), label="dim")
        o = t.narrow(d, min(1, t.shape[d]), max(t.shape[d] - 1, 0))
        if t.shape[d] == 0:
            o = t.unsqueeze(0)  # nothing to narrow away: use a reshaped view
    elif kind == "drawn-view":
        _, outs = draw_view(data, t, "view")
        assume(outs)
        o = outs[0]
    else:
        o = {
            "self": lambda: t,
            "detach": t.detach,
            "data": lambda: t.data,
            "full-view": lambda: t[...],
            "as_strided-same": lambda: t.as_strided(t.size(), t.stride(), t.storage_offset()),
            "unsqueezed": lambda: t.unsqueeze(0),
            "clone": t.clone,
            "conj": t.conj,
        }[kind]()
    same = (
        same_storage(o.untyped_storage(), t.untyped_storage())
        and o.storage_offset() == t.storage_offset()
        and tuple(o.shape) == tuple(t.shape)
        and o.stride() == t.stride()
    )
    want = _IS_SET_TO_KINDS[kind]
    if want is not None:
        assert same == want, f"test bug: {kind} is not a {'same' if want else 'different'} layout"
    evidence.features(math_bit_same_layout=same and _math_bit(t, o))
    why = (
        "False for the same storage, offset, sizes and strides"
        if same
        else "True for another layout"
    )
    assert t.is_set_to(o) == same, f"t.is_set_to({kind}) is {why}"
    assert o.is_set_to(t) == same, f"{kind}.is_set_to(t) is {why}"


@pytest.mark.claim("views.is-set-to-false-for-math-bit-views")
@pytest.mark.observes("clone", "detach")
@grid_examples(dtypes=COMPLEX)
@given(spec=tensor_specs(dtype=COMPLEX, values="all"))
def test_is_set_to_false_for_math_bit_views(device, spec):
    """Characterization (found by this suite, thorough seed 3): ``is_set_to``
    is not among the ops the conjugate/negative math-bit fallback lets through
    (``aten/src/ATen/native/MathBitFallThroughLists.h``), so a conjugate view
    (``t.conj()``) or a negative view (``t.conj().imag``) is materialized into
    a fresh tensor first and ``is_set_to`` returns False, even with the same
    storage, offset, sizes and strides, even against itself. Plain views of
    the same tensor (``t[...]``, ``t.imag``) keep True.

    Kills: an is_set_to that compares the geometry of math-bit views (a fix:
    the pin should then be retired)."""
    t = spec.build(device)
    conj = t.conj()
    neg = conj.imag
    assert conj.is_conj() and neg.is_neg(), "test bug: no math-bit views"
    evidence.features(math_bit=frozenset({"conj", "neg"}))  # every example checks both
    for name, u in (("t.conj()", conj), ("t.conj().imag", neg)):
        assert same_storage(u.untyped_storage(), t.untyped_storage()), f"test bug: {name}"
        assert not u.is_set_to(u), f"{name}.is_set_to(itself) is True"
    assert conj.stride() == t.stride() and conj.storage_offset() == t.storage_offset()
    assert not t.is_set_to(conj), "t.is_set_to(t.conj()) is True"
    assert not conj.is_set_to(t), "t.conj().is_set_to(t) is True"
    assert t.is_set_to(t[...]) and t.imag.is_set_to(t.imag), "is_set_to of a plain view is False"


@pytest.mark.claim("views.base-rules")
@pytest.mark.observes("clone", "detach")
# Issue 29: every non-view layout and dtype as a plain root, every
# differentiable one as a leaf that requires grad.
@grid_examples(where=lambda s: not s.views, data=None, requires_grad=False)
@grid_examples(dtypes=DIFFERENTIABLE, where=lambda s: not s.views, data=None, requires_grad=True)
@given(spec=tensor_specs(views=False), data=st.data(), requires_grad=st.booleans())
def test_base_is_the_root(device, spec, data, requires_grad):
    """Grid examples (no data to draw from) take every op of the table
    (:func:`canonical_views`) of the base, then of its first view.

    Kills: a _base that points at the intermediate view (not the root), or
    that is set for non-views, clones, detach() or .data results."""
    base = _build(spec, device, requires_grad)
    evidence.features(tensor_kind=tensor_kind_of(base))
    if data is None:  # a grid example: every op of the table, then again on the first output
        outs1 = tuple(out for _, out in canonical_views(base))
        assume(outs1)
        outs2 = tuple(out for _, out in canonical_views(outs1[0]))
    else:
        _, outs1 = draw_view(data, base, "first")
        assume(outs1)
        _, outs2 = draw_view(data, outs1[0], "second")
    for v in (*outs1, *outs2):
        assert v._base is base, "a view's (or view of view's) _base is not the root"
    assert base._base is None, "a non-view tensor has a _base"
    for name, u in (("clone", base.clone()), ("detach", base.detach()), ("data", base.data)):
        assert u._base is None, f"{name}() of a base has a _base"
    v = outs1[0]
    for name, u in (("clone", v.clone()), ("detach", v.detach()), ("data", v.data)):
        assert u._base is None, f"{name}() of a view has a _base"
