"""Properties of ``Tensor.detach`` (claims in ``claims/detach.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    element_bytes,
    raises_with,
    shares_storage,
    writes_visible,
)
from strategies import (
    COMPLEX,
    DIFFERENTIABLE,
    NON_OVERLAPPING_VIEWS,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    TENSOR_KINDS,
    build_kind,
    domain_examples,
    math_bit_of,
    not_expanded,
    tensor_kind_of,
    value_examples,
    writable_non_empty,
)

#: How a tensor may carry a lazy math bit: none, a conjugate view
#: (``t.conj()`` of a complex tensor: ``is_conj()``), or a negative view
#: (``t.conj().imag``: ``is_neg()``, a real dtype). Views with a math bit share
#: their base's memory and resolve the bit only when materialized.
MATH_BITS = ("none", "conj", "neg")


def with_math_bit(t: torch.Tensor, math_bit: str) -> torch.Tensor:
    """``t`` itself, or its conjugate view (``"conj"``) or the negative-bit
    view ``t.conj().imag`` (``"neg"``) when ``t`` is complex (a real tensor
    has neither: returned as it is). Raises ``ValueError`` for an unknown
    ``math_bit``."""
    if math_bit not in MATH_BITS:
        raise ValueError(f"math_bit must be one of {MATH_BITS}, not {math_bit!r}")
    if math_bit == "none" or not t.is_complex():
        return t
    return t.conj() if math_bit == "conj" else t.conj().imag


@pytest.mark.claim("detach.shares-storage")
@grid_examples(kind="leaf", form="method", math_bit="none")
# Every layout of both complex dtypes as a conjugate and as a negative-bit
# view (issue 29: "every tensor" includes the views with a math bit).
@grid_examples(dtypes=COMPLEX, kind="plain", form="function", math_bit="conj")
@grid_examples(dtypes=COMPLEX, kind="leaf", form="method", math_bit="neg")
# Issue 29: every tensor kind, by construction.
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, form="function", math_bit="none")
@given(
    spec=tensor_specs(),
    kind=st.sampled_from(TENSOR_KINDS),
    form=st.sampled_from(["method", "function"]),
    math_bit=st.sampled_from(MATH_BITS),
)
def test_detach_shares_storage(device, spec, kind, form, math_bit):
    """Kills: a detach that copies (always, or for some layout/dtype/tensor
    kind: leaves, non-leaves, Parameters, subclasses, inference tensors, or
    in one calling convention: ``t.detach()`` vs ``torch.detach(t)``, or for
    conjugate / negative-bit views, resolving the bit into new memory)."""
    t = with_math_bit(build_kind(spec, device, kind), math_bit)
    evidence.features(math_bit=math_bit_of(t), tensor_kind=tensor_kind_of(t), call_form=form)
    d = t.detach() if form == "method" else torch.detach(t)
    assert shares_storage(d, t), "detach() result does not share storage with its input"
    assert d.data_ptr() == t.data_ptr(), "detach() result starts at a different address"
    assert (d.shape, d.stride(), d.storage_offset()) == (t.shape, t.stride(), t.storage_offset()), (
        "detach() changed shape, strides or storage offset"
    )


@pytest.mark.claim("detach.writes-visible-both-ways")
@grid_examples(where=lambda s: math.prod(s.shape) > 0, kind="plain", direction="to-source")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, direction="to-detached")
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    kind=st.sampled_from(TENSOR_KINDS),
    direction=st.sampled_from(["to-source", "to-detached"]),
)
def test_detach_writes_visible_both_ways(device, spec, kind, direction):
    """Kills: a detach that copies, or that copies on write (lazy clone), for
    some layout, dtype or tensor kind."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    d = t.detach()
    with torch.inference_mode(t.is_inference()):  # an inference tensor is written inside it
        if direction == "to-source":
            assert writes_visible(d, t), "a write through detach() is not visible in the source"
        else:
            assert writes_visible(t, d), "a write to the source is not visible through detach()"


