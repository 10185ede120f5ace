"""Properties of ``Tensor.copy_`` and of the copy idioms built on it or on
``clone``/``detach`` (claims in ``claims/copy.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.capabilities import synchronize
from conformance.checks import (
    assert_same_bits,
    bits_difference,
    capture_warnings,
    raises_with,
    shares_storage,
    shares_version_counter,
    writes_visible,
)
from strategies import (
    ALL_DTYPES,
    DIFFERENTIABLE,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    grid_examples,
    layout_grid,
    layout_kinds,
    shapes,
    small_int_specs,
    tensor_specs,
)
from strategies.domains import DOMAIN_SPEC, domain_examples, non_empty, not_expanded, value_examples

# Views a *destination* may have: an expanded dst is refused by copy_ (see
# copy.internal-overlap-raises), so the other claims exclude it.


def _overlaps_itself(t: torch.Tensor) -> bool:
    """True when a dimension of size > 1 has stride 0 (an expanded view)."""
    return any(s > 1 and st_ == 0 for s, st_ in zip(t.shape, t.stride(), strict=True))


def _grad_for(t: torch.Tensor) -> torch.Tensor:
    """A 0/1-patterned gradient: sums over <= 256 elements stay exact in
    float16/bfloat16, so reduced gradients can be compared with torch.equal."""
    n = t.numel()
    idx = torch.arange(n, device=t.device)
    g = ((idx * 7 + 3) % 5 < 2).reshape(t.shape).to(t.dtype)
    if t.dtype.is_complex:
        g = g + 1j * (idx % 3 == 0).reshape(t.shape).to(t.dtype)
    return g


def _sum_to(g: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Reference for the gradient of a broadcast: sum ``g`` down to ``shape``."""
    lead = g.dim() - len(shape)
    if lead:
        g = g.sum(dim=tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g


@st.composite
def same_shape_pairs(draw, dtype=None, src_requires_grad=False, values="all"):
    """(dst_spec, src_spec): same dtype and shape, independent layouts.

    ``values`` (of both, as in ``tensor_specs``) defaults to every value
    class: the pairs feed value-copying claims, compared bit for bit."""
    src = draw(tensor_specs(dtype=dtype, requires_grad=src_requires_grad, values=values))
    dst = draw(
        tensor_specs(dtype=src.dtype, shape=src.shape, views=NON_OVERLAPPING_VIEWS, values=values)
    )
    return dst, src


@st.composite
def broadcast_pairs(draw, dtype=None, values="bounded"):
    """(dst_spec, src_spec) where src's shape broadcasts to dst's shape."""
    dst = draw(tensor_specs(dtype=dtype, views=NON_OVERLAPPING_VIEWS, values=values))
    shape = dst.shape
    keep = draw(st.integers(0, len(shape)))
    src_shape = tuple(1 if draw(st.booleans()) else s for s in shape[len(shape) - keep :])
    src = draw(tensor_specs(dtype=dst.dtype, shape=src_shape, values=values))
    return dst, src


@st.composite
def conversion_pairs(draw):
    """(dst_spec, src_spec) of different dtypes, src holding small integers."""
    src_dtype = draw(st.sampled_from(ALL_DTYPES))
    dst_dtype = draw(st.sampled_from([d for d in ALL_DTYPES if d != src_dtype]))
    hi = 1 if torch.bool in (src_dtype, dst_dtype) else 100
    src = draw(small_int_specs(tensor_specs(dtype=src_dtype), hi))
    dst = draw(tensor_specs(dtype=dst_dtype, shape=src.shape, views=NON_OVERLAPPING_VIEWS))
    return dst, src


def _pair_grid(fn):
    """One ``@example(pair=...)`` per (dtype, layout) of :func:`layout_grid`,
    every value class included: each grid layout as dst (all but the expanded
    one, which copy_ refuses) with a contiguous src, and as src with a
    contiguous dst. The contiguous side holds the grid's values in reverse
    order (repeated as far as the shape needs), so elements change."""
    from hypothesis import example

    for spec in layout_grid(values="all"):
        shape = spec.shape
        rev = tuple(reversed(spec.storage))
        values = tuple(rev[i % len(rev)] for i in range(math.prod(shape)))
        plain = TensorSpec(dtype=spec.dtype, base_shape=shape, storage=values)
        if not any(v[0] == "expand" for v in spec.views):
            fn = example(pair=(spec, plain))(fn)
        fn = example(pair=(plain, spec))(fn)
    return fn


def _contiguous_like(spec: TensorSpec, shape: tuple[int, ...], dtype=None) -> TensorSpec:
    """A contiguous spec of ``shape`` (``dtype``: the spec's) holding the
    spec's values, repeated as far as the shape needs (0 for an empty spec)."""
    pool = spec.storage or (0,)
    values = tuple(pool[i % len(pool)] for i in range(math.prod(shape)))
    return TensorSpec(dtype=dtype or spec.dtype, base_shape=shape, storage=values)


def _pair_with_contiguous(spec: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
    """Issue 29: ``(dst, src)`` with the spec as dst and a contiguous src of
    its shape, or as src when expanded (copy_ refuses to write that)."""
    plain = _contiguous_like(spec, spec.shape)
    return (spec, plain) if not_expanded(spec) else (plain, spec)


#: One ``@example(pair=...)`` per :func:`domain_grid` spec (every layout and dtype family).
_domain_pair_grid = domain_examples("pair", make=_pair_with_contiguous)


@pytest.mark.claim("copy.returns-self", "copy.copies-values")
@_pair_grid
@given(pair=same_shape_pairs())
def test_copy_returns_self_and_copies_values(device, pair):
    """Values are compared bit for bit with an independent build of src, over
    every value class (NaN, +-Inf, -0.0, subnormals, extremes).

    Kills: a copy_ that returns a new tensor, rebinds dst to new storage or
    strides, reads src (views, steps, expands) in the wrong order, alters a
    value (flushes -0.0 or subnormals, canonicalises NaNs), or writes src."""
    dst_spec, src_spec = pair
    dst, src = dst_spec.build(device), src_spec.build(device)
    # "whatever the layouts of either": the example draws dst's and src's families.
    evidence.features(layout=layout_kinds(dst) | layout_kinds(src))
    layout = (dst.data_ptr(), dst.stride(), dst.storage_offset())
    out = dst.copy_(src)
    evidence.check("copy.returns-self", out is dst, "copy_() did not return self")
    evidence.check(
        "copy.returns-self",
        (dst.data_ptr(), dst.stride(), dst.storage_offset()) == layout,
        "copy_() changed dst's storage, strides or offset",
    )
    why = bits_difference(dst, src_spec.build(device))
    evidence.check("copy.copies-values", why is None, f"copy_() did not copy src's values: {why}")
    why = bits_difference(src, src_spec.build(device))
    evidence.check("copy.copies-values", why is None, f"copy_() modified src: {why}")


@pytest.mark.claim("copy.broadcasts-src")
@_domain_pair_grid
@given(pair=broadcast_pairs(values="all"))
def test_copy_broadcasts_src(device, pair):
    """Kills: a copy_ that refuses broadcastable src, or broadcasts along the
    wrong dimensions (leading dims, size-1 dims, zero-size dims)."""
    dst_spec, src_spec = pair
    dst, src = dst_spec.build(device), src_spec.build(device)
    evidence.features(layout=layout_kinds(dst) | layout_kinds(src))
    dst.copy_(src)
    expected = src_spec.build(device).expand(dst.shape)
    assert_same_bits(dst, expected, "copy_() did not broadcast src to dst's shape")


@st.composite
def mismatched_pairs(draw):
    """(dst_spec, src_spec): some trailing-aligned dim differs and neither is 1."""
    dst = draw(tensor_specs(views=NON_OVERLAPPING_VIEWS, shape=shapes(min_dims=1, max_side=5)))
    shape = dst.shape
    keep = draw(st.integers(1, len(shape)))
    src_shape = list(shape[len(shape) - keep :])
    sized = [j for j in range(keep) if src_shape[j] != 1]
    assume(sized)  # a dst side of 1 broadcasts with anything
    i = draw(st.sampled_from(sized))
    src_shape[i] = draw(st.sampled_from([s for s in range(0, 6) if s not in (1, src_shape[i])]))
    for j in range(keep):
        if j != i and draw(st.booleans()):
            src_shape[j] = 1
    src = draw(tensor_specs(dtype=dst.dtype, shape=tuple(src_shape)))
    return dst, src


def _with_src_of_shape(src_shape):
    """Issue 29: ``make`` for :func:`domain_examples`: ``(spec, src)``, src a
    contiguous spec of the spec's dtype with shape ``src_shape(spec.shape)``."""
    return lambda spec: (spec, _contiguous_like(spec, src_shape(spec.shape)))


def _writable_with_last_side(spec) -> bool:
    """Not expanded, with a last side that a size-5 src mismatches (not 1 or 5)."""
    return not_expanded(spec) and len(spec.shape) >= 1 and spec.shape[-1] not in (1, 5)


@pytest.mark.claim("copy.not-broadcastable-raises")
@domain_examples("pair", where=_writable_with_last_side, make=_with_src_of_shape(lambda s: (5,)))
@given(pair=mismatched_pairs())
def test_copy_not_broadcastable_raises(device, pair):
    """Kills: a copy_ that accepts incompatible shapes (e.g. copying flat
    elements when numel matches, or truncating)."""
    dst_spec, src_spec = pair
    dst, src = dst_spec.build(device), src_spec.build(device)
    evidence.features(layout=layout_kinds(dst))
    with raises_with(RuntimeError, "must match the size of tensor"):
        dst.copy_(src)


@st.composite
def growing_pairs(draw):
    """(dst_spec, src_spec): broadcastable, but the broadcast shape is not dst's."""
    dst_shape = list(draw(shapes(max_dims=3)))
    src_shape = [1 if draw(st.booleans()) else s for s in dst_shape]
    if draw(st.booleans()) or not dst_shape:
        src_shape = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)) + src_shape
    else:
        i = draw(st.integers(0, len(dst_shape) - 1))
        dst_shape[i] = 1
        src_shape[i] = draw(st.sampled_from([0, 2, 3]))
    dst = draw(tensor_specs(views=NON_OVERLAPPING_VIEWS, shape=tuple(dst_shape)))
    src = draw(tensor_specs(dtype=dst.dtype, shape=tuple(src_shape)))
    return dst, src


