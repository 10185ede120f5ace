"""Properties of indexing and ``torch.stack`` (claims in ``claims/indexing.toml``):
seed 002's list-of-elements / element-assignment / torch.tensor-vs-stack story, the
Tensor Views note on basic vs advanced indexing, and ``torch.stack`` itself.

Index expressions are drawn per tensor shape; NumPy, applied to the same index on
position arrays, is the oracle for which elements an index selects.
What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    capture_warnings,
    element_bytes,
    raises_with,
    sentinel_for,
    shares_storage,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    DIFFERENTIABLE,
    FLOATING,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    layout_grid,
    shapes,
    tensor_specs,
)
from strategies.domains import domain_examples, layout_kinds, non_empty
from strategies.dtypes import dtype_family

# ------------------------------------------------------------ helpers


def _stack_features(ts: list[torch.Tensor]) -> None:
    """Issue 29: the layout families of the stacked inputs and their dtype family."""
    evidence.features(
        layout=frozenset().union(*(layout_kinds(t) for t in ts)),
        dtype_family=dtype_family(ts[0].dtype),
    )


def _root(t: torch.Tensor) -> torch.Tensor:
    """The root base of a tensor built by ``TensorSpec.build``."""
    return t._base if t._is_view() else t


def _positions(shape, np_index) -> np.ndarray:
    """Row-major logical positions (into ``t.reshape(-1)``) that ``np_index`` selects."""
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[np_index]


def _stored(value, like: torch.Tensor) -> torch.Tensor:
    """``value`` as a 0-d tensor of ``like``'s dtype and device: the sentinel
    exactly as a write stores it (complex64 cannot hold every Python complex,
    and ``t == python_complex`` compares without rounding the scalar first)."""
    return torch.tensor(value, dtype=like.dtype, device=like.device)


def _assert_selects(r: torch.Tensor, a: torch.Tensor, positions: np.ndarray, claim: str) -> None:
    """``r`` holds, bit for bit, the elements of ``a`` at the row-major
    ``positions`` (NumPy's selection), in their order: checked on raw bytes
    (:func:`~conformance.checks.element_bytes`), so no torch indexing is
    involved in the oracle and NaN, -0.0 and bfloat16 compare exactly."""
    assert tuple(r.shape) == positions.shape, (
        f"{claim}: shape {tuple(r.shape)} != {positions.shape}"
    )
    got, want = element_bytes(r), element_bytes(a)[positions.reshape(-1)]
    bad = np.flatnonzero((got != want).any(axis=1))
    assert bad.size == 0, (
        f"{claim}: {bad.size} of {got.shape[0]} elements differ bit for bit, first at flat "
        f"index {int(bad[0]) if bad.size else -1}"
    )


def _real_sum(t: torch.Tensor) -> torch.Tensor:
    s = t.sum()
    return s.real if s.is_complex() else s


@st.composite
def basic_indices(draw, shape: tuple[int, ...]) -> tuple:
    """A basic index for ``shape``: ints, positive-step slices, None and at most one
    Ellipsis, in any order NumPy accepts."""
    ndim = len(shape)
    ellipsis = draw(st.booleans())
    n_prefix = draw(st.integers(0, ndim))
    n_suffix = draw(st.integers(0, ndim - n_prefix)) if ellipsis else 0

    def item(dim):
        n = shape[dim]
        kinds = ["slice"] + (["int"] if n > 0 else [])
        if draw(st.sampled_from(kinds)) == "int":
            return draw(st.integers(-n, n - 1))
        bound = st.one_of(st.none(), st.integers(-n - 1, n + 1))
        return slice(draw(bound), draw(bound), draw(st.one_of(st.none(), st.integers(1, 3))))

    items = [item(d) for d in range(n_prefix)]
    if ellipsis:
        items.append(Ellipsis)
        items += [item(d) for d in range(ndim - n_suffix, ndim)]
    for _ in range(draw(st.integers(0, 2))):  # None may go anywhere
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


@st.composite
def advanced_indices(draw, shape: tuple[int, ...]) -> tuple:
    """An advanced index for ``shape`` (at least 1-d): full slices up to a dim ``p``,
    then a boolean mask over dims p.., an integer list, an integer array of 1-2 dims,
    or two integer lists on adjacent dims. Masks and integer arrays are NumPy arrays
    (the device-independent description: :func:`_on` turns them into tensors on the
    test's device). 0-d integer tensors are left out: torch treats them as basic
    indices (see zero-dim claims)."""
    ndim = len(shape)
    p = draw(st.integers(0, ndim - 1))
    prefix = (slice(None),) * p
    kinds = ["mask"]
    if shape[p] > 0:
        kinds += ["list", "tensor"]
        if p + 1 < ndim and shape[p + 1] > 0:
            kinds.append("pair")
    kind = draw(st.sampled_from(kinds))
    if kind == "mask":
        k = draw(st.integers(1, ndim - p))
        mshape = shape[p : p + k]
        bits = draw(
            st.lists(st.booleans(), min_size=int(np.prod(mshape)), max_size=int(np.prod(mshape)))
        )
        return prefix + (np.array(bits, dtype=bool).reshape(mshape),)
    n = shape[p]
    ints = st.integers(-n, n - 1)
    if kind == "list":
        return prefix + (draw(st.lists(ints, min_size=1, max_size=4)),)
    if kind == "tensor":
        ishape = draw(shapes(min_dims=1, max_dims=2, max_side=3))
        vals = draw(st.lists(ints, min_size=int(np.prod(ishape)), max_size=int(np.prod(ishape))))
        return prefix + (np.array(vals, dtype=np.int64).reshape(ishape),)
    m = shape[p + 1]
    length = draw(st.integers(1, 4))
    first = draw(st.lists(ints, min_size=length, max_size=length))
    second = draw(st.lists(st.integers(-m, m - 1), min_size=length, max_size=length))
    return prefix + (first, second)


def _on(index: tuple, device) -> tuple:
    """``index`` with its NumPy arrays (masks, integer arrays) as tensors on ``device``."""
    return tuple(torch.from_numpy(i.copy()).to(device) if isinstance(i, np.ndarray) else i
                 for i in index)  # fmt: skip


@st.composite
def _indexed(draw, specs: st.SearchStrategy, index_of) -> tuple:
    """``(spec, index)``: a spec and an index drawn for its shape by ``index_of``."""
    spec = draw(specs)
    return spec, draw(index_of(spec.shape), label="index")


# ------------------------------------------------------------ the dtype x layout grid
#
# Every aliasing claim (views, copies, shared or unshared memory, visible writes)
# also runs one explicit example per (dtype, layout) of the strategies' layout
# grid: 100 random draws cover that product unevenly, so a torch wrong for one
# dtype on one layout (a fast path gone wrong) could slip through them. Where an
# index or row choice depends on the spec's shape, the grid uses canonical ones.


def _overlaps(spec: TensorSpec) -> bool:
    return any(v[0] == "expand" for v in spec.views)


def _has_rows(spec: TensorSpec) -> bool:
    """At least 1-d and non-empty."""
    return len(spec.shape) >= 1 and math.prod(spec.shape) > 0


def index_grid(param: str = "case", *, dtypes=ALL_DTYPES, values="all", where=None,
               make=None, **fixed):  # fmt: skip
    """Like :func:`strategies.grid_examples`, with the example's value built
    per spec: ``make(spec)`` returns a list of values for ``param`` (an index
    pairing, a list of specs), each an explicit example; by default the spec
    itself. ``where`` keeps the specs a claim covers."""

    def decorate(fn):
        for spec in layout_grid(dtypes, values=values):
            if where is not None and not where(spec):
                continue
            for value in make(spec) if make is not None else [spec]:
                fn = example(**{param: value}, **fixed)(fn)
        return fn

    return decorate


def _canonical_basic(spec: TensorSpec) -> list[tuple]:
    """Two basic indices for ``spec``'s shape: an integer then stepped slices,
    and an offset slice with None and Ellipsis."""
    shape = spec.shape
    if not shape:
        return [(spec, (None,)), (spec, (Ellipsis, None))]
    first = (0,) if shape[0] else (slice(None),)
    return [
        (spec, first + (slice(None, None, 2),) * (len(shape) - 1)),
        (spec, (slice(1, None), None, Ellipsis)),
    ]


def _canonical_advanced(spec: TensorSpec) -> list[tuple]:
    """Advanced indices for ``spec``'s (1-d or more) shape: an alternating mask
    over dim 0, an integer list with a repeat and a negative entry, and a 2-d
    integer array after a full slice (when dim 1 is not empty)."""
    shape = spec.shape
    n = shape[0]
    out = [(spec, (np.arange(n) % 2 == 0,))]
    if n:
        out.append((spec, ([n - 1, 0, -1],)))
    if len(shape) >= 2 and shape[1]:
        m = shape[1]
        out.append((spec, (slice(None), np.array([[0, m - 1], [-1, 0]], dtype=np.int64))))
    return out


def _to_1d(spec: TensorSpec) -> TensorSpec:
    """The spec narrowed to 1-d by selecting index 0 of every dim but one: the
    first expanded dim (stride 0, size > 1) when there is one, else the last, so
    the 1-d tensor keeps the stride pattern (stepped, offset, stride 0) of the
    grid layout (an expanded leading dim narrowed away left it contiguous, and
    the expanded value of the claim's domain was drawn only by chance)."""
    t = spec.build("cpu")
    expanded = [d for d in range(t.dim()) if t.stride(d) == 0 and t.shape[d] > 1]
    keep = expanded[0] if expanded else t.dim() - 1
    selects = tuple(("select", d, 0) for d in reversed(range(t.dim())) if d != keep)
    return dataclasses.replace(spec, views=spec.views + selects)


# ------------------------------------------------------------ seed 002

#: Rows of ``a`` a list takes, modulo ``a.shape[0]`` (sides are at most 4), and the
#: position in that list of the row written afterwards (modulo its length).
_ROWS = st.lists(st.integers(0, 3), min_size=1, max_size=6)
_AT = st.integers(0, 5)


def _rows(a: torch.Tensor, rows: list[int], at: int) -> tuple[list[int], int]:
    idx = [r % a.shape[0] for r in rows]
    return idx, idx[at % len(idx)]


@pytest.mark.claim("indexing.element-list-sees-writes")
@pytest.mark.observes("tensor")
@index_grid("spec", where=lambda s: _has_rows(s) and not _overlaps(s), rows=[0, 1, 0], at=0)
@given(
    spec=tensor_specs(
        shape=shapes(min_dims=1, min_side=1), views=NON_OVERLAPPING_VIEWS, values="all"
    ),
    rows=_ROWS,
    at=_AT,
)
def test_element_list_sees_later_writes(device, spec, rows, at):
    """Kills: a[i] that returns a snapshot (copy) instead of a view of row i (for
    some dtype or layout: the grid tries each)."""
    # No expand views: a[j] = v into a row whose elements alias each other raises.
    a = spec.build(device)
    idx, j = _rows(a, rows, at)
    b = [a[i] for i in idx]
    value = sentinel_for(a[j])
    a[j] = value
    for k, i in enumerate(idx):
        if i == j:
            want = _stored(value, b[k]).expand(b[k].shape)
            assert_same_bits(b[k], want, "list element a[i] did not see a later write to a")
        else:
            assert_same_bits(b[k], a[i], "list element a[i] does not show a's row i")


@pytest.mark.claim("indexing.element-list-sees-optimizer-step")
@pytest.mark.observes("backward", "detach", "to")
@index_grid(
    "spec", dtypes=(torch.float32, torch.float64),
    where=lambda s: _has_rows(s) and not _overlaps(s), rows=[0, 1, 0], weight=0,
)  # fmt: skip
@given(
    spec=tensor_specs(
        dtype=(torch.float32, torch.float64),
        shape=shapes(min_dims=1, max_dims=2, min_side=1),
        views=NON_OVERLAPPING_VIEWS,
        values="all",  # the step's arithmetic may overflow or keep NaN: only sharing matters
    ),
    rows=_ROWS,
    weight=st.integers(0, 2),
)
def test_element_list_sees_optimizer_step(device, spec, rows, weight):
    """The parameter may itself be a strided view (a leaf flagged with
    requires_grad_()). Kills: indexing a parameter that snapshots it, so the
    kept elements go stale after optimizer.step()."""
    a = spec.build(device, requires_grad=True, leaf=True)
    idx, _ = _rows(a, rows, 0)
    b = [a[i] for i in idx]
    c = torch.stack(b)
    # Upstream weights 1, 2, 3, ... (cycled, shifted by ``weight``).
    w = (torch.arange(c.numel(), device=device) + weight) % 3 + 1
    (c * w.to(a.dtype).reshape(c.shape)).sum().backward()
    torch.optim.SGD([a], lr=0.5).step()
    for k, i in enumerate(idx):
        assert_same_bits(
            b[k], a.detach()[i], "list element a[i] does not show the optimizer's update of a"
        )


@pytest.mark.claim("indexing.element-assignment-copies")
@pytest.mark.observes("clone")
@index_grid("spec", where=lambda s: _has_rows(s) and not _overlaps(s), rows=[0, 1, 0], at=0)
@given(
    spec=tensor_specs(
        shape=shapes(min_dims=1, min_side=1), views=NON_OVERLAPPING_VIEWS, values="all"
    ),
    rows=_ROWS,
    at=_AT,
)
def test_element_assignment_copies(device, spec, rows, at):
    """Kills: b[k] = a[i] that makes b alias a's memory (or copy lazily on write),
    or copies other values than a[i]'s (e.g. reading a strided row as if it were
    contiguous)."""
    a = spec.build(device)
    idx, j = _rows(a, rows, at)
    b = torch.zeros((len(idx), *a.shape[1:]), dtype=a.dtype, device=device)
    for k, i in enumerate(idx):
        b[k] = a[i]
    before = spec.build(device)  # a's values, built independently
    for k, i in enumerate(idx):
        assert_same_bits(b[k], before[i], "b[k] = a[i] did not copy a[i]'s values")
    snapshot = b.clone()
    a[j] = sentinel_for(a[j])
    assert_same_bits(b, snapshot, "a write to a is seen in b after b[k] = a[i]")


@pytest.mark.claim("indexing.tensor-of-element-list-cuts-graph")
@pytest.mark.observes("backward", "tensor")
@index_grid(
    "spec", dtypes=DIFFERENTIABLE, values="finite", where=_has_rows,
    make=lambda s: [_to_1d(s)], rows=[0, 1, 0],
)  # fmt: skip
@given(
    # "finite", not "all": torch.tensor(list of 0-d tensors) reads each element as a
    # Python scalar, which does not keep a float16/bfloat16 NaN's sign and payload
    # (e.g. bfloat16 0xFFFF becomes 0x7FC0). Every finite value class is compared.
    spec=tensor_specs(
        requires_grad=True, shape=shapes(min_dims=1, max_dims=1, min_side=1), values="finite"
    ),
    rows=_ROWS,
)
def test_tensor_of_element_list_cuts_the_graph(device, spec, rows):
    """The grid's layouts narrowed to 1-d (their last dim's strides kept).

    Kills: torch.tensor(list of grad-requiring 0-d tensors) that keeps their graph
    (as torch.stack does), or loses their values (-0.0, subnormals, extremes,
    compared bit for bit)."""
    a = spec.build(device, requires_grad=True, leaf=True)
    idx, _ = _rows(a, rows, 0)
    b = [a[i] for i in idx]
    with capture_warnings():  # "Converting a tensor with requires_grad=True to a scalar"
        c = torch.tensor(b, device=device)
    assert_same_bits(c, spec.build(device)[idx], "torch.tensor(list of a[i]) lost the values")
    assert not c.requires_grad and c.grad_fn is None, "torch.tensor(list of a[i]) kept the graph"
    with raises_with(RuntimeError, "does not require grad"):
        _real_sum(c).backward()
    assert a.grad is None, "a received a gradient through torch.tensor(list of a[i])"


@pytest.mark.claim("indexing.stack-of-element-list-keeps-graph")
@pytest.mark.observes("backward", "tensor", "to")
# Issue 29: every non-empty layout (at least 1-d) and differentiable family of
# a; explicit examples (no data to draw from) stack a[0], a[-1], a[0] with
# upstream gradients 1, -2, 3, ... (a repeat accumulates).
@domain_examples(
    dtypes=DIFFERENTIABLE, where=lambda s: non_empty(s) and len(s.shape) >= 1, data=None
)
@given(
    spec=tensor_specs(requires_grad=True, shape=shapes(min_dims=1, max_dims=3, min_side=1)),
    data=st.data(),
)
def test_stack_of_element_list_gradients_reach_a(device, spec, data):
    """Kills: a stack that cuts the graph, or a backward that drops or does not
    accumulate gradients for repeated elements."""
    a = spec.build(device, requires_grad=True, leaf=True)
    n = a.shape[0]
    if data is None:
        idx = [0, n - 1, 0]
    else:
        idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6), label="idx")
    c = torch.stack([a[i] for i in idx])
    assert c.grad_fn is not None, "torch.stack(list of a[i]) has no grad_fn"
    # Small integer upstream gradients: every sum below is exact, even in float16.
    m = c.numel()
    if data is None:
        re = [(k % 7) - 3 for k in range(m)]
    else:
        re = data.draw(st.lists(st.integers(-3, 3), min_size=m, max_size=m), label="g")
    g64 = torch.tensor(re, dtype=torch.float64).reshape(c.shape)
    if a.dtype.is_complex:
        if data is None:
            im = [((k * 3) % 7) - 3 for k in range(m)]
        else:
            im = data.draw(st.lists(st.integers(-3, 3), min_size=m, max_size=m), label="g_imag")
        g64 = torch.complex(g64, torch.tensor(im, dtype=torch.float64).reshape(c.shape))
    c.backward(g64.to(device=device, dtype=a.dtype))
    expected = [torch.zeros_like(g64[0]) for _ in range(n)]  # oracle: per-row sums
    for k, i in enumerate(idx):
        expected[i] = expected[i] + g64[k]
    expected = torch.stack(expected)
    assert a.grad is not None, "no gradient reached a through torch.stack"
    got = a.grad.cpu().to(expected.dtype)
    assert torch.equal(got, expected), "gradient through torch.stack(list of a[i]) is wrong"


# ------------------------------------------------------------ Tensor Views note


@pytest.mark.claim("indexing.basic-indexing-is-view")
@pytest.mark.observes("tensor")
@index_grid(make=_canonical_basic)
@given(case=_indexed(tensor_specs(values="all"), basic_indices))
def test_basic_indexing_returns_a_view(device, case):
    """Kills: basic indexing (some combination of ints, slices, None, Ellipsis) that
    copies, or a view whose _base is not the root base."""
    spec, index = case
    a = spec.build(device)
    r = a[index]
    assert r._is_view(), f"a[{index!r}] is not a view"
    assert r._base is _root(a), f"a[{index!r}]._base is not the root base"
    assert shares_storage(r, a), f"a[{index!r}] does not share storage with a"
    _assert_selects(
        r, a, _positions(tuple(a.shape), index), f"a[{index!r}] does not hold a's elements"
    )
    if r.numel():
        pos = int(_positions(tuple(a.shape), index).reshape(-1)[0])
        value = sentinel_for(r)
        r[(0,) * r.dim()] = value
        # Bit-exact against the sentinel as stored in a's dtype (it may round).
        _assert_selects(
            _stored(value, a), a, np.array(pos), f"a write through a[{index!r}] is not in a"
        )


@pytest.mark.claim("indexing.advanced-indexing-is-copy")
@pytest.mark.observes("to")
@index_grid(where=lambda s: len(s.shape) >= 1, make=_canonical_advanced)
@given(case=_indexed(tensor_specs(shape=shapes(min_dims=1), values="all"), advanced_indices))
def test_advanced_indexing_returns_a_copy(device, case):
    """The selected values are checked bit for bit (every value class drawn)
    against NumPy's selection of positions, on raw bytes.

    Kills: advanced indexing (masks, integer lists/tensors) that returns a view or
    aliases the source, or selects (or alters) other elements than NumPy."""
    spec, index = case
    # CUDA has no uint16/32/64 index kernel
    cap.require_kernel("advanced indexing", spec.dtype, device)
    a = spec.build(device)
    r = a[_on(index, device)]
    assert not r._is_view() and r._base is None, "advanced indexing returned a view"
    assert not shares_storage(r, a), "advanced indexing result shares storage with a"
    _assert_selects(
        r,
        a,
        _positions(tuple(a.shape), index),
        "advanced indexing selected other values than NumPy",
    )
    if r.numel():
        r.fill_(sentinel_for(r))
        assert_same_bits(
            a, spec.build(device), "a write to an advanced-indexing result is seen in a"
        )


def _assignable(spec: TensorSpec) -> bool:
    return len(spec.shape) >= 1 and not _overlaps(spec)


#: The dtypes index assignment has kernels for (issue 29: every dtype family).
_ASSIGNABLE_DTYPES = (torch.bool, *ARITHMETIC)


@pytest.mark.claim("indexing.assignment-is-in-place")
@pytest.mark.observes("tensor", "to")
# ARITHMETIC and bool: uint16/32/64 have no masked_fill/index_put kernels (a
# kernel gap, not a semantic question).
@index_grid(dtypes=_ASSIGNABLE_DTYPES, where=_assignable, make=_canonical_basic)
@index_grid(dtypes=_ASSIGNABLE_DTYPES, where=_assignable, make=_canonical_advanced)
@given(
    case=st.one_of(
        _indexed(
            tensor_specs(dtype=_ASSIGNABLE_DTYPES, shape=shapes(min_dims=1),
                         views=NON_OVERLAPPING_VIEWS,
                         values="all"),
            index_of,
        )
        for index_of in (basic_indices, advanced_indices)
    )
)  # fmt: skip
def test_index_assignment_is_in_place(device, case):
    """Kills: a[idx] = v that rebinds a to new memory, skips the version bump, writes
    other positions than NumPy's, or (through a view) misses the base."""
    # No expand views: assigning into aliased elements writes several positions at once.
    spec, index = case
    a = spec.build(device)
    root = _root(a)
    shape = tuple(a.shape)
    value = sentinel_for(a)
    # Oracle on raw bytes: a's elements, with the sentinel's bytes at the
    # positions NumPy's indexing selects (so NaN and -0.0 elements compare too).
    expected = element_bytes(a).copy()
    expected[_positions(shape, index).reshape(-1)] = element_bytes(_stored(value, a))
    ptr, stride, version = a.data_ptr(), a.stride(), root._version
    a[_on(index, device)] = value
    assert a.data_ptr() == ptr and a.stride() == stride, "index assignment moved a"
    assert shares_storage(a, root), "index assignment detached a from its base"
    assert root._version > version, "index assignment did not bump the version counter"
    assert np.array_equal(element_bytes(a), expected), "index assignment wrote other positions"


def _clamp(i: int, n: int) -> int:
    """``i`` clamped into the valid index range ``[-n, n - 1]`` of a side ``n``."""
    return max(-n, min(n - 1, i))


_ZERO_DIM_I = st.integers(-4, 3)


@pytest.mark.claim("indexing.zero-dim-index-tensor-follows-numpy")
@pytest.mark.observes("tensor")
@index_grid("spec", where=_has_rows, i=-1)
@index_grid("spec", where=_has_rows, i=0)
@given(spec=tensor_specs(shape=shapes(min_dims=1, min_side=1), values="all"), i=_ZERO_DIM_I)
def test_zero_dim_index_tensor_gives_copy_like_numpy(device, spec, i):
    """The Tensor Views note as stated for a 0-d integer index: NumPy selects
    a[i] as an advanced index (the same elements, in a copy). The values are
    checked first, bit for bit against NumPy's selection, so a torch that
    breaks them is a new failure, not the recorded one.
    Deviates: torch treats it as an integer and returns a view (recorded in
    expectations)."""
    a = spec.build(device)
    i = _clamp(i, a.shape[0])
    r = a[torch.tensor(i, device=device)]
    _assert_selects(
        r, a, _positions(tuple(a.shape), (np.array(i),)),
        "a[0-d integer tensor] selected other values than NumPy",
    )  # fmt: skip
    assert not r._is_view(), "a[0-d integer tensor] is a view (NumPy copies)"


@pytest.mark.claim("indexing.zero-dim-int-tensor-index-is-view")
@pytest.mark.observes("tensor")
@index_grid("spec", where=_has_rows, i=-1)
@index_grid("spec", where=_has_rows, i=0)
@given(spec=tensor_specs(shape=shapes(min_dims=1, min_side=1), values="all"), i=_ZERO_DIM_I)
def test_zero_dim_int_tensor_index_acts_as_int(device, spec, i):
    """Pins the select behaviour. Kills: a change of a[torch.tensor(i)] either way
    (a copy, other elements, another grad_fn), for some dtype or layout."""
    a = spec.build(device)
    i = _clamp(i, a.shape[0])
    r = a[torch.tensor(i, device=device)]
    assert r._is_view() and r._base is _root(a), "a[0-d integer tensor] is not a view"
    assert shares_storage(r, a), "a[0-d integer tensor] does not share a's storage"
    _assert_selects(r, a, _positions(tuple(a.shape), (i,)), "a[0-d integer tensor] != a[i]")
    if a.dtype in DIFFERENTIABLE:
        g = spec.build(device, requires_grad=True, leaf=True)[torch.tensor(i, device=device)]
        assert type(g.grad_fn).__name__.startswith("SelectBackward"), (
            f"a[0-d integer tensor] has grad_fn {type(g.grad_fn).__name__}"
        )


# ------------------------------------------------------------ torch.stack


@st.composite
def _same_shape_specs(draw, requires_grad=False, values="bounded"):
    dtype = draw(st.sampled_from(DIFFERENTIABLE if requires_grad else FLOATING + (torch.int32,)))
    shape = draw(shapes(max_dims=3))
    return draw(
        st.lists(
            tensor_specs(dtype=dtype, shape=shape, requires_grad=requires_grad, values=values),
            min_size=1,
            max_size=4,
        )
    )


def _stack_lists(spec: TensorSpec) -> list[list[TensorSpec]]:
    """A single input, and two inputs (the spec and the same layout with other values)."""
    other = dataclasses.replace(spec, storage=tuple(reversed(spec.storage)))
    return [[spec], [spec, other]]


@pytest.mark.claim("indexing.stack-new-memory")
@index_grid("specs", make=_stack_lists, dim=0)
@index_grid("specs", make=_stack_lists, dim=-1)
@given(specs=_same_shape_specs(values="all"), dim=st.integers(-5, 4))
def test_stack_new_memory_and_values(device, specs, dim):
    """Values are compared bit for bit with independent builds of the inputs,
    over every value class; every dtype and layout of the grid, one input and two.

    Kills: a stack that aliases an input (e.g. for a single input), misplaces
    inputs along the new dimension, or alters values."""
    ts = [s.build(device) for s in specs]
    _stack_features(ts)
    d = ts[0].dim()
    dim = max(-(d + 1), min(d, dim))
    r = torch.stack(ts, dim)
    expected = list(ts[0].shape)
    expected.insert(dim % (d + 1), len(ts))
    assert list(r.shape) == expected, "stack result has the wrong shape"
    for i, t in enumerate(ts):
        assert_same_bits(
            r.select(dim, i), specs[i].build(device), f"stack(...).select(dim, {i}) != input {i}"
        )
        assert not shares_storage(r, t), f"stack result shares storage with input {i}"


@pytest.mark.claim("indexing.stack-new-memory")
@pytest.mark.observes("backward", "tensor", "to")
@given(specs=_same_shape_specs(requires_grad=True), data=st.data())
def test_stack_gradients_are_slices(device, specs, data):
    """Kills: a stack without grad_fn, or a backward that routes gradient slices to the
    wrong inputs."""
    ts = [s.build(device, requires_grad=True, leaf=True) for s in specs]
    _stack_features(ts)
    d = ts[0].dim()
    dim = data.draw(st.integers(-(d + 1), d), label="dim")
    r = torch.stack(ts, dim)
    assert r.grad_fn is not None, "stack of inputs requiring grad has no grad_fn"
    m = r.numel()
    vals = data.draw(st.lists(st.integers(-3, 3), min_size=m, max_size=m), label="g")
    g = torch.tensor(vals, dtype=torch.float64).reshape(r.shape).to(device=device, dtype=r.dtype)
    r.backward(g)
    for i, t in enumerate(ts):
        assert t.grad is not None, f"no gradient reached stack input {i}"
        assert_same_bits(
            t.grad,
            g.select(dim, i),
            f"gradient of stack input {i} is not the matching slice of the upstream gradient",
        )


@pytest.mark.claim("indexing.stack-size-mismatch-raises")
# Issue 29: one dtype of each family, explicitly.
@example(first=(2,), second=(3,), position=0, dtype=torch.bool)
@example(first=(2,), second=(3,), position=1, dtype=torch.int32)
@example(first=(2,), second=(3,), position=2, dtype=torch.uint8)
@example(first=(2,), second=(3,), position=0, dtype=torch.bfloat16)
@example(first=(2,), second=(3,), position=1, dtype=torch.float64)
@example(first=(2,), second=(3,), position=2, dtype=torch.complex64)
@given(
    first=shapes(max_dims=3),
    second=shapes(max_dims=3),
    position=st.integers(0, 2),
    dtype=st.sampled_from(ALL_DTYPES),
)
def test_stack_size_mismatch_raises(device, first, second, position, dtype):
    """Every dtype: the size check is dtype-independent.

    Kills: a stack that broadcasts or pads inputs of different sizes."""
    if first == second:
        second = (*second, 2)
    ts = [torch.zeros(first, dtype=dtype, device=device) for _ in range(2)]
    ts.insert(position, torch.zeros(second, dtype=dtype, device=device))
    with raises_with(RuntimeError, "stack expects each tensor to be equal size"):
        torch.stack(ts)