@pytest.mark.claim("detach.keeps-dtype-and-values")
@domain_examples(grid_values="all", requires_grad=False, form="method")
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    form=st.sampled_from(["method", "function"]),
)
def test_detach_keeps_dtype_and_values(device, spec, requires_grad, form):
    """The expected values come from an independent build of the same spec
    (NumPy storage, then the view chain), never from ``detach`` itself, and
    are compared bit for bit over every value class (NaN, +-Inf, -0.0,
    subnormals, extremes).

    Kills: a detach that converts dtype, moves device or alters values
    (zeros, a flushed -0.0, a canonicalised NaN), in either calling form."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    want = spec.build(device)
    d = t.detach() if form == "method" else torch.detach(t)
    assert d.dtype == t.dtype, f"detach() changed dtype {t.dtype} -> {d.dtype}"
    assert d.device == t.device, "detach() moved the tensor"
    assert_same_bits(d, want, "t.detach() keeps t's values")


@pytest.mark.claim("detach.never-requires-grad", "detach.is-leaf")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC)  # issue 29: every tensor kind
@given(spec=tensor_specs(requires_grad=True), kind=st.sampled_from(TENSOR_KINDS))
def test_detach_never_requires_grad_and_is_leaf(device, spec, kind):
    """Kills: a detach that keeps requires_grad or grad_fn, for leaves,
    non-leaf views, Parameters, subclasses or inference tensors."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    d = t.detach()
    assert d.requires_grad is False, "detach() result requires grad"
    assert d.grad_fn is None, f"detach() result has grad_fn {d.grad_fn}"
    assert d.is_leaf, "detach() result is not a leaf"


@pytest.mark.claim("detach.inplace-error-when-saved")
@pytest.mark.observes("backward")
@grid_examples(dtypes=DIFFERENTIABLE, where=lambda s: not any(v[0] == "expand" for v in s.views))
@given(spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS, requires_grad=True))
def test_detach_inplace_after_save_raises(device, spec):
    """Kills: a detach that does not share the version counter (the mutation
    would go unnoticed and backward would return a silently wrong gradient)."""
    x = spec.build(device, requires_grad=True, leaf=True)
    loss = (x * x).sum()  # mul saves x for backward
    if loss.is_complex():
        loss = loss.real
    x.detach().add_(1)
    with raises_with(RuntimeError, "modified by an inplace operation"):
        loss.backward()


_METADATA_OPS = ("resize_", "resize_as_", "set_", "transpose_")


def _metadata_change(d: torch.Tensor, op: str, other: torch.Tensor) -> torch.Tensor:
    calls = {
        "resize_": lambda: d.resize_(7),
        "resize_as_": lambda: d.resize_as_(other),
        "set_": lambda: d.set_(other),
        "transpose_": lambda: d.transpose_(0, 1),
    }
    return calls[op]()


def _two_dims_non_empty(spec) -> bool:
    """The metadata tests' shapes: at least two dimensions, every side >= 1."""
    return len(spec.shape) >= 2 and min(spec.shape) >= 1


@pytest.mark.claim("detach.metadata-change-raises")
@domain_examples(where=_two_dims_non_empty, op="transpose_")  # issue 29
@given(
    spec=tensor_specs(shape=shapes(min_dims=2, min_side=1)),
    op=st.sampled_from(_METADATA_OPS),
)
def test_detach_metadata_change_raises(device, spec, op):
    """The seed's claim as stated. Stale since torch 1.13: recorded in
    expectations, pinned by ``detach.metadata-change-allowed``."""
    t = spec.build(device)
    d = t.detach()
    other = torch.zeros(3, dtype=t.dtype, device=device)
    with pytest.raises(RuntimeError):
        _metadata_change(d, op, other)


