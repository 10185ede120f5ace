"""Properties of indexing and ``torch.stack`` (claims in ``claims/indexing.toml``):
seed 002's list-of-elements / element-assignment / torch.tensor-vs-stack story, the
Tensor Views note on basic vs advanced indexing, and ``torch.stack`` itself.

Index expressions are drawn per tensor shape; NumPy, applied to the same index on
position arrays, is the oracle for which elements an index selects.
What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

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
    shapes,
    tensor_specs,
)

# ------------------------------------------------------------ helpers


def _root(t: torch.Tensor) -> torch.Tensor:
    """The root base of a tensor built by ``TensorSpec.build``."""
    return t._base if t._is_view() else t


def _np_index(index: tuple) -> tuple:
    """The same index with tensors replaced by NumPy arrays."""
    return tuple(i.cpu().numpy() if isinstance(i, torch.Tensor) else i for i in index)


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
def advanced_indices(draw, shape: tuple[int, ...], device) -> tuple:
    """An advanced index for ``shape`` (at least 1-d): full slices up to a dim ``p``,
    then a boolean mask over dims p.., an integer list, an integer tensor of 1-2 dims,
    or two integer lists on adjacent dims. 0-d integer tensors are left out: torch
    treats them as basic indices (see zero-dim claims)."""
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
        mask = torch.tensor(bits, dtype=torch.bool, device=device).reshape(mshape)
        return prefix + (mask,)
    n = shape[p]
    ints = st.integers(-n, n - 1)
    if kind == "list":
        return prefix + (draw(st.lists(ints, min_size=1, max_size=4)),)
    if kind == "tensor":
        ishape = draw(shapes(min_dims=1, max_dims=2, max_side=3))
        vals = draw(st.lists(ints, min_size=int(np.prod(ishape)), max_size=int(np.prod(ishape))))
        return prefix + (torch.tensor(vals, dtype=torch.int64, device=device).reshape(ishape),)
    m = shape[p + 1]
    length = draw(st.integers(1, 4))
    first = draw(st.lists(ints, min_size=length, max_size=length))
    second = draw(st.lists(st.integers(-m, m - 1), min_size=length, max_size=length))
    return prefix + (first, second)


# ------------------------------------------------------------ seed 002


@pytest.mark.claim("indexing.element-list-sees-writes")
@given(
    spec=tensor_specs(
        shape=shapes(min_dims=1, min_side=1), views=NON_OVERLAPPING_VIEWS, values="all"
    ),
    data=st.data(),
)
def test_element_list_sees_later_writes(device, spec, data):
    """Kills: a[i] that returns a snapshot (copy) instead of a view of row i."""
    # No expand views: a[j] = v into a row whose elements alias each other raises.
    a = spec.build(device)
    n = a.shape[0]
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6), label="idx")
    j = data.draw(st.sampled_from(idx), label="j")
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
@given(
    spec=tensor_specs(
        dtype=(torch.float32, torch.float64),
        shape=shapes(min_dims=1, max_dims=2, min_side=1),
        views=False,
        values="all",  # the step's arithmetic may overflow or keep NaN: only sharing matters
    ),
    data=st.data(),
)
def test_element_list_sees_optimizer_step(device, spec, data):
    """Kills: indexing a parameter that snapshots it, so the kept elements go stale after
    optimizer.step()."""
    a = spec.build(device, requires_grad=True, leaf=True)
    n = a.shape[0]
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5), label="idx")
    b = [a[i] for i in idx]
    c = torch.stack(b)
    weights = data.draw(st.lists(st.integers(1, 3), min_size=c.numel(), max_size=c.numel()))
    g = torch.tensor(weights, dtype=a.dtype, device=device).reshape(c.shape)
    (c * g).sum().backward()
    torch.optim.SGD([a], lr=0.5).step()
    for k, i in enumerate(idx):
        assert_same_bits(
            b[k], a.detach()[i], "list element a[i] does not show the optimizer's update of a"
        )


@pytest.mark.claim("indexing.element-assignment-copies")
@given(
    spec=tensor_specs(
        shape=shapes(min_dims=1, min_side=1), views=NON_OVERLAPPING_VIEWS, values="all"
    ),
    data=st.data(),
)
def test_element_assignment_copies(device, spec, data):
    """Kills: b[k] = a[i] that makes b alias a's memory (or copy lazily on write)."""
    a = spec.build(device)
    n = a.shape[0]
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6), label="idx")
    j = data.draw(st.sampled_from(idx), label="j")
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
@given(
    # "finite", not "all": torch.tensor(list of 0-d tensors) reads each element as a
    # Python scalar, which does not keep a float16/bfloat16 NaN's sign and payload
    # (e.g. bfloat16 0xFFFF becomes 0x7FC0). Every finite value class is compared.
    spec=tensor_specs(
        requires_grad=True, shape=shapes(min_dims=1, max_dims=1, min_side=1), values="finite"
    ),
    data=st.data(),
)
def test_tensor_of_element_list_cuts_the_graph(device, spec, data):
    """Kills: torch.tensor(list of grad-requiring 0-d tensors) that keeps their graph
    (as torch.stack does), or loses their values (-0.0, subnormals, extremes,
    compared bit for bit)."""
    a = spec.build(device, requires_grad=True, leaf=True)
    n = a.shape[0]
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6), label="idx")
    b = [a[i] for i in idx]
    with capture_warnings():  # "Converting a tensor with requires_grad=True to a scalar"
        c = torch.tensor(b, device=device)
    assert_same_bits(c, spec.build(device)[idx], "torch.tensor(list of a[i]) lost the values")
    assert not c.requires_grad and c.grad_fn is None, "torch.tensor(list of a[i]) kept the graph"
    with raises_with(RuntimeError, "does not require grad"):
        _real_sum(c).backward()
    assert a.grad is None, "a received a gradient through torch.tensor(list of a[i])"


