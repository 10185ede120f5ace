"""Properties of ``Tensor.to``, ``cpu()``, ``type()`` and ``contiguous()``
(claims in ``claims/to.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import assert_same_bits, capture_warnings, shares_storage
from strategies import (
    ALL_DTYPES,
    DIFFERENTIABLE,
    INTEGRAL,
    grid_examples,
    is_dense,
    layout_grid,
    shapes,
    small_int_specs,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    TENSOR_KINDS,
    build_kind,
    domain_examples,
    tensor_kind_of,
    value_examples,
)
from strategies.layouts import (
    channels_last_contiguous_specs,
    non_dense_specs,
    not_row_major_specs,
)

FOUR_D = shapes(min_dims=4, max_dims=4)


def _grad_for(t: torch.Tensor, *, real: bool = False) -> torch.Tensor:
    """A 0/1-patterned gradient (exact in every float dtype); complex parts
    only when ``real`` is False."""
    n = t.numel()
    idx = torch.arange(n, device=t.device)
    g = ((idx * 7 + 3) % 5 < 2).reshape(t.shape).to(t.dtype)
    if t.dtype.is_complex and not real:
        g = g + 1j * (idx % 3 == 0).reshape(t.shape).to(t.dtype)
    return g


def _is_row_major(t: torch.Tensor) -> bool:
    """Independent contiguity oracle: strides of the size > 1 dims are the
    row-major ones (zero-size tensors are contiguous)."""
    if t.numel() == 0:
        return True
    expected = 1
    for size, stride in reversed(list(zip(t.shape, t.stride(), strict=True))):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _non_leaf_grad_warns(t: torch.Tensor) -> tuple[object, bool]:
    """Read ``t.grad``; return it and whether the non-leaf UserWarning fired."""
    with capture_warnings() as caught:
        grad = t.grad
    warned = any(
        issubclass(w.category, UserWarning) and "is not a leaf Tensor" in str(w.message)
        for w in caught
    )
    return grad, warned


@st.composite
def conversions(draw):
    """(spec, target dtype): spec of small integers, target a different dtype."""
    src = draw(st.sampled_from(ALL_DTYPES))
    dst = draw(st.sampled_from([d for d in ALL_DTYPES if d != src]))
    hi = 1 if torch.bool in (src, dst) else 100
    return draw(small_int_specs(tensor_specs(dtype=src), hi)), dst


SAME_FORMS = (
    "dtype",
    "device",
    "device-str",
    "device-dtype",
    "keywords",
    "other",
    "preserve_format",
    "non_blocking",
    "copy=False",
)


def _to_same(t: torch.Tensor, form: str) -> torch.Tensor:
    return {
        "dtype": lambda: t.to(t.dtype),
        "device": lambda: t.to(t.device),
        "device-str": lambda: t.to(str(t.device)),
        "device-dtype": lambda: t.to(t.device, t.dtype),
        "keywords": lambda: t.to(device=t.device, dtype=t.dtype),
        "other": lambda: t.to(torch.empty(0, dtype=t.dtype, device=t.device)),
        "preserve_format": lambda: t.to(memory_format=torch.preserve_format),
        "non_blocking": lambda: t.to(t.dtype, non_blocking=True),
        "copy=False": lambda: t.to(t.dtype, copy=False),
    }[form]()


@pytest.mark.claim("to.same-dtype-device-returns-self")
@grid_examples(kind="plain", form="dtype")
# Issue 29: every tensor kind, and every spelling (positional and keyword).
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, form="device-dtype")
@value_examples("form", SAME_FORMS, spec=DOMAIN_SPEC, kind="leaf")
@given(
    spec=tensor_specs(),
    kind=st.sampled_from(TENSOR_KINDS),
    form=st.sampled_from(SAME_FORMS),
)
def test_to_same_dtype_device_returns_self(device, spec, kind, form):
    """Kills: a to() that copies (or returns a new alias) when nothing needs
    converting, for some spelling (positional or keyword), layout, dtype or
    tensor kind (leaves, non-leaves, Parameters, subclasses, inference
    tensors)."""
    t = build_kind(spec, device, kind)
    evidence.features(
        tensor_kind=tensor_kind_of(t), call_form="keyword" if form == "keywords" else "method"
    )
    assert _to_same(t, form) is t, f"to() ({form}) with matching dtype/device did not return self"


def _conversion_grid(fn):
    """One ``@example(case=...)`` per (dtype, layout) of :func:`layout_grid`,
    holding small integers (exact in every dtype), each converted to the
    next dtype of ``ALL_DTYPES`` (so every dtype is a target too)."""
    from hypothesis import example

    for spec in layout_grid():
        target = ALL_DTYPES[(ALL_DTYPES.index(spec.dtype) + 1) % len(ALL_DTYPES)]
        hi = 1 if torch.bool in (spec.dtype, target) else 100
        values = tuple(i % (hi + 1) for i in range(len(spec.storage)))
        case = (dataclasses.replace(spec, storage=values), target)
        fn = example(case=case, form="dtype")(fn)
    return fn


@pytest.mark.claim("to.conversion-copies")
@_conversion_grid
@given(case=conversions(), form=st.sampled_from(["dtype", "keywords", "device-dtype", "other"]))
def test_to_conversion_copies(device, case, form):
    """Kills: a dtype conversion that aliases the source, keeps the old dtype,
    mangles values for some dtype pair or layout, or writes the source."""
    spec, dtype = case
    t = spec.build(device)
    with capture_warnings():  # complex -> real warns about the (zero) imaginary part
        y = {
            "dtype": lambda: t.to(dtype),
            "keywords": lambda: t.to(dtype=dtype),
            "device-dtype": lambda: t.to(t.device, dtype),
            "other": lambda: t.to(torch.empty(0, dtype=dtype, device=t.device)),
        }[form]()
    assert y is not t and not shares_storage(y, t), "to(other dtype) did not copy"
    assert y.dtype == dtype, f"to({dtype}) returned dtype {y.dtype}"
    assert y.shape == t.shape and y.device == t.device, "to(other dtype) changed shape or device"
    # Small integers convert exactly, so NumPy builds the expectation; a
    # conversion is not bit-preserving, so special values are not drawn here.
    expected = dataclasses.replace(spec, dtype=dtype).build(device)
    assert_same_bits(y, expected, f"to() {t.dtype} -> {dtype} changed the values")
    assert_same_bits(t, spec.build(device), "to(other dtype) modified its source")


@pytest.mark.claim("to.dtype-change-in-graph")
@pytest.mark.observes("backward")
# Issue 29: every layout, every differentiable family, by construction.
@domain_examples(
    dtypes=DIFFERENTIABLE, where=lambda s: s.dtype != torch.complex128, target=torch.complex128
)
@given(spec=tensor_specs(requires_grad=True), target=st.sampled_from(DIFFERENTIABLE))
def test_to_dtype_change_in_graph(device, spec, target):
    """Kills: a dtype conversion that detaches (leaf result, no gradient for
    the source), fills the converted tensor's own .grad, or mis-converts the
    gradient back to the source dtype."""
    assume(target != spec.dtype)  # the sentence speaks of another dtype
    x = spec.build(device, requires_grad=True, leaf=True)
    with capture_warnings():  # complex -> real (forward, or the gradient back)
        y = x.to(target)
        assert y.requires_grad and not y.is_leaf and y.grad_fn is not None, (
            "to(other dtype) of a tensor requiring grad is not a non-leaf in the graph"
        )
        g = _grad_for(y, real=True)  # real-valued, so every conversion is exact
        y.backward(g)
        expected = g.to(x.dtype)
    assert x.grad is not None, "gradient through to(other dtype) did not reach the source"
    assert_same_bits(
        x.grad, expected, "gradient through to(other dtype) did not reach the source converted"
    )
    grad, _ = _non_leaf_grad_warns(y)
    assert grad is None, "the converted tensor's own .grad was populated"


@pytest.mark.claim("to.cuda-move-is-non-leaf")
@pytest.mark.observes("backward")
@domain_examples(dtypes=DIFFERENTIABLE)  # issue 29: every layout, every differentiable family
@given(spec=tensor_specs(requires_grad=True))
def test_to_cuda_is_non_leaf(device, spec):
    """Kills: a device move that returns a leaf (so the CPU tensor never gets
    its gradient) or populates the moved copy's .grad.

    The claim is about moving a CPU leaf, so the source is built on "cpu"."""
    x = spec.build("cpu", requires_grad=True, leaf=True)
    y = x.to(device)
    assert y.device.type == torch.device(device).type, "to(device) did not move the tensor"
    assert not y.is_leaf and y.grad_fn is not None, "to(device) of a leaf requiring grad is a leaf"
    g = _grad_for(y)
    y.backward(g)
    assert x.grad is not None, "x.grad missed the gradient"
    assert_same_bits(x.grad, g, "x.grad missed the gradient")
    grad, warned = _non_leaf_grad_warns(y)
    assert grad is None, "the moved tensor's own .grad was populated"
    assert warned, "reading the moved tensor's .grad did not warn that it is not a leaf"


@pytest.mark.claim("to.created-on-cuda-is-leaf")
@pytest.mark.observes("backward", "tensor")
# issue 29: every differentiable dtype family (the values' layout does not reach torch.tensor)
@domain_examples(dtypes=DIFFERENTIABLE, where=lambda s: all(n > 0 for n in s.shape))
@given(spec=tensor_specs(requires_grad=True, shape=shapes(min_side=1)))
def test_created_on_cuda_is_leaf(device, spec):
    """Kills: a factory on the accelerator that records a hidden host-to-device
    op (non-leaf), or backward that leaves .grad empty or on the wrong device."""
    values = spec.build(device).tolist()
    t = torch.tensor(values, dtype=spec.dtype, device=device, requires_grad=True)
    assert t.is_leaf and t.grad_fn is None, "tensor created with requires_grad=True is not a leaf"
    y = t * 2
    g = _grad_for(y)
    y.backward(g)
    assert t.grad is not None and t.grad.device == t.device, "leaf .grad missing or on wrong device"
    assert torch.equal(t.grad, g * 2), "leaf .grad holds the wrong gradient"


@pytest.mark.claim("to.copy-true-always-copies")
@pytest.mark.observes("backward")
@grid_examples(grid_values="all", requires_grad=False, leaf=False, form="dtype")
# Issue 29, call_form: the positional and the keyword spelling, by construction.
@value_examples("form", ("device", "keywords"), spec=DOMAIN_SPEC, requires_grad=True, leaf=True)
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    leaf=st.booleans(),
    form=st.sampled_from(["dtype", "device", "other", "keywords"]),
)
def test_to_copy_true_always_copies(device, spec, requires_grad, leaf, form):
    """Values are compared bit for bit with an independent build of the
    spec, over every value class (NaN, +-Inf, -0.0, subnormals, extremes).

    Kills: a to(copy=True) that returns self or an alias when nothing needs
    converting, alters a value, or whose copy is cut from the graph."""
    evidence.features(call_form="keyword" if form == "keywords" else "method")
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE, leaf=leaf)
    y = {
        "dtype": lambda: t.to(t.dtype, copy=True),
        "device": lambda: t.to(t.device, copy=True),
        "other": lambda: t.to(torch.empty(0, dtype=t.dtype, device=t.device), copy=True),
        "keywords": lambda: t.to(device=t.device, dtype=t.dtype, copy=True),
    }[form]()
    assert y is not t, f"to(copy=True) ({form}) returned self"
    assert not shares_storage(y, t), f"to(copy=True) ({form}) shares storage with its source"
    assert_same_bits(y, spec.build(device), "to(copy=True) changed dtype or values")
    assert y.requires_grad == t.requires_grad, "to(copy=True) changed requires_grad"
    if t.requires_grad:
        assert not y.is_leaf and y.grad_fn is not None, "to(copy=True) is cut from the graph"
        g = _grad_for(y)
        (gt,) = torch.autograd.grad(y, t, grad_outputs=g)
        assert_same_bits(gt, g, "gradient of to(copy=True) does not reach its source")


@pytest.mark.claim("to.integer-dtype-drops-requires-grad")
# Issue 29: every layout and differentiable family, leaves and non-leaves, by construction.
@domain_examples(dtypes=DIFFERENTIABLE, leaf=True, target=torch.int64)
@value_examples("leaf", (True, False), spec=DOMAIN_SPEC, target=torch.bool)
@given(
    spec=tensor_specs(requires_grad=True),
    leaf=st.booleans(),
    target=st.sampled_from((torch.bool, *INTEGRAL)),
)
def test_to_integer_dtype_drops_requires_grad(device, spec, leaf, target):
    """Kills: an integral conversion that keeps requires_grad (or a grad_fn),
    or that raises because integers cannot require grad."""
    evidence.features(tensor_kind="leaf" if leaf else "non_leaf")
    t = spec.build(device, requires_grad=True, leaf=leaf)
    with capture_warnings():  # complex -> integer warns about the imaginary part
        y = t.to(target)
    assert y.dtype == target, f"to({target}) returned {y.dtype}"
    assert not y.requires_grad, f"to({target}) of a tensor requiring grad requires grad"
    assert y.grad_fn is None and y.is_leaf, f"to({target}) result is in the graph"


@pytest.mark.claim("to.preserve-format-keeps-strides")
# Issue 29: every dense layout and dtype family, the positional and keyword spellings.
@domain_examples(
    where=lambda s: s.dtype != torch.int16 and is_dense(s.build("cpu")),
    target=torch.int16,
    explicit=False,
)
@value_examples("explicit", (False, True), spec=DOMAIN_SPEC, target=torch.float64)
@given(
    spec=tensor_specs(),
    target=st.sampled_from(ALL_DTYPES),
    explicit=st.booleans(),
)
def test_to_preserve_format_keeps_strides(device, spec, target, explicit):
    """Kills: a dtype conversion that normalises dense permuted or channels_last
    inputs to row-major (or whose default is not preserve_format)."""
    assume(target != spec.dtype)
    t = spec.build(device)
    assume(is_dense(t))
    evidence.features(call_form="keyword" if explicit else "method")
    with capture_warnings():
        if explicit:
            y = t.to(target, memory_format=torch.preserve_format)
        else:
            y = t.to(target)
    assert y.stride() == t.stride(), (
        f"to({target}) of a dense tensor changed strides {t.stride()} -> {y.stride()}"
    )


def suggested_memory_format(t: torch.Tensor) -> torch.memory_format:
    """The memory format c10 infers from ``t``'s strides (``suggest_memory_format()``,
    which ``to()`` consults to decide whether it may return ``self``).

    A re-statement of ``c10::is_channels_last_strides_2d_s4`` (c10/core/MemoryFormat.h):
    a 4-D tensor whose strides, visited in channels_last order (C, W, H, N), never
    decrease - with NCHW the default for ambiguous size-1 and zero-size cases - is
    ``channels_last``; everything else (other ranks included) is ``contiguous_format``.
    """
    if t.dim() != 4:
        return torch.contiguous_format
    sizes, strides = t.shape, t.stride()
    if strides[1] == 0:
        return torch.contiguous_format
    lo = 0
    for d in (1, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < lo:
            return torch.contiguous_format
        if d == 0 and lo == strides[1]:
            return torch.contiguous_format
        lo = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return torch.channels_last


@pytest.mark.claim("to.memory-format-honoured")
@domain_examples(fmt="contiguous_format", target=None)  # issue 29: every layout and dtype family
@given(
    spec=tensor_specs(),
    fmt=st.sampled_from(["contiguous_format", "channels_last"]),
    target=st.sampled_from((None, *ALL_DTYPES)),
)
def test_to_memory_format_honoured(device, spec, fmt, target):
    """The docstring's memory_format argument as stated. Without a dtype change
    torch returns self when the suggested format matches (issue #62027,
    recorded in expectations; pinned by the characterization below).

    Kills: a to(memory_format=...) that ignores the requested format."""
    if fmt == "channels_last":
        assume(len(spec.shape) == 4)
    t = spec.build(device)
    mf = getattr(torch, fmt)
    evidence.features(
        dtype_change=target not in (None, spec.dtype),
        suggests_requested=suggested_memory_format(t) == mf,
        already_in_format=t.is_contiguous(memory_format=mf),
    )
    with capture_warnings():
        y = t.to(memory_format=mf) if target is None else t.to(target, memory_format=mf)
    assert y.is_contiguous(memory_format=mf), (
        f"to(memory_format={fmt}) is not in the requested memory format: strides {y.stride()}"
    )


@pytest.mark.claim("to.memory-format-alias-below-rank-4")
@grid_examples(where=lambda s: len(s.shape) < 4, requires_grad=False)
@given(spec=tensor_specs(shape=shapes(max_dims=3)), requires_grad=st.booleans())
def test_to_memory_format_alias_below_rank_4(device, spec, requires_grad):
    """Kills: a change in to()'s aliasing rule in either direction (a fix that
    copies non-contiguous inputs, or a copy of contiguous ones)."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    assert t.to(memory_format=torch.contiguous_format) is t, (
        "to(memory_format=contiguous_format) below rank 4 no longer returns self"
    )


