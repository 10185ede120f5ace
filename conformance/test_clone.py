"""Properties of ``torch.clone`` / ``Tensor.clone`` (claims in ``claims/clone.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    capture_warnings,
    raises_with,
    shares_storage,
    shares_version_counter,
    writes_visible,
)
from conformance.model import Model, is_contiguous
from strategies import ARITHMETIC, DIFFERENTIABLE, grid_examples, is_dense, shapes, tensor_specs
from strategies.domains import (
    DOMAIN_SPEC,
    DOMAIN_SPEC_COMPLEX,
    MATH_BITS,
    TENSOR_KINDS,
    build_kind,
    domain_examples,
    math_bit_of,
    tensor_kind_of,
    value_examples,
    with_math_bit,
)
from strategies.layouts import non_dense_specs

# Non-dense by construction (an assume(not is_dense) rejected 70% of draws),
# over every value class (NaN, +-Inf, -0.0, subnormals, extremes).
NON_DENSE_SPECS = non_dense_specs(values="all")


#: The tensor kinds that require grad (clone.gradient-flows-to-input).
_GRAD_KINDS = ("leaf", "non_leaf", "parameter")


def _grad_for(t: torch.Tensor) -> torch.Tensor:
    """A gradient with a non-constant 0/1 pattern (exact in every float dtype)."""
    n = t.numel()
    idx = torch.arange(n, device=t.device)
    g = ((idx * 7 + 3) % 5 < 2).reshape(t.shape).to(t.dtype)
    if t.dtype.is_complex:
        g = g + 1j * (idx % 3 == 0).reshape(t.shape).to(t.dtype)
    return g


def _overlaps_itself(t: torch.Tensor) -> bool:
    """True when a dimension of size > 1 has stride 0 (an expanded view)."""
    return any(s > 1 and st_ == 0 for s, st_ in zip(t.shape, t.stride(), strict=True))


def _stride_order_kept(t: torch.Tensor, c: torch.Tensor) -> bool:
    """True when, among dims of size > 1, stride(i) > stride(j) in t implies it in c."""
    dims = [i for i in range(t.dim()) if t.shape[i] > 1]
    return all(c.stride(i) > c.stride(j) for i in dims for j in dims if t.stride(i) > t.stride(j))


@pytest.mark.claim("clone.new-storage")
@grid_examples(grid_values="all", kind="plain", math_bit="none", call="method")
# Issue 29: every tensor kind, math bit and calling form, by construction.
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, math_bit="none", call="method")
@value_examples("math_bit", MATH_BITS, spec=DOMAIN_SPEC_COMPLEX, kind="leaf", call="function")
@value_examples("call", ("method", "function"), spec=DOMAIN_SPEC, kind="non_leaf", math_bit="none")
@given(
    spec=tensor_specs(values="all"),
    kind=st.sampled_from(TENSOR_KINDS),
    math_bit=st.sampled_from(MATH_BITS),
    call=st.sampled_from(["method", "function"]),
)
def test_clone_new_storage(device, spec, kind, math_bit, call):
    """Kills: a clone that aliases its input (always, or for views, expanded,
    0-d or zero-size inputs, one dtype family, Parameters, subclasses,
    inference tensors, conjugate / negative-bit views, or in one calling
    form), or a lazy clone whose writes leak through."""
    t = with_math_bit(build_kind(spec, device, kind), math_bit)
    evidence.features(tensor_kind=tensor_kind_of(t), math_bit=math_bit_of(t), call_form=call)
    c = t.clone() if call == "method" else torch.clone(t)
    assert c is not t, "clone() returned its input"
    assert not shares_storage(c, t), "clone() result shares storage with its input"
    # A __torch_function__ subclass's clone is the fresh clone re-wrapped by
    # the default __torch_function__ (as_subclass), a view of that fresh
    # tensor: a view, but never of t's storage (the claim's note).
    assert c._base is None or (
        tensor_kind_of(t) == "subclass" and not shares_storage(c._base, t)
    ), "clone() result is a view"
    if t.numel():
        assert not writes_visible(c, t), "a write to the clone is visible in its input"
        with torch.inference_mode(t.is_inference()):  # an inference tensor is written inside it
            assert not writes_visible(t, c), "a write to the input is visible in its clone"


@pytest.mark.claim("clone.same-values-dtype-shape-device")
@domain_examples(requires_grad=False, call="function")
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    call=st.sampled_from(["method", "function"]),
)
def test_clone_same_values_dtype_shape_device(device, spec, requires_grad, call):
    """Values are compared bit for bit (NaN, +-Inf, -0.0, subnormals and the
    dtype's extremes are drawn) against an independent build of the spec.

    Kills: a clone that converts dtype, moves device, reshapes or alters values
    (e.g. reads a strided/expanded input in the wrong order, flushes -0.0 or
    subnormals, canonicalises NaNs), in either calling form."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    c = t.clone() if call == "method" else torch.clone(t)
    assert c.dtype == t.dtype, f"clone() changed dtype {t.dtype} -> {c.dtype}"
    assert c.device == t.device, "clone() moved the tensor"
    assert c.shape == t.shape, f"clone() changed shape {t.shape} -> {c.shape}"
    assert_same_bits(c, spec.build(device), "clone() changed the values")


@pytest.mark.claim("clone.requires-grad-follows-input")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC)  # issue 29: every tensor kind
@given(spec=tensor_specs(), kind=st.sampled_from(TENSOR_KINDS))
def test_clone_requires_grad_follows_input(device, spec, kind):
    """Kills: a clone that drops requires_grad (detaches), that invents it for
    inputs not requiring grad, or that returns a leaf cut from the graph, for
    some tensor kind (leaves, non-leaves, Parameters, subclasses, inference
    tensors)."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    c = t.clone()
    assert c.requires_grad == t.requires_grad, (
        f"clone() requires_grad {c.requires_grad} differs from its input's {t.requires_grad}"
    )
    if t.requires_grad:
        assert c.grad_fn is not None, "clone() of a tensor requiring grad has no grad_fn"
        assert not c.is_leaf, "clone() of a tensor requiring grad is a leaf"
    else:
        assert c.grad_fn is None, f"clone() of a tensor not requiring grad has grad_fn {c.grad_fn}"
        assert c.is_leaf, "clone() of a tensor not requiring grad is not a leaf"


@pytest.mark.claim("clone.gradient-flows-to-input")
@pytest.mark.observes("backward", "to")
# Issue 29: every layout family, and leaf, non-leaf and Parameter inputs.
@domain_examples(dtypes=DIFFERENTIABLE, kind="non_leaf")
@value_examples("kind", _GRAD_KINDS, spec=DOMAIN_SPEC)
@given(spec=tensor_specs(requires_grad=True), kind=st.sampled_from(_GRAD_KINDS))
def test_clone_gradient_flows_to_input(device, spec, kind):
    """Kills: a clone whose backward drops, scales, reorders or re-strides the
    gradient (for some layout), or that does not connect to a non-leaf
    (view) input or a Parameter."""
    x = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(x))
    c = x.clone()
    g = _grad_for(c)
    (gx,) = torch.autograd.grad(c, x, grad_outputs=g)
    assert_same_bits(gx, g, "gradient through clone() is not the identity")


@pytest.mark.claim("clone.own-grad-stays-none")
@pytest.mark.observes("backward", "to")
@domain_examples(dtypes=DIFFERENTIABLE)  # issue 29: every layout, every differentiable family
@given(spec=tensor_specs(requires_grad=True))
def test_clone_own_grad_stays_none(device, spec):
    """Kills: a clone that is a leaf of its own (x.grad not populated) or whose
    .grad is populated by backward, or a missing non-leaf .grad warning."""
    x = spec.build(device, requires_grad=True, leaf=True)
    c = x.clone()
    g = _grad_for(c)
    c.backward(g)
    assert x.grad is not None, "backward through clone() missed x.grad"
    assert_same_bits(x.grad, g, "backward through clone() missed x.grad")
    with capture_warnings() as caught:
        cg = c.grad
    assert cg is None, "the clone's own .grad was populated by backward"
    assert any(
        issubclass(w.category, UserWarning) and "is not a leaf Tensor" in str(w.message)
        for w in caught
    ), "reading the clone's .grad did not warn that it is not a leaf"


@pytest.mark.claim("clone.requires-grad-on-clone-is-new-leaf")
@pytest.mark.observes("backward", "to")
@domain_examples(dtypes=DIFFERENTIABLE)  # issue 29: every layout, every differentiable family
@given(spec=tensor_specs(dtype=DIFFERENTIABLE))
def test_clone_requires_grad_on_clone_is_new_leaf(device, spec):
    """Kills: a clone of a non-grad tensor that is not a leaf (requires_grad_
    would raise), does not receive .grad, or leaks requires_grad/grad to x."""
    x = spec.build(device)
    c = x.clone().requires_grad_()
    assert c.is_leaf and c.requires_grad, "x.clone().requires_grad_() is not a leaf requiring grad"
    y = c * 2
    g = _grad_for(y)
    y.backward(g)
    assert c.grad is not None and torch.equal(c.grad, g * 2), "the new leaf did not get .grad"
    assert x.grad is None, "the gradient reached the source of the clone"
    assert not x.requires_grad, "requires_grad_() on the clone changed its source"


@pytest.mark.claim("clone.own-version-counter")
@grid_examples(grid_values="all", requires_grad=False, bump="clone")
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    bump=st.sampled_from(["clone", "input"]),
)
def test_clone_own_version_counter(device, spec, requires_grad, bump):
    """Kills: a clone that shares its input's version counter (as views and
    detach() do), which would make unrelated in-place ops fail backward."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    c = t.clone()
    if bump == "clone":
        assert not shares_version_counter(c, t), "clone() shares its input's version counter"
    else:
        assert not shares_version_counter(t, c), "clone() shares its input's version counter"