@pytest.mark.claim("indexing.stack-of-element-list-keeps-graph")
@given(
    spec=tensor_specs(requires_grad=True, shape=shapes(min_dims=1, max_dims=3, min_side=1)),
    data=st.data(),
)
def test_stack_of_element_list_gradients_reach_a(device, spec, data):
    """Kills: a stack that cuts the graph, or a backward that drops or does not
    accumulate gradients for repeated elements."""
    a = spec.build(device, requires_grad=True, leaf=True)
    n = a.shape[0]
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6), label="idx")
    c = torch.stack([a[i] for i in idx])
    assert c.grad_fn is not None, "torch.stack(list of a[i]) has no grad_fn"
    # Small integer upstream gradients: every sum below is exact, even in float16.
    m = c.numel()
    re = data.draw(st.lists(st.integers(-3, 3), min_size=m, max_size=m), label="g")
    g64 = torch.tensor(re, dtype=torch.float64).reshape(c.shape)
    if a.dtype.is_complex:
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
@given(spec=tensor_specs(values="all"), data=st.data())
def test_basic_indexing_returns_a_view(device, spec, data):
    """Kills: basic indexing (some combination of ints, slices, None, Ellipsis) that
    copies, or a view whose _base is not the root base."""
    a = spec.build(device)
    index = data.draw(basic_indices(tuple(a.shape)), label="index")
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
@given(spec=tensor_specs(shape=shapes(min_dims=1), values="all"), data=st.data())
def test_advanced_indexing_returns_a_copy(device, spec, data):
    """The selected values are checked bit for bit (every value class drawn)
    against NumPy's selection of positions, on raw bytes.

    Kills: advanced indexing (masks, integer lists/tensors) that returns a view or
    aliases the source, or selects (or alters) other elements than NumPy."""
    a = spec.build(device)
    index = data.draw(advanced_indices(tuple(a.shape), device), label="index")
    r = a[index]
    assert not r._is_view() and r._base is None, "advanced indexing returned a view"
    assert not shares_storage(r, a), "advanced indexing result shares storage with a"
    _assert_selects(
        r,
        a,
        _positions(tuple(a.shape), _np_index(index)),
        "advanced indexing selected other values than NumPy",
    )
    if r.numel():
        r.fill_(sentinel_for(r))
        assert_same_bits(
            a, spec.build(device), "a write to an advanced-indexing result is seen in a"
        )


