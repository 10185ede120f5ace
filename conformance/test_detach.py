"""Properties of ``Tensor.detach`` (claims in ``claims/detach.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.checks import raises_with, shares_storage, writes_visible
from strategies import DIFFERENTIABLE, NON_OVERLAPPING_VIEWS, grid_examples, shapes, tensor_specs


@pytest.mark.claim("detach.shares-storage")
@grid_examples(requires_grad=True, form="method")
@given(
    spec=tensor_specs(),
    requires_grad=st.booleans(),
    form=st.sampled_from(["method", "function"]),
)
def test_detach_shares_storage(device, spec, requires_grad, form):
    """Kills: a detach that copies (always, or for some layout/dtype/autograd
    state, or in one calling convention: ``t.detach()`` vs ``torch.detach(t)``)."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    d = t.detach() if form == "method" else torch.detach(t)
    assert shares_storage(d, t), "detach() result does not share storage with its input"
    assert d.data_ptr() == t.data_ptr(), "detach() result starts at a different address"
    assert (d.shape, d.stride(), d.storage_offset()) == (t.shape, t.stride(), t.storage_offset()), (
        "detach() changed shape, strides or storage offset"
    )


@pytest.mark.claim("detach.writes-visible-both-ways")
@grid_examples(where=lambda s: math.prod(s.shape) > 0, requires_grad=False, direction="to-source")
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    requires_grad=st.booleans(),
    direction=st.sampled_from(["to-source", "to-detached"]),
)
def test_detach_writes_visible_both_ways(device, spec, requires_grad, direction):
    """Kills: a detach that copies, or that copies on write (lazy clone)."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    d = t.detach()
    if direction == "to-source":
        assert writes_visible(d, t), "a write through detach() is not visible in the source"
    else:
        assert writes_visible(t, d), "a write to the source is not visible through detach()"


@pytest.mark.claim("detach.keeps-dtype-and-values")
@given(spec=tensor_specs(), requires_grad=st.booleans())
def test_detach_keeps_dtype_and_values(device, spec, requires_grad):
    """Kills: a detach that converts dtype, moves device or alters values."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    d = t.detach()
    assert d.dtype == t.dtype, f"detach() changed dtype {t.dtype} -> {d.dtype}"
    assert d.device == t.device, "detach() moved the tensor"
    assert torch.equal(d, t.detach()), "detach() changed the values"


@pytest.mark.claim("detach.never-requires-grad", "detach.is-leaf")
@given(spec=tensor_specs(requires_grad=True), requires_grad=st.booleans(), leaf=st.booleans())
def test_detach_never_requires_grad_and_is_leaf(device, spec, requires_grad, leaf):
    """Kills: a detach that keeps requires_grad or grad_fn, for leaves or non-leaf views."""
    t = spec.build(device, requires_grad=requires_grad, leaf=leaf)
    if not leaf and requires_grad:
        t = t * 1  # a non-leaf with a grad_fn even when the spec has no views
    d = t.detach()
    assert d.requires_grad is False, "detach() result requires grad"
    assert d.grad_fn is None, f"detach() result has grad_fn {d.grad_fn}"
    assert d.is_leaf, "detach() result is not a leaf"


@pytest.mark.claim("detach.inplace-error-when-saved")
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


@pytest.mark.claim("detach.metadata-change-raises")
@given(
    spec=tensor_specs(shape=shapes(min_dims=2, min_side=1)),
    op=st.sampled_from(["resize_", "resize_as_", "set_", "transpose_"]),
)
def test_detach_metadata_change_raises(device, spec, op):
    """The seed's claim as stated. Stale since torch 1.13: recorded in expectations."""
    t = spec.build(device)
    d = t.detach()
    other = torch.zeros(3, dtype=t.dtype, device=device)
    calls = {
        "resize_": lambda: d.resize_(7),
        "resize_as_": lambda: d.resize_as_(other),
        "set_": lambda: d.set_(other),
        "transpose_": lambda: d.transpose_(0, 1),
    }
    with pytest.raises(RuntimeError):
        calls[op]()


@pytest.mark.claim("detach.parameter-sees-optimizer-step")
@given(
    spec=tensor_specs(
        dtype=(torch.float32, torch.float64), views=False, shape=shapes(min_dims=1, min_side=1)
    ),
    lr=st.sampled_from([0.1, 0.5, 1.0]),
)
def test_detach_of_parameter_sees_optimizer_step(device, spec, lr):
    """Kills: a detach that snapshots a Parameter (copy), so optimizer updates
    are not seen through it."""
    p = torch.nn.Parameter(spec.build(device))
    w = p.detach()
    before = w.clone()
    p.grad = torch.ones_like(p)
    torch.optim.SGD([p], lr=lr).step()
    assume(not torch.equal(p.detach(), before))  # the step changed something representable
    assert torch.equal(w, p.detach()), "detach() of a Parameter did not see the optimizer step"


@pytest.mark.claim("detach.drops-forward-ad-tangent")
# make_dual refuses overlapping (expanded) primals; that is not what the claim is about.
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