@pytest.mark.claim("clone.own-version-counter")
@given(spec=tensor_specs(dtype=ARITHMETIC, shape=shapes(min_side=1), values="all"))
def test_clone_inplace_leaves_input_version(device, spec):
    """The input is checked bit for bit over every value class (add_ on the
    clone may overflow or make NaN; only the input's bits matter).

    Kills: an in-place op on a clone that bumps (or writes) its input."""
    t = spec.build(device)
    before = t._version
    c = t.clone()
    c.add_(1)
    assert t._version == before, "in-place op on clone() bumped its input's version"
    assert_same_bits(t, spec.build(device), "in-place op on clone() changed its input")


@pytest.mark.claim("clone.preserve-format-dense-keeps-strides")
# Issue 29: every dense layout family and dtype family, and each calling form, by construction.
@domain_examples(where=lambda s: is_dense(s.build("cpu")), call="method")
@value_examples("call", ("method", "function", "explicit"), spec=DOMAIN_SPEC)
@given(spec=tensor_specs(), call=st.sampled_from(["method", "function", "explicit"]))
def test_clone_preserve_format_dense_keeps_strides(device, spec, call):
    """Kills: a clone that normalises dense permuted/channels_last inputs to
    row-major, or whose default is not preserve_format."""
    t = spec.build(device)
    assume(is_dense(t))
    evidence.features(call_form={"explicit": "keyword"}.get(call, call))
    c = {
        "method": lambda: t.clone(),
        "function": lambda: torch.clone(t),
        "explicit": lambda: t.clone(memory_format=torch.preserve_format),
    }[call]()
    assert c.stride() == t.stride(), (
        f"clone() of a dense tensor changed strides {t.stride()} -> {c.stride()}"
    )


