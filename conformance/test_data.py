"""Properties of the ``Tensor.data`` getter and setter (claims in ``claims/data.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
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
    DIFFERENTIABLE,
    FLOATING,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    TENSOR_KINDS,
    build_kind,
    domain_examples,
    layout_kinds,
    tensor_kind_of,
    value_examples,
    writable_non_empty,
)
from strategies.dtypes import dtype_family

#: Real floating dtypes: the gradient of x*x is 2*x there (complex inputs
#: get conjugated gradients), and doubling is exact in every one of them.


def _geometry(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.stride(), t.storage_offset()


def _build(spec, device, requires_grad: bool, non_leaf: bool = False) -> torch.Tensor:
    requires_grad = requires_grad and spec.dtype in DIFFERENTIABLE
    t = spec.build(device, requires_grad=requires_grad)
    if requires_grad and non_leaf:
        t = t * 1
    return t


def _non_view(t: torch.Tensor) -> torch.Tensor:
    """A non-view tensor with ``t``'s storage and layout (``set_`` aliases
    without view tracking)."""
    out = torch.empty(0, dtype=t.dtype, device=t.device)
    return out.set_(t.untyped_storage(), t.storage_offset(), t.size(), t.stride())


def _writes_visible(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """Write a sentinel into src's first element; True when dst's first element
    now holds it (compared after rounding to the dtype, unlike a Python
    comparison: complex64 cannot hold every Python complex)."""
    value = sentinel_for(dst)
    index = (0,) * src.dim()
    with torch.no_grad():
        src[index] = value
    written = torch.tensor(value, dtype=dst.dtype, device=dst.device)
    return same_bits(dst[(0,) * dst.dim()], written)


def _overlapping(t: torch.Tensor) -> bool:
    return any(st_ == 0 and n > 1 for n, st_ in zip(t.shape, t.stride(), strict=True))


def _mutate(t: torch.Tensor, how: str) -> None:
    {"zero_": t.zero_, "mul_": lambda: t.mul_(3), "add_": lambda: t.add_(1)}[how]()


def _non_empty(spec: TensorSpec) -> bool:
    return math.prod(spec.shape) > 0


@pytest.mark.claim("data.shares-storage")
@pytest.mark.observes("tensor")
@grid_examples(where=_non_empty, grid_values="all", kind="non_leaf", direction="to-source")
# Issue 29: every layout family (zero-size included: it shares storage,
# and has no element to write) and dtype family, and every tensor kind.
@domain_examples(kind="leaf", direction="to-data")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, direction="to-data")
@given(
    spec=tensor_specs(shape=shapes(min_side=1), values="all"),
    kind=st.sampled_from(TENSOR_KINDS),
    direction=st.sampled_from(["to-source", "to-data"]),
)
def test_data_shares_storage(device, spec, kind, direction):
    """Kills: a .data that copies (for some layout, dtype or tensor kind:
    leaves, non-leaves, Parameters, subclasses, inference tensors), alters
    values (compared bit for bit over every value class), or that points at
    a different offset or layout."""
    x = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(x))
    d = x.data
    assert_same_bits(d, x, ".data does not hold its tensor's values")
    assert shares_storage(d, x), ".data does not share storage with its tensor"
    assert d.data_ptr() == x.data_ptr(), ".data starts at a different address"
    assert _geometry(d) == _geometry(x), ".data changed shape, strides or storage offset"
    if x.numel() == 0:
        return  # no element to write: the sharing was checked above
    with torch.inference_mode(x.is_inference()):  # an inference tensor is written inside it
        if direction == "to-source":
            assert _writes_visible(d, x), "a write through .data is not visible in the tensor"
        else:
            assert _writes_visible(x, d), "a write to the tensor is not visible through .data"


@pytest.mark.claim("data.out-of-graph")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, non_leaf=False)  # issue 29: every kind
@given(
    spec=tensor_specs(requires_grad=True),
    kind=st.sampled_from(TENSOR_KINDS),
    non_leaf=st.booleans(),
)
def test_data_is_out_of_graph(device, spec, kind, non_leaf):
    """Kills: a .data that keeps requires_grad or grad_fn (of a leaf, a view,
    a non-leaf result or a Parameter), or that detaches the tensor itself.
    ``non_leaf``: a leaf input is replaced by ``x * 1``, a non-leaf result
    that is not a view."""
    x = build_kind(spec, device, kind)
    if non_leaf and tensor_kind_of(x) == "leaf":
        x = x * 1
    evidence.features(tensor_kind=tensor_kind_of(x))
    state = (x.requires_grad, x.grad_fn, x.is_leaf)
    d = x.data
    assert d.requires_grad is False, ".data requires grad"
    assert d.grad_fn is None, f".data has grad_fn {d.grad_fn}"
    assert d.is_leaf, ".data is not a leaf"
    assert (x.requires_grad, x.grad_fn, x.is_leaf) == state, "taking .data changed the tensor"


@pytest.mark.claim("data.changes-not-tracked")
@pytest.mark.observes("detach", "tensor")
@grid_examples(where=_non_empty, grid_values="all", requires_grad=True, parameter=False)
@given(
    spec=tensor_specs(shape=shapes(min_side=1), values="all"),
    requires_grad=st.booleans(),
    parameter=st.booleans(),
)
def test_data_changes_do_not_bump_version(device, spec, requires_grad, parameter):
    """Kills: a .data whose in-place changes are tracked (bump the tensor's
    version counter), or that does not change the tensor at all - for plain
    tensors and for ``nn.Parameter`` (whose ``p.data`` optimizers write)."""
    x = _build(spec, device, requires_grad)
    if parameter and spec.dtype in DIFFERENTIABLE:
        x = torch.nn.Parameter(x.detach(), requires_grad=requires_grad)
    version = x._version
    d = x.data
    index = (0,) * d.dim()
    value = sentinel_for(d)
    d[index] = value  # indexed assignment
    if spec.dtype in ARITHMETIC and not _overlapping(d):
        # in-place arithmetic too (bool / wide unsigned ints have no kernels;
        # it is refused on overlapping, expanded memory)
        d.add_(torch.zeros_like(d))
    assert x._version == version, "an in-place change through .data bumped the version counter"
    written = torch.tensor(value, dtype=x.dtype, device=device)  # rounded to the dtype
    assert_same_bits(x[index], written, "an in-place change through .data did not reach the tensor")


@pytest.mark.claim("data.own-version-counter")
@domain_examples(bumps=1, requires_grad=False)  # issue 29: every layout and dtype family
@given(spec=tensor_specs(), bumps=st.integers(0, 3), requires_grad=st.booleans())
def test_data_has_its_own_version_counter(device, spec, bumps, requires_grad):
    """Kills: a .data that shares (or copies) the tensor's version counter."""
    x = _build(spec, device, requires_grad)
    for _ in range(bumps):
        torch.autograd.graph.increment_version(x)
    d = x.data
    assert d._version == 0, f".data starts at version {d._version}, not 0"
    assert not shares_version_counter(d, x), ".data shares the tensor's version counter"
    assert not shares_version_counter(x, d), "the tensor shares .data's version counter"