@pytest.mark.claim("copy.src-cannot-grow-self")
@domain_examples("pair", where=not_expanded, make=_with_src_of_shape(lambda s: (2, *s)))
@given(pair=growing_pairs())
def test_copy_src_cannot_grow_self(device, pair):
    """Kills: a copy_ that resizes dst to the broadcast shape, or that silently
    copies a slice of a larger src."""
    dst_spec, src_spec = pair
    dst, src = dst_spec.build(device), src_spec.build(device)
    evidence.features(layout=layout_kinds(dst))
    shape = dst.shape
    with raises_with(RuntimeError, "doesn't match the broadcast shape"):
        dst.copy_(src)
    assert dst.shape == shape, "a refused copy_() changed dst's shape"


def _with_src_of_another_dtype(spec: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
    """Issue 29: ``(spec, src)``, src a contiguous spec of its shape holding 0
    and 1 (exact in every dtype) in another dtype: int32, or float32 for an
    int32 spec."""
    src_dtype = torch.float32 if spec.dtype == torch.int32 else torch.int32
    storage = tuple(i % 2 for i in range(math.prod(spec.shape)))
    return spec, TensorSpec(dtype=src_dtype, base_shape=spec.shape, storage=storage)


@pytest.mark.claim("copy.converts-dtype")
@domain_examples("pair", where=not_expanded, make=_with_src_of_another_dtype)
@given(pair=conversion_pairs())
def test_copy_converts_dtype(device, pair):
    """Kills: a copy_ that refuses mixed dtypes, reinterprets bits instead of
    converting, mangles values for some dtype pair or layout, or converts into
    fresh memory and rebinds dst to it (dst's base would never see the values)."""
    dst_spec, src_spec = pair
    dst, src = dst_spec.build(device), src_spec.build(device)
    address = dst.data_ptr()
    with capture_warnings():  # complex -> real warns about the (zero) imaginary part
        out = dst.copy_(src)
    assert out is dst and dst.dtype == dst_spec.dtype, "copy_() changed dst's dtype"
    assert dst.data_ptr() == address, "copy_() rebound dst to new memory instead of writing into it"
    # Small integers convert exactly (NumPy builds the expectation); a
    # conversion is not bit-preserving, so special values are not drawn here.
    expected = dataclasses.replace(src_spec, dtype=dst_spec.dtype).build(device)
    assert_same_bits(dst, expected, f"copy_() {src.dtype} -> {dst.dtype} changed the values")


@pytest.mark.claim("copy.across-devices")
# Issue 29: every layout and dtype family of the pair, each direction.
@domain_examples("pair", make=_pair_with_contiguous, direction="to-device", non_blocking=True)
@domain_examples("pair", make=_pair_with_contiguous, direction="to-host", non_blocking=False)
@given(
    pair=same_shape_pairs(),
    direction=st.sampled_from(["to-device", "to-host"]),
    non_blocking=st.booleans(),
)
def test_copy_across_devices(device, pair, direction, non_blocking):
    """Kills: a cross-device copy_ that fails, or whose (async) result is wrong.

    The claim is about host <-> accelerator copies, so the host side is
    necessarily "cpu" here."""
    dst_spec, src_spec = pair
    dst_dev, src_dev = (device, "cpu") if direction == "to-device" else ("cpu", device)
    dst, src = dst_spec.build(dst_dev), src_spec.build(src_dev)
    evidence.features(layout=layout_kinds(dst) | layout_kinds(src))
    out = dst.copy_(src, non_blocking=non_blocking)
    synchronize(device)  # torch.<device type>.synchronize(): cuda, xpu, mps, PrivateUse1
    # torch.device("cuda") has no index; the tensor's has one (cuda:0)
    assert out is dst and dst.device.type == torch.device(dst_dev).type, "copy_() moved dst"
    assert_same_bits(dst, src_spec.build("cpu"), "cross-device copy_() lost values")


@pytest.mark.claim("copy.non-blocking-no-effect-same-device")
@_domain_pair_grid
@given(pair=same_shape_pairs())
def test_copy_non_blocking_same_device(device, pair):
    """Kills: a non_blocking same-device copy_ that returns early (stale
    values), returns a new tensor, or differs from the blocking copy."""
    dst_spec, src_spec = pair
    src = src_spec.build(device)
    blocking, nb = dst_spec.build(device), dst_spec.build(device)
    evidence.features(layout=layout_kinds(nb) | layout_kinds(src))
    blocking.copy_(src)
    assert nb.copy_(src, non_blocking=True) is nb, "copy_(non_blocking=True) did not return self"
    assert_same_bits(nb, blocking, "copy_(non_blocking=True) differs from a blocking copy")
    assert_same_bits(nb, src_spec.build(device), "copy_(non_blocking=True) lost values")


@pytest.mark.claim("copy.bumps-version")
@_domain_pair_grid
@given(pair=broadcast_pairs())
def test_copy_bumps_version(device, pair):
    """Kills: a copy_ that does not mark dst dirty (saved tensors overwritten
    by copy_ would then give silently wrong gradients) or that bumps src,
    for some layout of either or dtype family."""
    dst_spec, src_spec = pair
    dst, src = dst_spec.build(device), src_spec.build(device)
    evidence.features(layout=layout_kinds(dst) | layout_kinds(src))
    dst_before, src_before = dst._version, src._version
    dst.copy_(src)
    assert dst._version > dst_before, "copy_() did not bump dst's version counter"
    assert src._version == src_before, "copy_() bumped src's version counter"


@pytest.mark.claim("copy.bumps-version")
@pytest.mark.observes("backward")
@given(spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS, requires_grad=True))
def test_copy_over_saved_tensor_fails_backward(device, spec):
    """Kills: a copy_ over a tensor saved for backward that goes unnoticed,
    so backward silently uses the overwritten values."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = x * 1  # non-leaf, so copy_ into it is allowed
    loss = (y * y).sum()  # mul saves y
    if loss.is_complex():
        loss = loss.real
    with torch.no_grad():
        y.copy_(torch.zeros_like(y))
    with raises_with(RuntimeError, "modified by an inplace operation"):
        loss.backward()


def _leaf_requiring_grad(spec, device, leaf_kind: str, leaf: bool = True) -> torch.Tensor:
    """``spec`` built as a leaf requiring grad (``leaf=True``) or as the
    spec's view of such a leaf base (``leaf=False``; the base itself when the
    spec has no views), the leaf a plain tensor (``leaf_kind="tensor"``) or
    an ``nn.Parameter`` (``"parameter"``)."""
    if leaf_kind == "tensor":
        return spec.build(device, requires_grad=True, leaf=leaf)
    if leaf:
        return torch.nn.Parameter(spec.build(device))
    return spec.apply_views(torch.nn.Parameter(spec.build_base(device)))


_PAIR = (DOMAIN_SPEC, DOMAIN_SPEC)  # a float32 offset, transposed dst and src


@pytest.mark.claim("copy.leaf-requiring-grad-raises")
# Issue 29: a leaf requiring grad is a plain tensor or an nn.Parameter.
@value_examples("leaf_kind", ("tensor", "parameter"), pair=_PAIR, leaf=False)
@given(
    pair=same_shape_pairs(dtype=DIFFERENTIABLE),
    leaf=st.booleans(),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_copy_into_leaf_requiring_grad_raises(device, pair, leaf, leaf_kind):
    """Kills: a copy_ that silently overwrites a leaf requiring grad (or a
    view of one) in grad mode, corrupting a parameter behind autograd (for
    plain leaves or for Parameters)."""
    dst_spec, src_spec = pair
    # leaf=True: dst is itself a leaf; leaf=False: dst is a view of a leaf base
    # when the spec has views (the base itself otherwise).
    dst = _leaf_requiring_grad(dst_spec, device, leaf_kind, leaf)
    evidence.features(leaf_kind=leaf_kind)
    src = src_spec.build(device)
    with raises_with(RuntimeError, "leaf Variable that requires grad is being used in an in-place"):
        dst.copy_(src)
    assert_same_bits(dst, dst_spec.build(device), "a refused copy_() wrote dst")


@pytest.mark.claim("copy.allowed-under-no-grad")
@value_examples("leaf_kind", ("tensor", "parameter"), pair=_PAIR)  # issue 29
@given(
    pair=same_shape_pairs(dtype=DIFFERENTIABLE), leaf_kind=st.sampled_from(["tensor", "parameter"])
)
def test_copy_allowed_under_no_grad(device, pair, leaf_kind):
    """Kills: a copy_ refused under no_grad, or one that changes the leaf's
    autograd state (drops requires_grad, adds a grad_fn) or skips the version
    bump, for plain leaves or for Parameters."""
    dst_spec, src_spec = pair
    dst = _leaf_requiring_grad(dst_spec, device, leaf_kind)
    evidence.features(leaf_kind=leaf_kind)
    src = src_spec.build(device)
    before = dst._version
    with torch.no_grad():
        dst.copy_(src)
    assert_same_bits(dst, src_spec.build(device), "copy_() under no_grad lost values")
    assert dst._version > before, "copy_() under no_grad did not bump the version counter"
    assert dst.requires_grad and dst.is_leaf and dst.grad_fn is None, (
        "copy_() under no_grad changed the leaf's autograd state"
    )


@pytest.mark.claim("copy.differentiable-wrt-src")
@pytest.mark.observes("backward", "to")
@domain_examples("pair", DIFFERENTIABLE, make=_pair_with_contiguous)
@given(pair=broadcast_pairs(dtype=DIFFERENTIABLE))
def test_copy_differentiable_wrt_src(device, pair):
    """Kills: a copy_ that cuts the graph (dst stays a leaf), or whose backward
    does not sum the gradient over broadcast dimensions."""
    dst_spec, src_spec = pair
    dst = dst_spec.build(device)
    src = src_spec.build(device, requires_grad=True, leaf=True)
    evidence.features(layout=layout_kinds(dst) | layout_kinds(src))
    dst.copy_(src)
    assert dst.requires_grad and not dst.is_leaf and dst.grad_fn is not None, (
        "copy_() from a src requiring grad did not put dst in the graph"
    )
    g = _grad_for(dst)
    dst.backward(g)
    wide = torch.complex128 if g.is_complex() else torch.float64
    expected = _sum_to(g.to(wide), tuple(src.shape)).to(src.dtype)
    assert src.grad is not None and torch.equal(src.grad, expected), (
        "gradient through copy_() is not summed over the broadcast dimensions"
    )


@st.composite
def expanded_specs(draw):
    """Non-empty specs whose last view is an expand giving some dimension of
    size > 1 stride 0 (expanding size-1 dims and/or adding leading dims)."""
    spec = draw(tensor_specs(views=NON_OVERLAPPING_VIEWS, shape=shapes(max_dims=3, min_side=1)))
    target = [draw(st.integers(2, 3)) if s == 1 and draw(st.booleans()) else s for s in spec.shape]
    if target == list(spec.shape) or draw(st.booleans()):
        target = [draw(st.integers(2, 3))] + target
    return dataclasses.replace(spec, views=(*spec.views, ("expand", tuple(target))))


def _expanded_non_empty(spec) -> bool:
    return not not_expanded(spec) and non_empty(spec)


@pytest.mark.claim("copy.internal-overlap-raises")
# Issue 29: the grid's expanded layout in every dtype.
@grid_examples(param="dst_spec", where=_expanded_non_empty)
@given(dst_spec=expanded_specs())
def test_copy_into_expanded_raises(device, dst_spec):
    """Kills: a copy_ into an expanded dst that silently writes one location
    several times (last writer wins, order-dependent)."""
    dst = dst_spec.build(device)
    assert _overlaps_itself(dst) and dst.numel() > 0  # the strategy's promise
    src = torch.zeros(dst.shape, dtype=dst.dtype, device=device)
    with raises_with(RuntimeError, "more than one element of the written-to tensor refers to"):
        dst.copy_(src)


@st.composite
def overlapping_blocks(draw):
    """(base_spec, dst_rows, src_rows): two distinct, partly overlapping row ranges."""
    base_shape = draw(
        st.builds(lambda d0, rest: (d0, *rest), st.integers(3, 6), shapes(max_dims=3, min_side=1))
    )
    spec = draw(tensor_specs(shape=base_shape, views=False))
    rows = base_shape[0]
    k = draw(st.integers(2, rows - 1))
    a = draw(st.integers(0, rows - k))
    b = draw(st.sampled_from([i for i in range(0, rows - k + 1) if i != a and abs(i - a) < k]))
    return spec, (a, a + k), (b, b + k)


def _overlap_examples(fn):
    """Issue 29: rows 0:3 copied from rows 1:4 of a 4 x 2 base of every dtype
    (so every family), and the reverse."""
    for dt in ALL_DTYPES:
        spec = TensorSpec(dtype=dt, base_shape=(4, 2), storage=(1, 0, 1, 1, 0, 1, 0, 0))
        fn = example(case=(spec, (0, 3), (1, 4)))(fn)
        fn = example(case=(spec, (1, 4), (0, 3)))(fn)
    return fn


@pytest.mark.claim("copy.partial-overlap-raises")
@_overlap_examples
@given(case=overlapping_blocks())
def test_copy_partial_overlap_raises(device, case):
    """Kills: a copy_ between partly overlapping views that goes ahead with an
    order-dependent result."""
    spec, (a0, a1), (b0, b1) = case
    base = spec.build(device)
    with raises_with(RuntimeError, "some elements of the input tensor and the written-to tensor"):
        base[a0:a1].copy_(base[b0:b1])


def _spec_for_grad(spec: TensorSpec, requires_grad: bool) -> bool:
    return requires_grad and spec.dtype in DIFFERENTIABLE


@pytest.mark.claim("copy.empty-like-copy-no-sharing")
@grid_examples(grid_values="all", requires_grad=False, leaf=False)
@given(spec=tensor_specs(values="all"), requires_grad=st.booleans(), leaf=st.booleans())
def test_empty_like_copy_no_sharing(device, spec, requires_grad, leaf):
    """Kills: an empty_like/copy_ pair that aliases z (e.g. empty_like
    returning a view of z) or alters values, dtype or shape."""
    z = spec.build(device, requires_grad=_spec_for_grad(spec, requires_grad), leaf=leaf)
    c = torch.empty_like(z).copy_(z)
    assert c.dtype == z.dtype and c.shape == z.shape, "empty_like(z).copy_(z) changed dtype/shape"
    assert_same_bits(c, spec.build(device), "empty_like(z).copy_(z) changed values")
    assert not shares_storage(c, z), "empty_like(z).copy_(z) shares storage with z"
    if z.numel():
        assert not writes_visible(c, z), "a write to empty_like(z).copy_(z) is visible in z"


@pytest.mark.claim("copy.empty-like-copy-in-graph")
@pytest.mark.observes("backward", "to")
# Issue 29: every layout and differentiable family; plain, leaf and non-leaf z.
@domain_examples(dtypes=DIFFERENTIABLE, requires_grad=True, leaf=True)
@value_examples("leaf", (True, False), spec=DOMAIN_SPEC, requires_grad=True)
@value_examples("requires_grad", (False,), spec=DOMAIN_SPEC, leaf=True)
@given(spec=tensor_specs(dtype=DIFFERENTIABLE), requires_grad=st.booleans(), leaf=st.booleans())
def test_empty_like_copy_in_graph(device, spec, requires_grad, leaf):
    """Kills: an empty_like(z).copy_(z) that is detached from z's graph, that
    requires grad when z does not, or whose gradient does not reach z."""
    evidence.features(tensor_kind="plain" if not requires_grad else "leaf" if leaf else "non_leaf")
    z = spec.build(device, requires_grad=requires_grad, leaf=leaf)
    c = torch.empty_like(z).copy_(z)
    assert c.requires_grad == z.requires_grad, (
        f"empty_like(z).copy_(z) requires_grad {c.requires_grad}, z {z.requires_grad}"
    )
    if not requires_grad:
        assert c.grad_fn is None, "empty_like(z).copy_(z) of a z not requiring grad has a grad_fn"
        return
    assert not c.is_leaf and c.grad_fn is not None, "empty_like(z).copy_(z) is not in the graph"
    g = _grad_for(c)
    (gz,) = torch.autograd.grad(c, z, grad_outputs=g)
    assert_same_bits(gz, g, "gradient of empty_like(z).copy_(z) does not reach z unchanged")


@pytest.mark.claim("copy.clone-detach-is-independent-leaf")
@pytest.mark.observes("clone", "detach")
@grid_examples(grid_values="all", requires_grad=False, leaf=False, order="detach().clone()")
@grid_examples(grid_values="all", requires_grad=False, leaf=False, order="clone().detach()")
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    leaf=st.booleans(),
    order=st.sampled_from(["clone().detach()", "detach().clone()"]),
)
def test_clone_detach_is_independent_leaf(device, spec, requires_grad, leaf, order):
    """Kills: a clone/detach combination that aliases t (storage or version
    counter), keeps t's graph, or alters values."""
    t = spec.build(device, requires_grad=_spec_for_grad(spec, requires_grad), leaf=leaf)
    r = t.clone().detach() if order == "clone().detach()" else t.detach().clone()
    assert_same_bits(r, spec.build(device), f"{order} changed values")
    assert not shares_storage(r, t), f"{order} shares storage with its source"
    assert not shares_version_counter(r, t), f"{order} shares its source's version counter"
    assert not r.requires_grad and r.grad_fn is None, f"{order} is still in the graph"
    assert r.is_leaf, f"{order} is not a leaf"