@pytest.mark.claim("clone.preserve-format-non-dense-contiguous")
@domain_examples(where=lambda s: not is_dense(s.build("cpu")))  # issue 29: every non-dense family
@domain_examples(dtypes=(torch.bool, torch.bfloat16), where=lambda s: not is_dense(s.build("cpu")))
@given(spec=NON_DENSE_SPECS)
def test_clone_preserve_format_non_dense_contiguous(device, spec):
    """The docstring's sentence as stated. Torch keeps the stride permutation
    instead (recorded in expectations; pinned by the characterization below).

    Kills: a clone that returns non-contiguous output for non-dense input."""
    t = spec.build(device)
    assert not is_dense(t), f"test bug: a dense input {t.stride()} from NON_DENSE_SPECS"
    evidence.features(
        observed_rule_row_major=is_contiguous(
            tuple(t.shape), Model().preserve_format_strides(tuple(t.shape), t.stride())
        )
    )
    c = t.clone()
    assert_same_bits(c, spec.build(device), "clone() of a non-dense input changed the values")
    assert c.is_contiguous(), (
        f"clone() of a non-dense input is not contiguous: strides {t.stride()} -> {c.stride()}"
    )


@pytest.mark.claim("clone.preserve-format-non-dense-keeps-stride-order")
@domain_examples(where=lambda s: not is_dense(s.build("cpu")))  # issue 29: every non-dense family
@domain_examples(dtypes=(torch.bool, torch.bfloat16), where=lambda s: not is_dense(s.build("cpu")))
@given(spec=NON_DENSE_SPECS)
def test_clone_preserve_format_non_dense_keeps_stride_order(device, spec):
    """Kills: a clone of a non-dense input that is not dense (copies the gaps
    or the stride-0 aliasing), or that no longer follows the input's stride
    order (e.g. a switch to row-major, as the docstring says)."""
    t = spec.build(device)
    assert not is_dense(t), f"test bug: a dense input {t.stride()} from NON_DENSE_SPECS"
    c = t.clone()
    assert is_dense(c), f"clone() of a non-dense input is not dense: strides {c.stride()}"
    if not _overlaps_itself(t):
        assert _stride_order_kept(t, c), (
            f"clone() of a non-dense input changed the stride order {t.stride()} -> {c.stride()}"
        )