@pytest.mark.claim("data.silent-wrong-gradient")
@pytest.mark.observes("backward", "clone", "detach")
@domain_examples(dtypes=FLOATING, where=writable_non_empty, how="mul_")  # issue 29
@given(
    # Expanded leaves excluded: in-place arithmetic on them is refused (overlap).
    spec=tensor_specs(dtype=FLOATING, views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    how=st.sampled_from(["zero_", "mul_", "add_"]),
)
def test_data_mutation_gives_silent_wrong_gradient(device, spec, how):
    """Kills: a .data whose mutation is detected (backward raises) or undone
    (the gradient uses the saved original value)."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = torch.ones(x.shape, dtype=x.dtype, device=device, requires_grad=True)
    z = (x * x + y).sum()  # mul saves x for backward
    before, values_before = x.detach().clone(), x.tolist()
    _mutate(x.data, how)
    after = x.detach().clone()
    # The mutation changed something: judged by tolist(), a read that shares
    # no code with the detach/clone instruments (a broken detach would otherwise
    # reject every example and hide its own failure behind a health check).
    assume(values_before != x.tolist())
    z.backward()
    assert torch.equal(x.grad, 2 * after), "x.grad is not 2 * (x as mutated through .data)"
    assert not torch.equal(x.grad, 2 * before), "x.grad is the true gradient 2 * x"
    assert torch.equal(y.grad, torch.ones_like(y)), "y.grad is not 1"


@pytest.mark.claim("data.detach-reports-changes")
@pytest.mark.observes("backward", "detach")
@domain_examples(dtypes=FLOATING, where=writable_non_empty, how="mul_")  # issue 29
@given(
    spec=tensor_specs(dtype=FLOATING, views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    how=st.sampled_from(["zero_", "mul_", "add_"]),
)
def test_detach_mutation_is_reported(device, spec, how):
    """Kills: a detach that behaves like .data (own version counter), so the
    mutation goes unnoticed and the gradient is silently wrong."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = torch.ones(x.shape, dtype=x.dtype, device=device, requires_grad=True)
    z = (x * x + y).sum()
    _mutate(x.detach(), how)
    with raises_with(RuntimeError, "modified by an inplace operation"):
        z.backward()


def _setter_target(spec, device, requires_grad, non_leaf) -> torch.Tensor:
    # A non-view tensor: .data assignment on a view keeps it a view of a
    # base it no longer shares storage with, which is out of these claims.
    x = _non_view(spec.build(device))
    x.requires_grad_(requires_grad and spec.dtype in DIFFERENTIABLE)
    if x.requires_grad and non_leaf:
        x = x * 1
    return x


@pytest.mark.claim("data.setter-rebinds")
@grid_examples(
    "new",
    grid_values="all",
    spec=TensorSpec(dtype=torch.float32, base_shape=(2,), storage=(1.0, 2.0)),
    requires_grad=False,
    non_leaf=False,
)
# Issue 29: x a leaf and a non-leaf too (the grid's x is plain).
@value_examples("non_leaf", (False, True), spec=DOMAIN_SPEC, new=DOMAIN_SPEC, requires_grad=True)
@given(
    spec=tensor_specs(),
    new=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    non_leaf=st.booleans(),
)
def test_data_setter_rebinds(device, spec, new, requires_grad, non_leaf):
    """Kills: a setter that copies t (or alters its values, compared bit for
    bit over every value class), keeps x's old shape/dtype/storage,
    replaces the object, or resets requires_grad / leaf status / grad_fn."""
    x = _setter_target(spec, device, requires_grad, non_leaf)
    assume(not x.requires_grad or new.dtype in DIFFERENTIABLE)
    t = new.build(device)
    # Issue 29: the domain is t's layout and family, and what x is to autograd.
    evidence.features(
        layout=layout_kinds(t), dtype_family=dtype_family(t.dtype), tensor_kind=tensor_kind_of(x)
    )
    ident, state = id(x), (x.requires_grad, x.is_leaf, x.grad_fn)
    x.data = t
    assert id(x) == ident, "assigning .data replaced the object"
    assert x.dtype == t.dtype, "after x.data = t, x does not have t's dtype"
    assert _geometry(x) == _geometry(t), "after x.data = t, x does not have t's layout"
    assert shares_storage(x, t), "after x.data = t, x does not share t's storage"
    assert_same_bits(x, new.build(device), "after x.data = t, x does not hold t's values")
    assert (x.requires_grad, x.is_leaf, x.grad_fn) == state, (
        "assigning .data changed requires_grad, leaf status or grad_fn"
    )


@pytest.mark.claim("data.setter-keeps-version-counter")
@domain_examples(new=DOMAIN_SPEC, bumps=1)  # issue 29: every layout and dtype family of x
@given(spec=tensor_specs(), new=tensor_specs(), bumps=st.integers(0, 3))
def test_data_setter_keeps_version_counter(device, spec, new, bumps):
    """Kills: a setter that adopts t's version counter or resets x's."""
    x = _non_view(spec.build(device))
    t = new.build(device)
    for _ in range(bumps):
        torch.autograd.graph.increment_version(x)
    torch.autograd.graph.increment_version(t)
    version = x._version
    x.data = t
    assert x._version == version, f"assigning .data changed x._version to {x._version}"
    assert not shares_version_counter(x, t), "after x.data = t, x shares t's version counter"
    assert not shares_version_counter(t, x), "after x.data = t, t shares x's version counter"


_NON_TENSORS = st.one_of(
    st.integers(-5, 5),
    st.floats(-5, 5),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(-5, 5), max_size=3),
    st.tuples(st.floats(-5, 5)),
)