@pytest.mark.claim("to.cpu-returns-self")
@grid_examples(kind="plain")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC)  # issue 29: every tensor kind
@given(spec=tensor_specs(), kind=st.sampled_from(TENSOR_KINDS))
def test_cpu_returns_self(device, spec, kind):
    """Kills: a cpu() that copies a tensor already in CPU memory (for some
    layout, dtype or tensor kind: leaves, non-leaves, Parameters,
    subclasses, inference tensors)."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    assert t.cpu() is t, "cpu() of a CPU tensor did not return self"


@pytest.mark.claim("to.type-returns-self")
@grid_examples(requires_grad=False, by="string")
@given(spec=tensor_specs(), requires_grad=st.booleans(), by=st.sampled_from(["string", "dtype"]))
def test_type_returns_self(device, spec, requires_grad, by):
    """Kills: a type() that copies when the type already matches."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)
    r = t.type(t.type()) if by == "string" else t.type(t.dtype)
    assert r is t, f"type() with the current type (as {by}) did not return self"


@pytest.mark.claim("to.contiguous-returns-self")
@grid_examples(requires_grad=False, leaf=False)
@given(spec=tensor_specs(), requires_grad=st.booleans(), leaf=st.booleans())
def test_contiguous_returns_self(device, spec, requires_grad, leaf):
    """Kills: a contiguous() that copies an already contiguous tensor (leaf or
    non-leaf view, 0-d, zero-size, size-1 dims with odd strides)."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE, leaf=leaf)
    assume(_is_row_major(t))
    assert t.contiguous() is t, "contiguous() of a contiguous tensor did not return self"
    assert t.contiguous(memory_format=torch.contiguous_format) is t, (
        "contiguous(contiguous_format) of a contiguous tensor did not return self"
    )


@pytest.mark.claim("to.contiguous-returns-self")
@grid_examples(
    where=lambda s: (
        len(s.shape) == 4 and s.build().is_contiguous(memory_format=torch.channels_last)
    ),
    requires_grad=False,
    leaf=False,
)
@given(
    # channels_last-contiguous by construction (bases, narrowed bases, NHWC permuted).
    spec=channels_last_contiguous_specs(),
    requires_grad=st.booleans(),
    leaf=st.booleans(),
)
def test_contiguous_channels_last_returns_self(device, spec, requires_grad, leaf):
    """Kills: contiguous(memory_format=channels_last) that copies a tensor
    already channels_last-contiguous."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE, leaf=leaf)
    assert t.is_contiguous(memory_format=torch.channels_last), "test bug: not channels_last"
    assert t.contiguous(memory_format=torch.channels_last) is t, (
        "contiguous(channels_last) of a channels_last tensor did not return self"
    )