@pytest.mark.claim("detach.metadata-change-allowed")
@domain_examples(where=_two_dims_non_empty, op="transpose_", requires_grad=False)  # issue 29
@given(
    spec=tensor_specs(shape=shapes(min_dims=2, min_side=1), values="all"),
    op=st.sampled_from(_METADATA_OPS),
    requires_grad=st.booleans(),
)
def test_detach_metadata_change_allowed(device, spec, op, requires_grad):
    """Pins today's behaviour (PR #83590, torch 1.13): the metadata change
    succeeds, returns the detached tensor, gives it the new shape (and, for
    ``set_``, the other tensor's storage), and leaves the source's shape,
    strides, storage offset and values (bit for bit) as they were.

    Kills: a return to raising (the stale seed claim), or a metadata change
    that leaks into the source it was detached from."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    want = spec.build(device)
    meta = (tuple(t.shape), t.stride(), t.storage_offset())
    d = t.detach()
    other = torch.zeros(3, dtype=t.dtype, device=device)
    out = _metadata_change(d, op, other)
    assert out is d, f"detach().{op} did not return the detached tensor itself"
    expected_shape = {
        "resize_": (7,),
        "resize_as_": (3,),
        "set_": (3,),
        "transpose_": (meta[0][1], meta[0][0], *meta[0][2:]),
    }[op]
    assert tuple(d.shape) == expected_shape, f"detach().{op} gave shape {tuple(d.shape)}"
    if op == "set_":
        assert d.data_ptr() == other.data_ptr(), "detach().set_(other) does not use other's storage"
    assert (tuple(t.shape), t.stride(), t.storage_offset()) == meta, (
        f"detach().{op} changed the source's shape, strides or storage offset"
    )
    assert_same_bits(t, want, f"detach().{op} leaves the source's values unchanged")


@pytest.mark.claim("detach.parameter-sees-optimizer-step")
@grid_examples(
    dtypes=(torch.float32, torch.float64),
    where=lambda s: math.prod(s.shape) > 0 and not any(v[0] == "expand" for v in s.views),
    lr=0.5,
)
# Issue 29: every layout a Parameter can be stepped in place and every
# differentiable family (float16, bfloat16, complex too).
@domain_examples(dtypes=DIFFERENTIABLE, where=writable_non_empty, lr=0.5)
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, views=False, shape=shapes(min_dims=1, min_side=1)),
    lr=st.sampled_from([0.1, 0.5, 1.0]),
)
def test_detach_of_parameter_sees_optimizer_step(device, spec, lr):
    """Kills: a detach that snapshots a Parameter (copy), so optimizer updates
    are not seen through it."""
    p = torch.nn.Parameter(spec.build(device))
    w = p.detach()
    before = element_bytes(p)  # raw bytes: no detach/clone instrument in the check
    p.grad = torch.ones_like(p)
    torch.optim.SGD([p], lr=lr).step()
    after = element_bytes(p)
    assume(not np.array_equal(after, before))  # the step changed something representable
    assert np.array_equal(element_bytes(w), after), (
        "detach() of a Parameter did not see the optimizer step"
    )


@pytest.mark.claim("detach.drops-forward-ad-tangent")
# make_dual refuses overlapping (expanded) primals; that is not what the claim is about.
# Issue 29: every other layout and differentiable family, the dual itself and
# an op's result.
@domain_examples(dtypes=DIFFERENTIABLE, where=not_expanded, through_op=False)
@domain_examples(dtypes=DIFFERENTIABLE, where=not_expanded, through_op=True)
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    through_op=st.booleans(),
)
def test_detach_drops_forward_ad_tangent(device, spec, through_op):
    """Kills: a detach that forwards the dual tangent (forward-mode AD history
    leaking through a detached tensor)."""
    import torch.autograd.forward_ad as fwad

    primal = spec.build(device)
    with fwad.dual_level():
        dual = fwad.make_dual(primal, torch.ones_like(primal))
        if through_op:
            dual = dual * 2
        assert fwad.unpack_dual(dual).tangent is not None, "the dual tensor has no tangent"
        assert fwad.unpack_dual(dual.detach()).tangent is None, (
            "detach() kept the forward-AD tangent"
        )
        assert fwad.unpack_dual(dual).tangent is not None, "detach() removed the source's tangent"