@pytest.mark.claim("data.setter-rejects-non-tensor")
@given(spec=tensor_specs(), value=_NON_TENSORS, requires_grad=st.booleans())
def test_data_setter_rejects_non_tensor(device, spec, value, requires_grad):
    """Kills: a setter that coerces Python values (lists, scalars) into a tensor."""
    x = _setter_target(spec, device, requires_grad, non_leaf=False)
    evidence.features(layout=None, dtype_family=None)  # a non-tensor has neither
    geometry, storage = _geometry(x), x.untyped_storage()
    with raises_with(TypeError, "Variable data has to be a tensor"):
        x.data = value
    assert _geometry(x) == geometry and same_storage(x.untyped_storage(), storage), "x changed"


_NON_FLOATING = [d for d in ALL_DTYPES if d not in DIFFERENTIABLE]


@pytest.mark.claim("data.setter-rejects-non-tensor")
# Issue 29: every layout of a non-floating tensor of every such family.
@domain_examples("new", dtypes=_NON_FLOATING, spec=DOMAIN_SPEC)
@given(spec=tensor_specs(requires_grad=True), new=tensor_specs(dtype=_NON_FLOATING))
def test_data_setter_rejects_non_float_for_grad(device, spec, new):
    """Kills: a setter that lets a tensor requiring grad hold integer/bool data."""
    x = _setter_target(spec, device, requires_grad=True, non_leaf=False)
    t = new.build(device)
    evidence.features(layout=layout_kinds(t), dtype_family=dtype_family(t.dtype))
    dtype, storage = x.dtype, x.untyped_storage()
    with raises_with(RuntimeError, "must be floating point or complex dtype"):
        x.data = t
    assert x.dtype == dtype and same_storage(x.untyped_storage(), storage), "x changed"