@pytest.mark.claim("to.contiguous-copies-otherwise")
@given(fmt=st.sampled_from(["contiguous_format", "channels_last"]), data=st.data())
def test_contiguous_copies_otherwise(device, fmt, data):
    """Kills: a contiguous() that returns a non-contiguous tensor, an alias of
    its input, or values read in the wrong order. Inputs not in ``fmt`` by
    construction: not row-major ones, or non-dense 4-D ones for channels_last.
    Values are compared bit for bit over every value class."""
    mf = getattr(torch, fmt)
    if fmt == "channels_last":
        specs = non_dense_specs(
            shape=shapes(min_dims=4, max_dims=4, min_side=1, max_side=3), values="all"
        )
    else:
        specs = not_row_major_specs(values="all")
    spec = data.draw(specs, label="spec")
    t = spec.build(device)
    assert not t.is_contiguous(memory_format=mf), f"test bug: the input is already {fmt}"
    _check_contiguous_copy(t, spec, fmt, device)


def _check_contiguous_copy(t: torch.Tensor, spec, fmt: str, device) -> None:
    mf = getattr(torch, fmt)
    r = t.contiguous(memory_format=mf)
    assert r is not t and not shares_storage(r, t), f"contiguous({fmt}) did not copy"
    assert r.is_contiguous(memory_format=mf), f"contiguous({fmt}) is not in that format"
    if fmt == "contiguous_format":
        assert _is_row_major(r), "contiguous() result strides are not row-major"
    assert_same_bits(r, spec.build(device), f"contiguous({fmt}) changed dtype or values")


