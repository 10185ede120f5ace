"""Properties of the autograd version counter, ``Tensor._version`` (claims in
``claims/version.toml``).

What each property kills (the broken torch it would catch) is in its
docstring. The version counter is what makes in-place mistakes loud: a
missing bump, or a counter not shared between aliases, turns the
"modified by an inplace operation" error into a silently wrong gradient.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import assert_same_bits, raises_with
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    DIFFERENTIABLE,
    NON_OVERLAPPING_VIEWS,
    grid_examples,
    tensor_specs,
)
from strategies.domains import DOMAIN_SPEC, domain_examples, domain_grid, layout_kinds
from strategies.dtypes import dtype_family

increment_version = torch.autograd.graph.increment_version


def _set_all(t: torch.Tensor) -> None:
    t[...] = 1


def _out(t: torch.Tensor) -> None:
    src = t.detach().clone()
    torch.mul(src, src, out=t)


# name -> (op, dtypes it has kernels for, accepts overlapping (expanded) memory)
INPLACE = {
    "add_": (lambda t: t.add_(1), ARITHMETIC, False),
    "mul_": (lambda t: t.mul_(2), ARITHMETIC, False),
    "setitem": (_set_all, ALL_DTYPES, False),
    "copy_": (lambda t: t.copy_(torch.ones_like(t)), ALL_DTYPES, False),
    "out=": (_out, ALL_DTYPES, False),
    "zero_": (lambda t: t.zero_(), ALL_DTYPES, True),
    "fill_": (lambda t: t.fill_(1), ALL_DTYPES, True),
}

#: the helper op whose kernel an INPLACE op needs (missing for some dtypes on CUDA)
_KERNEL = {"add_": "add_", "mul_": "mul_", "out=": "mul_"}


@st.composite
def inplace_cases(draw):
    """(op name, spec): a dtype the op has a kernel for, and expanded
    (self-overlapping) layouts only for the ops that accept them (the others
    refuse to write overlapping memory, an unrelated rule)."""
    op = draw(st.sampled_from(sorted(INPLACE)))
    _, dtypes, overlap_ok = INPLACE[op]
    return op, draw(tensor_specs(dtype=dtypes, views=True if overlap_ok else NON_OVERLAPPING_VIEWS))


def real_scalar(t: torch.Tensor) -> torch.Tensor:
    s = t.sum()
    return s.real if s.is_complex() else s


def _domain_cases(fn):
    """Issue 29: one ``@example(case=("fill_", spec))`` per :func:`domain_grid`
    spec (every layout family, expanded and zero-size included, and every
    dtype family), and one out= write."""
    from hypothesis import example

    for spec in domain_grid():
        fn = example(case=("fill_", spec))(fn)
    return example(case=("out=", DOMAIN_SPEC))(fn)


@pytest.mark.claim("version.inplace-bumps")
@pytest.mark.observes("copy_")
@_domain_cases
@given(case=inplace_cases())
def test_inplace_bumps_version(device, case):
    """Kills: an in-place op (or out= write) that forgets to bump the version
    for some dtype family or layout, zero-size tensors included, or in one
    calling form (the in-place method or an out= argument)."""
    op, spec = case
    # CUDA has no uint16/32/64 add/mul kernels (out= writes with torch.mul)
    if op in _KERNEL:
        cap.require_kernel(_KERNEL[op], spec.dtype, device)
    t = spec.build(device)
    form = "out" if op == "out=" else "inplace" if op.endswith("_") else None  # setitem: neither
    evidence.features(layout=layout_kinds(t), dtype_family=dtype_family(t.dtype), call_form=form)
    before = t._version
    INPLACE[op][0](t)
    assert t._version >= before + 1, f"{op} did not bump the version counter"


# Alias-making ops valid for any tensor: each result shares t's version counter.
ALIASES = {
    "detach": lambda t: t.detach(),
    "index": lambda t: t[...],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t.expand(2, *t.shape),
    "view_as": lambda t: t.view_as(t),
    "as_strided": lambda t: t.as_strided(t.size(), t.stride(), t.storage_offset()),
    "permute": lambda t: t.permute(tuple(reversed(range(t.dim())))),
    "detach-of-view": lambda t: t[...].detach(),
}


def _bumps_seen(writer: torch.Tensor, reader: torch.Tensor) -> bool:
    """fill_ through ``writer`` (accepted for every dtype and layout) and
    report whether ``reader`` saw the same number of bumps."""
    w0, r0 = writer._version, reader._version
    writer.fill_(0)
    dw, dr = writer._version - w0, reader._version - r0
    return dw >= 1 and dr == dw


@pytest.mark.claim("version.views-and-detach-share")
@pytest.mark.observes("detach")
@grid_examples(alias="detach")
@given(spec=tensor_specs(), alias=st.sampled_from(sorted(ALIASES)))
def test_views_and_detach_share_counter(device, spec, alias):
    """The spec's own view chain (base -> t) is checked too.

    Kills: a view or detach() with a version counter of its own, so an
    in-place write through it would go unnoticed by a graph that saved the
    other side.
    """
    base = spec.build_base(device)
    t = spec.apply_views(base)
    a = ALIASES[alias](t)
    assert _bumps_seen(a, t), f"a write through {alias} was not seen by t's version counter"
    assert _bumps_seen(t, a), f"a write to t was not seen by {alias}'s version counter"
    if spec.views:
        assert _bumps_seen(t, base), "a write through a view was not seen by its base's counter"
        assert _bumps_seen(base, a), "a write to the base was not seen by its views' counters"


@pytest.mark.claim("version.clone-and-data-own-counter")
@pytest.mark.observes("clone")
@grid_examples(kind="data", requires_grad=True)
@given(
    spec=tensor_specs(),
    kind=st.sampled_from(["clone", "data"]),
    requires_grad=st.booleans(),
)
def test_clone_and_data_own_counter(device, spec, kind, requires_grad):
    """Kills: a clone or .data that shares the source's version counter
    (``.data`` must stay invisible to autograd's checks, clone is a copy)."""
    rg = requires_grad and spec.dtype in DIFFERENTIABLE
    t = spec.build(device, requires_grad=rg, leaf=True)
    with torch.no_grad():
        t.fill_(0)  # t is now at version >= 1
    other = t.clone() if kind == "clone" else t.data
    if kind == "data":
        assert other._version == 0, f".data starts at version {other._version}, not 0"
    t0, o0 = t._version, other._version
    with torch.no_grad():
        other.fill_(1)
    assert t._version == t0, f"a write through {kind} bumped the source's version counter"
    o1 = other._version
    with torch.no_grad():
        t.fill_(0)
    assert other._version == o1, f"a write to the source bumped the {kind}'s version counter"
    assert o1 > o0, f"a write through {kind} did not bump its own counter"


@pytest.mark.claim("version.requires-grad-no-bump")
# issue 29: every layout and differentiable family
@domain_examples(dtypes=DIFFERENTIABLE, flags=["method-false", "attr-true", "method-true"])
@given(
    spec=tensor_specs(requires_grad=True),
    flags=st.lists(st.sampled_from(["method-true", "method-false", "attr-true", "attr-false"])),
)
def test_requires_grad_no_bump(device, spec, flags):
    """Kills: a requires_grad_ that is treated as an in-place data write
    (bumping would break graphs that saved the tensor)."""
    t = spec.build(device)
    before = t._version
    for f in flags:
        flag = f.endswith("true")
        if f.startswith("method"):
            t.requires_grad_(flag)
        else:
            t.requires_grad = flag
    assert t._version == before, "setting requires_grad bumped the version counter"


@pytest.mark.claim("version.read-only")
@given(spec=tensor_specs(), value=st.integers(0, 5))
def test_version_read_only(device, spec, value):
    """Kills: a writable _version, through which user code could hide an
    in-place modification from autograd's checks."""
    t = spec.build(device)
    t.fill_(0)
    before = t._version
    with pytest.raises(AttributeError):
        t._version = value
    assert t._version == before, "a refused _version assignment changed the counter"


def _increment_version_takes_lists() -> bool:
    """The list form of increment_version came in torch 2.5: decided from the
    release, never by calling it (a broken list form is a verdict)."""
    return cap.release_has("increment-version-list")


@pytest.mark.claim("version.increment-version")
@domain_examples(grid_values="all", form="tensor")  # issue 29: every dtype family
@given(spec=tensor_specs(values="all"), form=st.sampled_from(["tensor", "list"]))
def test_increment_version(device, spec, form):
    """Values are compared bit for bit with an independent build of the spec,
    over every value class.

    Kills: an increment_version that bumps by more or less than one,
    touches the values, or ignores a list argument."""
    t = spec.build(device)
    other = torch.zeros(2, device=device)
    values = spec.build(device)
    t0, o0 = t._version, other._version
    if form == "tensor":
        increment_version(t)
    else:
        cap.require(_increment_version_takes_lists(), "increment_version([...]) (the list form)")
        increment_version([t, other])
        assert other._version == o0 + 1, "increment_version([...]) skipped a list element"
    assert t._version == t0 + 1, f"increment_version bumped by {t._version - t0}"
    assert_same_bits(t, values, "increment_version changed the values")


#: Where increment_version is called: inside inference_mode, or outside it
#: with grad enabled or under no_grad.
_MODES = {
    "enabled": contextlib.nullcontext,
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
}


@pytest.mark.claim("version.increment-version-inference-noop")
# Issue 29: every layout and dtype family of the inference tensor, in each
# grad mode (inside inference_mode, outside it with grad enabled or not).
@domain_examples(grad_mode="enabled")
@domain_examples(grad_mode="no_grad")
@domain_examples(grad_mode="inference_mode")
@given(spec=tensor_specs(values="all"), grad_mode=st.sampled_from(sorted(_MODES)))
def test_increment_version_inference_noop(device, spec, grad_mode):
    """Values are compared bit for bit with an independent build of the spec,
    over every value class.

    Kills: an increment_version that raises for inference tensors (they
    have no counter) in some grad mode, turns them into normal tensors or
    touches their values."""
    # `where` (inside/outside inference_mode) is the region of the pre-2.5 deviation.
    evidence.features(where="inside" if grad_mode == "inference_mode" else "outside")
    with torch.inference_mode():
        t = spec.build(device)
    values = spec.build(device)
    with _MODES[grad_mode]():
        increment_version(t)
    assert t.is_inference(), "increment_version turned an inference tensor into a normal one"
    assert_same_bits(t, values, "increment_version changed an inference tensor's values")
    with raises_with(RuntimeError, "Inference tensors do not track version counter"):
        _ = t._version


# Which tensors each op saves for backward (derivatives.yaml):
#   exp(x)     -> saves its result        sigmoid(x) -> saves its result
#   x * x      -> saves its inputs        x + x      -> saves nothing
SAVED_OPS = {
    "exp": (torch.exp, {"output"}),
    "sigmoid": (torch.sigmoid, {"output"}),
    "mul": (lambda x: x * x, {"input"}),
    "add": (lambda x: x + x, set()),
}
# Aliases of a tensor and whether they share its version counter.
MUTATION_ALIASES = {
    "self": (lambda t, base: t, True),
    "view": (lambda t, base: t[...], True),
    "base": (lambda t, base: base, True),
    "detach": (lambda t, base: t.detach(), True),
    "data": (lambda t, base: t.data, False),
}


@st.composite
def saved_cases(draw):
    op = draw(st.sampled_from(sorted(SAVED_OPS)))
    target = draw(st.sampled_from(["input", "output"]))
    # Only the input is a view with a separate base (the output is fresh).
    aliases = sorted(MUTATION_ALIASES) if target == "input" else ["data", "detach", "self", "view"]
    alias = draw(st.sampled_from(aliases))
    return op, target, alias


@pytest.mark.claim("version.saved-tensor-check")
@pytest.mark.observes("backward", "detach")
# Issue 29: every writable layout and differentiable family, mul's saved input
# written through a view.
@domain_examples(
    dtypes=DIFFERENTIABLE,
    where=lambda s: not any(v[0] == "expand" for v in s.views),
    case=("mul", "input", "view"),
)
@given(spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS), case=saved_cases())
def test_saved_tensor_check(device, spec, case):
    """Predicts the error from the documented rule: backward raises iff the
    mutated tensor was saved by the op and the write went through an alias
    sharing its counter (itself, a view, its base, detach; not .data).
    What each op saves (derivatives.yaml, SAVED_OPS): exp and sigmoid save
    their result, mul (``x * x``) saves its inputs, add (``x + x``) saves
    nothing. The input ``x`` is a view of a non-leaf ``base``, so in-place
    writes to it are legal; expanded layouts are excluded (overlapping
    memory refuses add_ for an unrelated reason).

    Kills: a counter not saved with a saved tensor, not shared by some alias
    (a silently wrong gradient), or a check raised for tensors that were
    never saved (spurious errors).
    """
    op, target, alias = case
    fn, saves = SAVED_OPS[op]
    leaf = spec.build_base(device).requires_grad_(True)
    base = leaf * 1
    x = spec.apply_views(base) if spec.views else base[...]
    y = fn(x)
    loss = real_scalar(y)
    mutated = x if target == "input" else y
    make_alias, shares = MUTATION_ALIASES[alias]
    make_alias(mutated, base if target == "input" else y).add_(1)
    if target in saves and shares:
        with raises_with(RuntimeError, "modified by an inplace operation"):
            loss.backward()
    else:
        loss.backward()
        assert leaf.grad is not None, "backward did not reach the leaf"


@pytest.mark.claim("version.resize-bumps-on-shape-change")
@domain_examples(grow=1)  # issue 29: every layout and dtype family
@given(spec=tensor_specs(), grow=st.integers(1, 3))
def test_resize_bumps_on_shape_change(device, spec, grow):
    """Kills: a resize_ that skips the bump when the shape changes (a saved
    tensor could change size unnoticed), or bumps on a no-op resize."""
    t = spec.build(device)
    before = t._version
    t.resize_(t.shape)
    assert t._version == before, "resize_ to the current shape bumped the version"
    t.resize_((t.numel() + grow,))
    assert t._version >= before + 1, "resize_ to a new shape did not bump the version"