@pytest.mark.claim("data.metadata-change-allowed")
@domain_examples(op="resize_", size=4, requires_grad=False)  # issue 29: every layout and family
@given(
    spec=tensor_specs(),
    op=st.sampled_from(["resize_", "transpose_", "unsqueeze_", "as_strided_", "set_"]),
    size=st.integers(0, 12),
    requires_grad=st.booleans(),
)
def test_data_metadata_changes_allowed(device, spec, op, size, requires_grad):
    """Kills: a .data that refuses metadata changes again (the pre-1.13
    'not allowed on a Tensor created from .data' error), or whose metadata
    changes leak into the tensor's own shape/strides/offset."""
    x = _build(spec, device, requires_grad)
    geometry = _geometry(x)
    d = x.data
    if op == "resize_":
        d.resize_(size)
    elif op == "transpose_":
        d.transpose_(0, -1)
    elif op == "unsqueeze_":
        d.unsqueeze_(0)
    elif op == "as_strided_":
        n = d.untyped_storage().nbytes() // d.element_size()
        d.as_strided_((min(size, n),), (1,), 0)
    else:
        d.set_(torch.zeros(size, dtype=d.dtype, device=device))
    assert _geometry(x) == geometry, f"{op} on .data changed the tensor's shape/strides/offset"