@pytest.mark.claim("clone.explicit-memory-format")
# Issue 29: every layout and dtype family ("for any input") and both calling
# forms, by construction.
@domain_examples(grid_values="all", fmt="contiguous_format", requires_grad=False, call="method")
@value_examples(
    "call", ("method", "function"), spec=DOMAIN_SPEC, fmt="contiguous_format", requires_grad=True
)
@given(
    spec=tensor_specs(values="all"),
    fmt=st.sampled_from(["contiguous_format", "channels_last"]),
    requires_grad=st.booleans(),
    call=st.sampled_from(["method", "function"]),
)
def test_clone_explicit_memory_format(device, spec, fmt, requires_grad, call):
    """Kills: a clone that ignores an explicit memory_format (e.g. keeps
    the input's strides), in either calling convention (``t.clone(...)`` or
    ``torch.clone(t, ...)``), or loses values while re-laying them out."""
    if fmt == "channels_last":
        assume(len(spec.shape) == 4)
    evidence.features(call_form=call)
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    mf = getattr(torch, fmt)
    c = t.clone(memory_format=mf) if call == "method" else torch.clone(t, memory_format=mf)
    assert c.is_contiguous(memory_format=mf), f"clone(memory_format={fmt}) is not in that format"
    assert_same_bits(c, spec.build(device), f"clone(memory_format={fmt}) changed values")
    assert c.requires_grad == t.requires_grad, f"clone(memory_format={fmt}) changed requires_grad"


@pytest.mark.claim("clone.explicit-memory-format")
@given(spec=tensor_specs(shape=shapes(min_dims=4, max_dims=4), values="all"))
def test_clone_channels_last_of_4d(device, spec):
    """Kills: clone(memory_format=channels_last) that ignores the format on
    4-D inputs (the generic property above only sees some 4-D draws)."""
    t = spec.build(device)
    c = t.clone(memory_format=torch.channels_last)
    assert c.is_contiguous(memory_format=torch.channels_last), (
        "clone(memory_format=channels_last) is not channels_last"
    )
    assert_same_bits(c, spec.build(device), "clone(memory_format=channels_last) changed values")


@pytest.mark.claim("clone.channels-last-needs-rank-4")
@domain_examples(where=lambda s: len(s.shape) < 4)  # issue 29: every layout of rank 0-3
@given(spec=tensor_specs(shape=shapes(max_dims=3)))
def test_clone_channels_last_needs_rank_4(device, spec):
    """Kills: a clone that silently accepts channels_last for a non-4-D tensor."""
    t = spec.build(device)
    with raises_with(RuntimeError, "required rank 4 tensor to use channels_last format"):
        t.clone(memory_format=torch.channels_last)