@pytest.mark.claim("indexing.assignment-is-in-place")
@given(
    # ARITHMETIC: uint16/32/64 have no masked_fill/index_put kernels (a kernel gap, not
    # a semantic question).
    spec=tensor_specs(
        dtype=ARITHMETIC, shape=shapes(min_dims=1), views=NON_OVERLAPPING_VIEWS, values="all"
    ),
    advanced=st.booleans(),
    data=st.data(),
)
def test_index_assignment_is_in_place(device, spec, advanced, data):
    """Kills: a[idx] = v that rebinds a to new memory, skips the version bump, writes
    other positions than NumPy's, or (through a view) misses the base."""
    # No expand views: assigning into aliased elements writes several positions at once.
    a = spec.build(device)
    root = _root(a)
    shape = tuple(a.shape)
    index = data.draw(
        advanced_indices(shape, device) if advanced else basic_indices(shape), label="index"
    )
    value = sentinel_for(a)
    # Oracle on raw bytes: a's elements, with the sentinel's bytes at the
    # positions NumPy's indexing selects (so NaN and -0.0 elements compare too).
    expected = element_bytes(a).copy()
    expected[_positions(shape, _np_index(index)).reshape(-1)] = element_bytes(_stored(value, a))
    ptr, stride, version = a.data_ptr(), a.stride(), root._version
    a[index] = value
    assert a.data_ptr() == ptr and a.stride() == stride, "index assignment moved a"
    assert shares_storage(a, root), "index assignment detached a from its base"
    assert root._version > version, "index assignment did not bump the version counter"
    assert np.array_equal(element_bytes(a), expected), "index assignment wrote other positions"


@pytest.mark.claim("indexing.zero-dim-index-tensor-follows-numpy")
@given(spec=tensor_specs(shape=shapes(min_dims=1, min_side=1)), data=st.data())
def test_zero_dim_index_tensor_gives_copy_like_numpy(device, spec, data):
    """The Tensor Views note as stated for a 0-d integer index (NumPy: advanced, copy).
    Deviates: torch treats it as an integer (recorded in expectations)."""
    a = spec.build(device)
    i = data.draw(st.integers(-a.shape[0], a.shape[0] - 1), label="i")
    r = a[torch.tensor(i, device=device)]
    assert not r._is_view(), "a[0-d integer tensor] is a view (NumPy copies)"


@pytest.mark.claim("indexing.zero-dim-int-tensor-index-is-view")
@given(spec=tensor_specs(shape=shapes(min_dims=1, min_side=1), values="all"), data=st.data())
def test_zero_dim_int_tensor_index_acts_as_int(device, spec, data):
    """Pins the select behaviour. Kills: a change of a[torch.tensor(i)] either way."""
    a = spec.build(device)
    i = data.draw(st.integers(-a.shape[0], a.shape[0] - 1), label="i")
    r = a[torch.tensor(i, device=device)]
    assert r._is_view() and r._base is _root(a), "a[0-d integer tensor] is not a view"
    assert_same_bits(r, a[i], "a[0-d integer tensor] != a[i]")


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


@pytest.mark.claim("indexing.stack-new-memory")
@given(specs=_same_shape_specs(values="all"), data=st.data())
def test_stack_new_memory_and_values(device, specs, data):
    """Values are compared bit for bit with independent builds of the inputs,
    over every value class.

    Kills: a stack that aliases an input (e.g. for a single input), misplaces
    inputs along the new dimension, or alters values."""
    ts = [s.build(device) for s in specs]
    d = ts[0].dim()
    dim = data.draw(st.integers(-(d + 1), d), label="dim")
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
@given(specs=_same_shape_specs(requires_grad=True), data=st.data())
def test_stack_gradients_are_slices(device, specs, data):
    """Kills: a stack without grad_fn, or a backward that routes gradient slices to the
    wrong inputs."""
    ts = [s.build(device, requires_grad=True, leaf=True) for s in specs]
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