@pytest.mark.claim("to.contiguous-copies-otherwise")
@grid_examples(grid_values="all")
@given(spec=not_row_major_specs(values="all"))
def test_contiguous_copies_otherwise_on_grid(device, spec):
    """The dtype x layout grid (every value class), plus random specs that
    are not row-major: whichever of contiguous_format and (for 4-D inputs)
    channels_last the input is not in, contiguous(memory_format) copies into
    it, bit for bit.

    Kills: a contiguous() that returns its input or an alias, or misplaces
    values, for one dtype or one layout (offset, stepped, transposed,
    expanded, channels_last, 0-d and zero-size views)."""
    t = spec.build(device)
    for fmt in ("contiguous_format", "channels_last"):
        mf = getattr(torch, fmt)
        if (fmt == "channels_last" and t.dim() != 4) or t.is_contiguous(memory_format=mf):
            continue
        _check_contiguous_copy(t, spec, fmt, device)


@pytest.mark.claim("to.contiguous-copy-in-graph")
@pytest.mark.observes("backward")
# Issue 29: every layout that is not row-major, every differentiable family, leaves and non-leaves.
@domain_examples(
    dtypes=DIFFERENTIABLE, where=lambda s: not _is_row_major(s.build("cpu")), leaf=True
)
@value_examples("leaf", (True, False), spec=DOMAIN_SPEC)
@given(spec=not_row_major_specs(requires_grad=True), leaf=st.booleans())
def test_contiguous_copy_in_graph(device, spec, leaf):
    """Kills: a contiguous() copy cut from the graph, or whose backward drops
    or re-orders the gradient (inputs not row-major by construction)."""
    evidence.features(tensor_kind="leaf" if leaf else "non_leaf")
    t = spec.build(device, requires_grad=True, leaf=leaf)
    assert not _is_row_major(t), "test bug: a row-major input"
    r = t.contiguous()
    assert not r.is_leaf and r.grad_fn is not None, "contiguous() copy is not in the graph"
    g = _grad_for(r)
    (gt,) = torch.autograd.grad(r, t, grad_outputs=g)
    assert_same_bits(gt, g, "gradient through contiguous() does not reach its input unchanged")
