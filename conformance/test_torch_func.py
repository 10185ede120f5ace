"""Properties of the ``torch.func`` transforms and ``functional_call`` across the
transform boundary: what a transformed function may write, what ``vmap``
returns for a view function, how ``functional_call`` swaps module state
(claims in ``claims/torch_func.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
The transforms are looked up as ``torch.func.<name>`` at call time. Oracles are
per-example loops over ``unbind`` (or plain eager calls) and values are compared
bit for bit.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.func
from hypothesis import example, given, note
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    assert_same_computed_values,
    element_bytes,
    raises_with,
    sentinel_for,
    shares_storage,
    shares_version_counter,
)
from conformance.tolerances import FD_RTOL, K, excess
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    FLOATING,
    GRID_LAYOUTS,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    layout_grid,
    layout_kinds,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    TENSOR_KINDS,
    build_kind,
    domain_examples,
    non_empty,
    tensor_kind_of,
    value_examples,
    writable_non_empty,
)


def _grid_spec(dtype: torch.dtype, layout: str = "contiguous"):
    """The :func:`strategies.layout_grid` spec of ``dtype`` in ``layout``."""
    names = [g[0] for g in GRID_LAYOUTS]
    return layout_grid([dtype])[names.index(layout)]


def _examples(rows):
    """Add one explicit Hypothesis example per keyword dict in ``rows`` (a
    dtype grid: each dtype, and so each dtype-specific fast path, is tried
    whatever the random draws reach)."""

    def decorate(fn):
        for kw in rows:
            fn = example(**kw)(fn)
        return fn

    return decorate


def _bytes_kept(t: torch.Tensor, before, what: str) -> None:
    import numpy as np

    assert np.array_equal(element_bytes(t), before), f"{what}: the values changed"


def _batched_shape(batch: int, example: tuple[int, ...], in_dim: int) -> tuple[int, ...]:
    """The shape of a tensor whose dimension ``in_dim`` is the batch dimension."""
    dims = list(example)
    dims.insert(in_dim if in_dim >= 0 else len(dims) + 1 + in_dim, batch)
    return tuple(dims)


@st.composite
def _batched_specs(draw, *, dtype=ALL_DTYPES, min_dims=0, views=True, values="all"):
    """(spec, in_dim): a spec of a tensor with a batch dimension at ``in_dim``
    (0, 1 or -1) of size 1..4, examples of 0..2 dims with sides 1..3."""
    example = draw(shapes(min_dims=min_dims, max_dims=2, min_side=1, max_side=3))
    batch = draw(st.integers(1, 4))
    in_dim = draw(st.sampled_from([0, 1, -1] if example else [0]))
    shape = _batched_shape(batch, example, in_dim)
    spec = draw(tensor_specs(dtype=dtype, shape=shape, views=views, values=values))
    return spec, in_dim


# ------------------------------------------------------------------ vmap writes

#: In-place writes of a vmapped value ``b`` into ``target``, with the dtypes
#: they are defined for (others fall back to ``copy_``).
_INPLACE = {
    "add_": (ARITHMETIC, lambda tgt, b: tgt.add_(b)),
    "sub_": (ARITHMETIC, lambda tgt, b: tgt.sub_(b)),
    "mul_": (ARITHMETIC, lambda tgt, b: tgt.mul_(b)),
    "div_": (FLOATING + COMPLEX, lambda tgt, b: tgt.div_(b)),
    "copy_": (ALL_DTYPES, lambda tgt, b: tgt.copy_(b)),
    "setitem": (ALL_DTYPES, lambda tgt, b: tgt.__setitem__(..., b)),
    "fill_": (ALL_DTYPES, lambda tgt, b: tgt.fill_(b.reshape(-1)[0])),
}

#: Substrings of the errors vmap raises for a write into an unbatched target
#: (the wording depends on the op: add_ goes through the broadcasting check).
_UNBATCHED_WRITE_ERRORS = ("vmap:", "doesn't match the broadcast shape")


@pytest.mark.claim("torch_func.vmap-inplace-into-unbatched-raises")
@pytest.mark.observes("clone", "copy_")
# Issue 29, dtype_family ("for every dtype"): one example per dtype, so every
# family, by construction; the case's spec reports the family.
@_examples(
    dict(case=(_grid_spec(dt), 0), op="copy_", target=target)
    for dt in ALL_DTYPES
    for target in ("captured", "zeros-inside")
)
@given(
    case=_batched_specs(views=True),
    op=st.sampled_from(sorted(_INPLACE)),
    target=st.sampled_from(["captured", "in_dims-none", "zeros-inside", "empty-inside"]),
)
def test_vmap_inplace_into_unbatched_target_raises(device, case, op, target):
    """The target is a view of another build of the spec (its first example)
    or a fresh factory result inside the function.

    Kills: a vmap that runs such writes anyway (an eager per-example loop
    for some dtype or calling form), so the captured tensor is overwritten
    by every example in turn."""
    spec, in_dim = case
    if spec.dtype not in _INPLACE[op][0]:
        op = "copy_"
    evidence.features(form=op)
    write = _INPLACE[op][1]
    b_all = spec.build(device)
    example_shape = tuple(b_all.select(in_dim, 0).shape)
    tgt = spec.build(device).select(in_dim, 0)
    if any(st == 0 and n > 1 for n, st in zip(tgt.shape, tgt.stride(), strict=True)):
        tgt = tgt.clone()  # an expanded target refuses every in-place write anyway
    before = element_bytes(tgt)
    vmap = torch.func.vmap

    def make(b):
        if target == "zeros-inside":
            return torch.zeros(example_shape, dtype=spec.dtype, device=device)
        return torch.empty(example_shape, dtype=spec.dtype, device=device).fill_(0)

    with pytest.raises(RuntimeError) as e:
        if target == "captured":
            vmap(lambda b: (write(tgt, b), b * 1)[1], in_dims=in_dim)(b_all)
        elif target == "in_dims-none":
            vmap(lambda b, t: (write(t, b), b * 1)[1], in_dims=(in_dim, None))(b_all, tgt)
        else:
            vmap(lambda b: (write(make(b), b), b * 1)[1], in_dims=in_dim)(b_all)
    assert any(s in str(e.value) for s in _UNBATCHED_WRITE_ERRORS), str(e.value)
    _bytes_kept(tgt, before, "a refused vmap write into a captured tensor")


#: In-place ops on the vmapped input ``r`` (``s`` is a sentinel value).
_ON_INPUT = {
    "add_": (ARITHMETIC, lambda r, s: r.add_(1)),
    "copy_": (ALL_DTYPES, lambda r, s: r.copy_(torch.full_like(r, s))),
    "fill_": (ALL_DTYPES, lambda r, s: r.fill_(s)),
    "view-fill_": (ALL_DTYPES, lambda r, s: r.reshape(-1)[:1].fill_(s) if r.dim() else r.fill_(s)),
    "setitem": (ALL_DTYPES, lambda r, s: r.__setitem__(..., s)),
}


def _mappable_writable(spec) -> bool:
    """A non-empty spec with a dimension to map over and no overlap (issue 29)."""
    return writable_non_empty(spec) and len(spec.shape) >= 1


@pytest.mark.claim("torch_func.vmap-inplace-into-batched-input-writes-through")
@pytest.mark.observes("copy_")
# Issue 29: every writable layout and dtype family, mapped over dimension 0.
@domain_examples("case", where=_mappable_writable, make=lambda spec: (spec, 0), op="fill_")
@given(
    case=_batched_specs(views=NON_OVERLAPPING_VIEWS, values="bounded"),
    op=st.sampled_from(sorted(_ON_INPUT)),
)
def test_vmap_inplace_on_batched_input_writes_through(device, case, op):
    """The expected result is the same op applied in a per-example loop to
    another build of the spec (``unbind`` views write into it).

    Kills: a vmap that hands the function a copy of its input (for some
    in_dims, dtype or layout), so in-place writes are lost."""
    spec, in_dim = case
    if spec.dtype not in _ON_INPUT[op][0]:
        op = "fill_"
    evidence.features(form=op)
    fn = _ON_INPUT[op][1]
    x = spec.build(device)
    s = sentinel_for(x) if x.numel() else 0
    want = spec.build(device)
    for row in want.unbind(in_dim):
        fn(row, s)
    # the returned clone is discarded (r * 1 has no uint16/32/64 kernel on CUDA)
    torch.func.vmap(lambda r: (fn(r, s), r.clone())[1], in_dims=in_dim)(x)
    assert_same_bits(x, want, "an in-place op on the vmapped input writes through like the loop")


#: Factories that build a batched tensor inside vmap from the vmapped ``b``.
_FACTORIES = {
    "new_zeros": lambda b, shape: b.new_zeros(shape),
    "new_empty": lambda b, shape: b.new_empty(shape).fill_(0),
    "new_full": lambda b, shape: b.new_full(shape, 0),
    "zeros_like": lambda b, shape: torch.zeros_like(b).reshape(-1).new_zeros(shape),
    "empty_like": lambda b, shape: torch.empty_like(b).fill_(0).reshape(-1).new_zeros(shape),
}


def _factory_write(factory: str, write: str, b: torch.Tensor) -> torch.Tensor:
    if write == "diagonal-copy_":
        vec = b.reshape(-1)
        r = _FACTORIES[factory](b, (vec.shape[0], vec.shape[0]))
        r.diagonal().copy_(vec)
        return r
    if factory in ("zeros_like", "empty_like"):
        r = torch.zeros_like(b) if factory == "zeros_like" else torch.empty_like(b).fill_(0)
    else:
        r = _FACTORIES[factory](b, b.shape)
    return r.add_(b) if write == "add_" else r.copy_(b)


@pytest.mark.claim("torch_func.vmap-new-factory-fix")
@pytest.mark.observes("copy_")
@_examples(
    [dict(case=(_grid_spec(dt), 0), factory="new_zeros", write="copy_") for dt in ALL_DTYPES]
    + [
        dict(case=(_grid_spec(torch.float32), 0), factory=f, write=w)
        for f in sorted(_FACTORIES)
        for w in ("copy_", "diagonal-copy_")
    ]
)
# Issue 29: every layout family of the vmapped input with a dimension to map
# over and an element (dtype families: one example per dtype above).
@domain_examples(
    "case",
    where=lambda spec: non_empty(spec) and len(spec.shape) >= 1,
    make=lambda spec: (spec, 0),
    factory="new_zeros",
    write="copy_",
)
@given(
    case=_batched_specs(views=True, min_dims=1),
    factory=st.sampled_from(sorted(_FACTORIES)),
    write=st.sampled_from(["copy_", "add_", "diagonal-copy_"]),
)
def test_vmap_new_factory_accepts_batched_writes(device, case, factory, write):
    """The expected result is the per-example loop of the same function on
    plain tensors, stacked.

    Kills: a vmap in which ``new_*`` / ``*_like`` factories of a vmapped
    tensor return an unbatched tensor (the documented fix then raises), or
    write the wrong values."""
    spec, in_dim = case
    if write == "add_" and spec.dtype not in ARITHMETIC:
        write = "copy_"
    evidence.features(form=f"{factory}+{write}")
    x = spec.build(device)
    want = torch.stack(
        [_factory_write(factory, write, r) for r in spec.build(device).unbind(in_dim)]
    )
    got = torch.func.vmap(lambda b: _factory_write(factory, write, b), in_dims=in_dim)(x)
    same = assert_same_computed_values if write == "add_" else assert_same_bits
    same(got, want, f"vmap of {factory} + {write} equals the per-example loop")


# ------------------------------------------------------------- vmap views

_VIEW_FNS = {
    "identity": lambda r: r,
    "slice": lambda r: r[1:],
    "select": lambda r: r.select(-1, 0),
    "transpose": lambda r: r.transpose(0, -1),
    "unsqueeze": lambda r: r.unsqueeze(0),
    "diagonal": lambda r: r.diagonal(),
    "view": lambda r: r.view(r.shape),
    "mul (not a view)": lambda r: r * 1,
}


def _view_fn_mappable(spec) -> bool:
    """Non-empty, with a batch dimension and at least one example dimension."""
    return non_empty(spec) and len(spec.shape) >= 2


@pytest.mark.claim("torch_func.vmap-view-outputs-alias-inputs")
@pytest.mark.observes("tensor")
# Issue 29: every layout family with a batch and an example dimension and
# every dtype family of the input, mapped over dimension 0, a view returned
# along dimension -1 and the input itself along 0.
@domain_examples(
    "case", where=_view_fn_mappable, make=lambda spec: (spec, 0), fn="transpose", out_dim=-1
)
@domain_examples(
    "case", where=_view_fn_mappable, make=lambda spec: (spec, 0), fn="identity", out_dim=0
)
@_examples(
    dict(case=(_grid_spec(dt), 0), fn="slice", out_dim=1) for dt in (torch.complex64, torch.bool)
)
@given(
    case=_batched_specs(views=True, min_dims=2),
    fn=st.sampled_from(sorted(_VIEW_FNS)),
    out_dim=st.sampled_from([0, 1, -1]),
)
def test_vmap_of_view_function_returns_alias(device, case, fn, out_dim):
    """Every dtype and layout of the input (the non-view control ``r * 1`` only
    where ``mul`` has a kernel: the identity stands in for bool and the wide
    unsigned dtypes).

    Expected values: ``torch.stack`` of the per-example results (a copy).

    Kills: a vmap that returns a copy of a view result (for some out_dims,
    dtype or layout), or a view that no longer shares the input's version
    counter (autograd would miss in-place writes through it)."""
    spec, in_dim = case
    if fn == "mul (not a view)" and spec.dtype not in ARITHMETIC:
        fn = "identity"
    x = spec.build(device)
    f = _VIEW_FNS[fn]

    def loop():
        return torch.stack([f(r) for r in x.unbind(in_dim)], dim=out_dim)

    out = torch.func.vmap(f, in_dims=in_dim, out_dims=out_dim)(x)
    same = assert_same_computed_values if fn == "mul (not a view)" else assert_same_bits
    same(out, loop(), f"vmap of {fn} equals the per-example loop")
    if fn == "mul (not a view)":
        assert not shares_storage(out, x), "vmap of a non-view function aliases its input"
        return
    same_dim = in_dim % x.dim() == out_dim % x.dim()
    if fn == "identity" and same_dim:
        assert out is x, "vmap of the identity did not return the input object"
        return
    root = x._base if x._base is not None else x
    assert shares_storage(out, x), f"vmap of {fn} (out_dims={out_dim}) copied its input"
    assert out._base is root, f"vmap of {fn} is not an autograd view of its input"
    assert shares_version_counter(out, x), f"vmap of {fn} does not share the version counter"
    if out.numel():
        s = sentinel_for(out)
        with torch.no_grad():
            out[(0,) * out.dim()] = s
        first = loop().reshape(-1)[0].item()
        assert first == torch.tensor(s, dtype=out.dtype).item(), (
            f"a write through vmap of {fn} is not seen by the input"
        )


# ------------------------------------------------------- grad-like transforms


def _call_transform(name: str, f, x: torch.Tensor):
    """Run transform ``name`` of ``f`` (which returns a tensor shaped like x)
    at ``x``; grad gets ``f(x).sum()``."""
    F = torch.func
    if name == "grad":
        return F.grad(lambda a: f(a).sum())(x)
    if name == "vjp":
        out, pull = F.vjp(f, x)
        return pull(torch.ones_like(out))
    if name == "jvp":
        return F.jvp(f, (x,), (torch.ones_like(x),))
    if name == "jacrev":
        return F.jacrev(f)(x)
    if name == "jacfwd":
        return F.jacfwd(f)(x)
    raise ValueError(name)


_CAPTURED_OPS = {
    "add_": lambda c, x: c.add_(x),
    "mul_": lambda c, x: c.mul_(x),
    "copy_": lambda c, x: c.copy_(x),
    "setitem": lambda c, x: c.__setitem__(..., x),
    "zero_": lambda c, x: c.zero_(),
}


#: Issue 29, tensor_kind of torch_func.grad-mutating-captured-raises: one
#: explicit example per kind of captured tensor, each with another transform
#: and in-place op.
_CAPTURED_KIND_EXAMPLES = tuple(
    dict(spec=DOMAIN_SPEC, transform=t, op=o, kind=k)
    for k, t, o in zip(
        TENSOR_KINDS,
        ("grad", "vjp", "jvp", "jacrev", "jacfwd", "grad"),
        ("add_", "mul_", "copy_", "setitem", "zero_", "add_"),
        strict=True,
    )
)


@pytest.mark.claim("torch_func.grad-mutating-captured-raises")
@pytest.mark.observes("copy_")
# Issue 29, tensor_kind ("a tensor captured from outside"): every kind of
# captured tensor by construction (_CAPTURED_KIND_EXAMPLES).
@_examples(_CAPTURED_KIND_EXAMPLES)
@given(
    spec=tensor_specs(dtype=(torch.float32, torch.float64), shape=shapes(min_side=1, max_dims=2),
                      views=NON_OVERLAPPING_VIEWS, values="finite"),
    transform=st.sampled_from(["grad", "vjp", "jvp", "jacrev", "jacfwd"]),
    op=st.sampled_from(sorted(_CAPTURED_OPS)),
    kind=st.sampled_from(TENSOR_KINDS),
)  # fmt: skip
def test_grad_transforms_refuse_mutating_captured_tensors(device, spec, transform, op, kind):
    """The captured tensor is another build of the spec as a plain tensor, a
    leaf or a non-leaf that requires grad, an ``nn.Parameter``, a
    ``__torch_function__`` subclass instance or an inference tensor
    (``strategies.domains.build_kind``; reported as ``tensor_kind``).

    Kills: a grad transform that lets the function write into a tensor
    captured from outside (for some transform, dtype or kind of captured
    tensor), corrupting the caller's state and the computed derivative."""
    x = spec.build(device)
    c = build_kind(spec, device, kind)
    before = element_bytes(c)
    mutate = _CAPTURED_OPS[op]
    evidence.features(form=transform, tensor_kind=tensor_kind_of(c))

    def f(a):
        mutate(c, a)
        return a * 1

    with raises_with(RuntimeError, "would mutate a captured Tensor"):
        _call_transform(transform, f, x)
    _bytes_kept(c, before, f"a refused {op} on a captured {kind} tensor inside {transform}")


_INPUT_OPS = {
    "mul_": lambda x: x.mul_(2),
    "add_": lambda x: x.add_(1),
    "sin_": lambda x: x.sin_(),
    "copy_": lambda x: x.copy_(torch.zeros_like(x)),
    "setitem": lambda x: x.__setitem__(..., 0),
}


@pytest.mark.claim("torch_func.grad-mutating-input-raises")
@pytest.mark.observes("copy_")
@_examples(
    dict(spec=_grid_spec(dt), transform=t, op="mul_") for dt in FLOATING for t in ("grad", "vjp")
)
# Issue 29: every layout family and every floating and complex family of the
# differentiated input, for both transforms.
@domain_examples(dtypes=FLOATING + COMPLEX, transform="grad", op="mul_")
@domain_examples(dtypes=FLOATING + COMPLEX, transform="vjp", op="setitem")
@given(
    spec=tensor_specs(dtype=FLOATING + COMPLEX, shape=shapes(max_dims=2), values="finite"),
    transform=st.sampled_from(["grad", "vjp"]),
    op=st.sampled_from(sorted(_INPUT_OPS)),
)
def test_grad_and_vjp_refuse_mutating_the_input(device, spec, transform, op):
    """Kills: a grad/vjp that differentiates a copy of the input (so the
    function may mutate it) or lets the mutation reach the caller."""
    x = spec.build(device)
    before = element_bytes(x)
    evidence.features(form=transform)
    with raises_with(RuntimeError, "is being used in an in-place operation"):
        _call_transform(transform, lambda a: _INPUT_OPS[op](a), x)
    _bytes_kept(x, before, f"a refused in-place {op} of the input inside {transform}")


@pytest.mark.claim("torch_func.jvp-mutating-input-writes-primal")
@pytest.mark.observes("copy_")
@_examples(dict(spec=_grid_spec(dt), op=op) for dt in DIFFERENTIABLE for op in ("mul_", "add_"))
# Issue 29: every layout forward mode accepts, every floating and complex family.
@domain_examples(
    dtypes=FLOATING + COMPLEX,
    where=lambda s: not any(v[0] == "expand" for v in s.views),
    op="mul_",
)
@given(
    spec=tensor_specs(dtype=FLOATING + COMPLEX, views=NON_OVERLAPPING_VIEWS, values="bounded"),
    op=st.sampled_from(["mul_", "add_"]),
)
def test_jvp_of_inplace_function_writes_the_primal(device, spec, op):
    """Expected: the same op applied eagerly to another build (primal), the
    tangent scaled as the op's derivative says (mul_(2): 2t, add_(1): t).

    Kills: a jvp that clones its primals (the caller's tensor stays as it
    was) or returns other values."""
    x = spec.build(device)
    t = spec.build(device)
    want = spec.build(device)
    _INPUT_OPS[op](want)
    want_t = spec.build(device)
    if op == "mul_":
        want_t.mul_(2)
    out, tout = torch.func.jvp(lambda a: _INPUT_OPS[op](a), (x,), (t,))
    assert_same_bits(out, want, f"jvp of {op} returns the op's output")
    assert_same_bits(tout, want_t, f"jvp of {op} returns the op's tangent")
    assert_same_bits(x, want, f"jvp of {op} writes the result into the caller's primal")


@pytest.mark.claim("torch_func.data-mutation-raises")
@given(
    spec=tensor_specs(
        dtype=(torch.float32, torch.float64),
        shape=shapes(min_dims=1, min_side=1),
        views=NON_OVERLAPPING_VIEWS,
    ),
    transform=st.sampled_from(["grad", "vjp", "jvp", "vmap"]),
)
def test_data_assignment_inside_transform_raises(device, spec, transform):
    """Kills: a transform that lets ``x.data = ...`` replace a wrapped
    input's data (the transform's bookkeeping then refers to stale data)."""
    x = spec.build(device)
    evidence.features(form=transform)

    def f(a):
        a.data = torch.zeros(a.shape, dtype=a.dtype, device=device)
        return a * 1

    with raises_with(RuntimeError, "mutating directly with `.data`"):
        if transform == "vmap":
            torch.func.vmap(f)(x)
        else:
            _call_transform(transform, f, x)


# -------------------------------------------------------------- functional_call


class _Tied(torch.nn.Module):
    """Submodules ``a`` and ``b`` share one tensor ``w`` (a Parameter or a buffer)."""

    def __init__(self, w: torch.Tensor, kind: str):
        super().__init__()
        self.a, self.b = torch.nn.Module(), torch.nn.Module()
        if kind == "parameter":
            p = torch.nn.Parameter(w, requires_grad=False)
            self.a.w = p
            self.b.w = p
        else:
            self.a.register_buffer("w", w)
            self.b.register_buffer("w", w)

    def forward(self):
        return self.a.w, self.b.w


#: One dtype per family for the explicit tied-value examples (the values'
#: dtype only matters to a by-value comparison).
_TIE_DTYPES = (torch.bool, torch.int64, torch.uint8, torch.float16, torch.float32, torch.float64,
               torch.complex64)  # fmt: skip


def _tied_case(spec, device, kind):
    m = _Tied(spec.build(device), kind)
    return m, m.a.w, spec.build(device)


@pytest.mark.claim("torch_func.functional-call-tie-weights")
# Issue 29, tensor_kind ("share one parameter or buffer"): both kinds of tied
# tensor with every way of passing values, by construction.
@_examples(
    dict(spec=_grid_spec(torch.float32), kind=kind, passed=passed, tie_weights=True)
    for kind in ("parameter", "buffer")
    for passed in ("a", "b", "both-same", "both-different")
)
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    kind=st.sampled_from(["parameter", "buffer"]),
    passed=st.sampled_from(["a", "b", "both-same", "both-different"]),
    tie_weights=st.booleans(),
)
def test_functional_call_ties_weights(device, spec, kind, passed, tie_weights):
    """Kills: a functional_call that ignores ties (for buffers, or one
    calling form), ties with tie_weights=False, or accepts different
    values for tied names."""
    evidence.features(tensor_kind=kind)
    m, orig, w = _tied_case(spec, device, kind)
    fc = torch.func.functional_call
    if passed in ("a", "b"):
        a, b = fc(m, {f"{passed}.w": w}, (), tie_weights=tie_weights)
        named = a if passed == "a" else b
        other = b if passed == "a" else a
        assert named is w, "functional_call did not use the passed tensor"
        if tie_weights:
            assert other is w, "functional_call did not use the value for the tied name"
        else:
            assert other is orig, "tie_weights=False replaced the other tied name"
    elif passed == "both-same":
        a, b = fc(m, {"a.w": w, "b.w": w}, (), tie_weights=tie_weights)
        assert a is w and b is w, "the same tensor for both tied names was not used"
    else:
        w2 = torch.full_like(w, sentinel_for(w))  # differs in the first element at least
        if tie_weights:
            with raises_with(ValueError, "which are tied"):
                fc(m, {"a.w": w, "b.w": w2}, ())
        else:
            a, b = fc(m, {"a.w": w, "b.w": w2}, (), tie_weights=False)
            assert a is w and b is w2, "tie_weights=False did not use both values"
    assert m.a.w is orig and m.b.w is orig, "functional_call did not restore the module"


@pytest.mark.claim("torch_func.functional-call-tied-equal-values-accepted")
@_examples(
    dict(spec=_grid_spec(dt), kind=kind) for dt in _TIE_DTYPES for kind in ("parameter", "buffer")
)
@given(spec=tensor_specs(shape=shapes(min_side=1)), kind=st.sampled_from(["parameter", "buffer"]))
def test_functional_call_accepts_equal_values_for_tied_names(device, spec, kind):
    """The docstring's ``new_a`` example as stated (stale: recorded in
    expectations, pinned by ``torch_func.functional-call-ties-by-identity``).

    Kills: a functional_call that accepts such values but uses another
    tensor for one of the names."""
    m, _, w = _tied_case(spec, device, kind)
    w2 = spec.build(device)  # the same bits, another tensor
    a, b = torch.func.functional_call(m, {"a.w": w, "b.w": w2}, ())
    assert a is w and b is w2, "functional_call did not use the equal values passed"


@pytest.mark.claim("torch_func.functional-call-ties-by-identity")
# Issue 29, tensor_kind: a tied parameter and a tied buffer for every dtype
# family (_TIE_DTYPES), by construction.
@_examples(
    dict(spec=_grid_spec(dt), kind=kind, equal=True)
    for dt in _TIE_DTYPES
    for kind in ("parameter", "buffer")
)
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    kind=st.sampled_from(["parameter", "buffer"]),
    equal=st.booleans(),
)
def test_functional_call_ties_by_identity(device, spec, kind, equal):
    """Pins torch 2.13 where the docstring example deviates.

    Kills: a functional_call that starts comparing tied values by value
    (for some dtype or kind), or stops refusing distinct objects."""
    evidence.features(tensor_kind=kind)
    m, _, w = _tied_case(spec, device, kind)
    w2 = spec.build(device) if equal else torch.full_like(w, sentinel_for(w))
    with raises_with(ValueError, "which are tied"):
        torch.func.functional_call(m, {"a.w": w, "b.w": w2}, ())


class _Stateful(torch.nn.Module):
    """A frozen parameter and a buffer that forward updates in place."""

    def __init__(self, w: torch.Tensor, buf: torch.Tensor):
        super().__init__()
        self.w = torch.nn.Parameter(w, requires_grad=False)
        self.register_buffer("buf", buf)

    def forward(self, fail: bool):
        self.buf.add_(1)
        self.w.mul_(2)
        if fail:
            raise ValueError("forward failed on purpose")
        return self.w


@pytest.mark.claim("torch_func.functional-call-restores-module-and-writes-through")
# Issue 29, tensor_kind: every example's module holds a parameter and a
# buffer, and checks both (restored; updates land in the dict or, for a
# parameter not passed, in the module).
@_examples(
    dict(spec=_grid_spec(dt), fail=fail, buffers_only=False)
    for dt in ARITHMETIC
    for fail in (False, True)
)
@given(
    spec=tensor_specs(dtype=ARITHMETIC, views=NON_OVERLAPPING_VIEWS, values="bounded"),
    fail=st.booleans(),
    buffers_only=st.booleans(),
)
def test_functional_call_restores_module_and_writes_through(device, spec, fail, buffers_only):
    """Expected: the passed tensors updated as forward's in-place ops on
    another build say; the module's own tensors (same objects) unchanged.

    Kills: a functional_call that leaks the swapped-in state into the
    module (for some dtype, or when forward raises), or that writes the
    in-place updates elsewhere than into the passed tensors."""
    evidence.features(tensor_kind=frozenset({"parameter", "buffer"}))
    m = _Stateful(spec.build(device), spec.build(device))
    w0, b0 = m.w, m.buf
    before_w, before_b = element_bytes(w0), element_bytes(b0)
    passed = {"buf": spec.build(device)}
    if not buffers_only:
        passed["w"] = spec.build(device)
    want_buf, want_w = spec.build(device).add_(1), spec.build(device).mul_(2)
    if fail:
        with raises_with(ValueError, "forward failed on purpose"):
            torch.func.functional_call(m, passed, (True,))
    else:
        torch.func.functional_call(m, passed, (False,))
    assert m.w is w0 and m.buf is b0, "functional_call left other tensors in the module"
    assert_same_bits(passed["buf"], want_buf, "an in-place buffer update lands in the dict")
    if buffers_only:
        _bytes_kept(b0, before_b, "functional_call keeps the module's own buffer")
        assert_same_bits(w0, want_w, "an update of a parameter not passed lands in the module")
        return
    assert_same_bits(passed["w"], want_w, "an in-place parameter update lands in the dict")
    _bytes_kept(w0, before_w, "functional_call keeps the module's own parameter")
    _bytes_kept(b0, before_b, "functional_call keeps the module's own buffer")


# ------------------------------------------------------------- side effects


def _transformed(name: str, f):
    F = torch.func
    return {
        "vmap": F.vmap(f),
        "grad": F.grad(lambda x: f(x).sum()),
        "jacrev": F.jacrev(f),
        "jacfwd": F.jacfwd(f),
        "hessian": F.hessian(lambda x: f(x).sum()),
        "vmap(jacrev)": F.vmap(F.jacrev(f)),
    }[name]


@pytest.mark.claim("torch_func.side-effects-run-once")
@given(
    spec=tensor_specs(dtype=(torch.float32, torch.float64), views=NON_OVERLAPPING_VIEWS,
                      shape=shapes(min_dims=2, max_dims=2, min_side=1, max_side=5)),
    transform=st.sampled_from(["vmap", "grad", "jacrev", "jacfwd", "hessian", "vmap(jacrev)"]),
    target=st.sampled_from(["closure", "object-argument"]),
)  # fmt: skip
def test_side_effects_happen_once(device, spec, transform, target):
    """Kills: a transform that runs the Python function more than once (a
    per-example loop for larger batches, a retrace per output)."""
    x = spec.build(device)
    if not transform.startswith("vmap"):
        x = x[0]
    calls: list[int] = []
    evidence.features(form=transform)

    class Counter:
        n = 0

    counter = Counter()

    def f(a, obj=None):
        calls.append(1)
        if obj is not None:
            obj.n += 1
        return a.sin() * 2

    if target == "object-argument" and transform == "vmap":
        torch.func.vmap(f, in_dims=(0, None))(x, counter)
        assert counter.n == 1, f"vmap mutated the object argument {counter.n} times"
    else:
        _transformed(transform, f)(x)
    assert len(calls) == 1, f"{transform}(f) ran f {len(calls)} times"


@pytest.mark.claim("torch_func.vmap-doc-example-pops-caller-list")
@given(
    spec=tensor_specs(dtype=FLOATING, shape=shapes(min_dims=2, max_dims=2, min_side=1, max_side=5)),
    length=st.integers(1, 5),
)
def test_vmap_doc_example_pops_callers_list(device, spec, length):
    """The UX Limitations example as stated (stale: recorded in
    expectations, pinned by ``torch_func.pytree-arguments-rebuilt``).

    Kills: a vmap that runs ``f`` more than once."""
    x = spec.build(device)
    lst = list(range(length))
    calls: list[int] = []

    def f(a, items):
        items.pop()
        calls.append(1)
        return a.sum(0)

    torch.func.vmap(f, in_dims=(0, None))(x, lst)
    assert len(calls) == 1, f"vmap ran f {len(calls)} times"
    assert len(lst) == length - 1, "the caller's list was not popped"


@pytest.mark.claim("torch_func.pytree-arguments-rebuilt")
@given(
    spec=tensor_specs(dtype=FLOATING, shape=shapes(min_dims=1, max_dims=2, min_side=1)),
    container=st.sampled_from(["list", "dict", "list-of-tensors", "object"]),
)
def test_vmap_rebuilds_pytree_arguments(device, spec, container):
    """Pins torch 2.13 where the doc example deviates.

    Kills: a vmap that passes list/dict arguments through as the caller's
    objects (the function's mutations then reach the caller), or that
    copies non-pytree objects."""
    x = spec.build(device)
    seen: list = []

    class Obj:
        pass

    if container == "list":
        arg, in_dims = [1, 2, 3], (0, None)
    elif container == "dict":
        arg, in_dims = {"k": 1, "j": 2}, (0, None)
    elif container == "list-of-tensors":
        arg, in_dims = [spec.build(device), 7], (0, [0, None])
    else:
        arg, in_dims = Obj(), (0, None)
    snapshot = list(arg) if isinstance(arg, list) else dict(arg) if isinstance(arg, dict) else None

    def f(a, c):
        seen.append(c)
        if isinstance(c, list):
            c.pop()
        elif isinstance(c, dict):
            c.pop("k")
        return a * 1

    torch.func.vmap(f, in_dims=in_dims)(x, arg)
    if container == "object":
        assert seen[0] is arg, "vmap did not pass a non-pytree argument as the same object"
        return
    assert seen[0] is not arg, f"vmap passed the caller's {container} itself"
    assert type(seen[0]) is type(arg), "vmap rebuilt the container as another type"
    if container == "list-of-tensors":
        assert len(arg) == 2 and arg[0] is snapshot[0], "the caller's list changed"
    else:
        assert arg == snapshot, f"the caller's {container} changed"


#: Ops applied to a batched tensor ``b`` that escaped vmap: name -> (call_form,
#: the op). Out-of-place ops as a method (``b + 1`` is ``Tensor.__add__``), as
#: a ``torch.*`` function, with a keyword argument, and in-place ops.
_ESCAPED_USES = {
    "sin": ("method", lambda b: b.sin()),
    "sum": ("method", lambda b: b.sum()),
    "clone": ("method", lambda b: b.clone()),
    "add": ("method", lambda b: b + 1),
    "torch.sin": ("function", lambda b: torch.sin(b)),
    "torch.mul": ("function", lambda b: torch.mul(b, 2)),
    "torch.add(other=)": ("keyword", lambda b: torch.add(b, other=1)),
    "mul(other=)": ("keyword", lambda b: b.mul(other=2)),
    "sum(dim=)": ("keyword", lambda b: b.sum(dim=0)),
    "mul_": ("inplace", lambda b: b.mul_(2)),
    "add_": ("inplace", lambda b: b.add_(1)),
}


@pytest.mark.claim("torch_func.escaped-batched-tensor-raises")
@pytest.mark.observes("clone")
# Issue 29, call_form ("an op (out-of-place or in-place)"): a method, a
# torch.* function, a keyword call and an in-place op, by construction.
@value_examples(
    "op",
    ("sin", "torch.sin", "torch.add(other=)", "mul_"),
    spec=TensorSpec(
        dtype=torch.float32, base_shape=(2, 3), storage=(1.5, -2.0, 0.5, 3.0, 0.25, 1.0)
    ),
)
@given(
    spec=tensor_specs(dtype=FLOATING, shape=shapes(min_dims=1, max_dims=3, min_side=1)),
    op=st.sampled_from(sorted(_ESCAPED_USES)),
)
def test_escaped_batched_tensor_raises(device, spec, op):
    """The op's calling form is reported as ``call_form``.

    Kills: a vmap whose leaked per-example tensors are ordinary tensors
    (an eager loop for some dtype), silently giving one example's values,
    or an op (in some calling form) that computes on an escaped tensor."""
    x = spec.build(device)
    leaked: list[torch.Tensor] = []
    torch.func.vmap(lambda b: (leaked.append(b), b * 1)[1])(x)
    (b,) = leaked
    assert tuple(b.shape) == tuple(x.shape[1:]), f"the escaped tensor has shape {tuple(b.shape)}"
    form, use = _ESCAPED_USES[op]
    evidence.features(call_form=form)
    with raises_with(RuntimeError, "may have escaped from inside a function being vmapped"):
        use(b)


# ------------------------------------------- derivative values and result shapes
#
# The values the derivative transforms return, against float64 references
# computed without torch.func, over generated smooth functions f(x, y) of two
# tensors of one shape (<= 3x3, every strided layout tensor_specs draws; for
# forward mode every non-overlapping one: it refuses expanded primals).
#
# - Reference: the same function on contiguous float64 copies of the inputs
#   (float32 values are float64 values, so both start from the very same
#   numbers), differentiated by torch.autograd.grad one output element at a
#   time (reverse mode; second derivatives by double backward).
# - API-independent check (float64 inputs): central finite differences of the
#   float64 function evaluated without autograd, step h = 1e-6 (first
#   derivatives; second derivatives: the four-point formula, h = 1e-3):
#   |got - fd| <= FD_RTOL * max(max|fd|, 1) + u (+ r), u = max|D(2h) - D(h)|
#   the truncation estimate, r = 8 * eps64 * max|f| / h^2 the rounding of the
#   four-point formula's differences. FD_RTOL = 1e-6 (conformance.tolerances).
# - Rounding rule (float32 and float64 results against the float64 reference):
#   |got - ref| <= atol + rtol * |ref|, rtol = K * eps * n, atol = rtol * M,
#   K = 4 roundings per op (conformance.tolerances), eps of the inputs' dtype,
#   n = ops + 1 (the reduction; twice that for second derivatives), and M the
#   conditioning computed from the float64 reference alone: the larger of 1,
#   the largest |gradient| flowing through the float64 backward (times the
#   largest |cotangent| / |tangent| where one scales it), the largest l1 norm of
#   a row of |J| contracted with the |cotangent| / |tangent|, and the
#   sensitivity: how far the float64 result moves, per float32 eps, when every
#   forward intermediate is scaled by 1 + eps32. Forward values use the
#   largest l1 norm of an intermediate instead of the gradient flow. Never
#   torch's float32 result.

#: Output bound of each op of the generated functions given its input bound
#: ``b`` (|x|, |y| <= 2, |w| <= 1, |c| <= 2): keeps every value finite and far
#: from float32 overflow; an op that would exceed :data:`_MAX_BOUND` (exp of a
#: large value, a repeated square) is drawn as tanh instead.
_SMOOTH_BOUNDS = {
    "sin": lambda b: 1.0,
    "cos": lambda b: 1.0,
    "tanh": lambda b: 1.0,
    "sigmoid": lambda b: 1.0,
    "exp": lambda b: math.exp(min(b, 60.0)),
    "square": lambda b: b * b,
    "mul_y": lambda b: 2 * b,
    "add_y": lambda b: b + 2,
    "matmul_w": lambda b: 3 * b,
    "scale": lambda b: 2 * b,
}
_MAX_BOUND = 50.0


@dataclass(frozen=True)
class SmoothFn:
    """A generated smooth function ``f(x, y)`` of two tensors of one shape.

    ``ops`` apply in turn to ``x``: ``sin``, ``cos``, ``tanh``, ``sigmoid``,
    ``exp``, ``square`` (``v * v``), ``mul_y`` / ``add_y`` (with ``y``),
    ``matmul_w`` (``v @ w[:d, :d]`` for the constant 3x3 matrix ``w``, ``d``
    the last side; a 0-d value is scaled by ``w[0, 0]``), ``("scale", c)``;
    then ``reduce``: ``"sum"`` / ``"mean"`` over the example's dimensions (a
    scalar), ``"sum0"`` over its first dimension, or ``"none"``. With
    ``batch=1`` both arguments carry one leading batch dimension (finite
    differences evaluate all their points in one call). ``hook`` sees every
    intermediate (the references record and scale them)."""

    ops: tuple
    reduce: str
    w: tuple

    def __call__(self, x, y, *, batch: int = 0, hook=None):
        v = x
        for op in self.ops:
            v = self._apply(op, v, y, batch)
            if hook is not None:
                v = hook(v)
        dims = tuple(range(batch, v.dim()))
        if not dims or self.reduce == "none":
            return v
        if self.reduce == "sum0":
            return v.sum(batch)
        return v.sum(dims) if self.reduce == "sum" else v.mean(dims)

    def _apply(self, op, v, y, batch):
        name = op[0]
        if name in ("sin", "cos", "tanh", "sigmoid", "exp"):
            return getattr(torch, name)(v)
        if name == "square":
            return v * v
        if name == "mul_y":
            return v * y
        if name == "add_y":
            return v + y
        if name == "scale":
            return v * op[1]
        w = torch.tensor(self.w, dtype=v.dtype, device=v.device).reshape(3, 3)
        if v.dim() == batch:
            return v * w[0, 0]
        d = v.shape[-1]
        return v @ w[:d, :d]

    def formula(self) -> str:
        """The function as an expression (for notes)."""
        s = "x"
        for op in self.ops:
            name = op[0]
            s = {
                "square": f"({s})**2",
                "mul_y": f"({s} * y)",
                "add_y": f"({s} + y)",
                "matmul_w": f"({s} @ w)",
                "scale": f"({s} * {op[-1]!r})",
            }.get(name, f"{name}({s})")
        return s if self.reduce == "none" else f"{self.reduce}({s})"

    @property
    def n_ops(self) -> int:
        """The ops and the reduction (the ``n`` of the rounding rule)."""
        return len(self.ops) + 1


_SCALES = (-2.0, -1.5, -0.75, -0.25, 0.5, 1.25, 2.0)
_SCALAR_REDUCES = ("sum", "mean")
_ALL_REDUCES = ("none", "sum0", "sum", "mean")


def _matrix(seed: int) -> tuple[float, ...]:
    """A 3x3 matrix (row major) with entries k/4, k in -4..4, from ``seed``
    (one integer draw instead of nine: the draws are most of an example's cost)."""
    out = []
    for _ in range(9):
        seed = (seed * 1103515245 + 12345) % 2**31
        out.append(((seed >> 16) % 9 - 4) / 4)
    return tuple(out)


@st.composite
def _smooth_fns(draw, reduces=_SCALAR_REDUCES):
    """:class:`SmoothFn` of 1..3 ops drawn from the smooth ones."""
    ops, bound = [], 2.0
    for name in draw(st.lists(st.sampled_from(sorted(_SMOOTH_BOUNDS)), min_size=1, max_size=3)):
        op = (name, draw(st.sampled_from(_SCALES))) if name == "scale" else (name,)
        nxt = _SMOOTH_BOUNDS[name](bound)
        if nxt > _MAX_BOUND:
            op, nxt = ("tanh",), 1.0
        ops.append(op)
        bound = nxt
    reduce = draw(st.sampled_from(reduces))
    return SmoothFn(tuple(ops), reduce, _matrix(draw(st.integers(0, 2**16))))


def _small(v: float) -> float:
    """A drawn bounded value (|v| <= 1e3) mapped into [-2, 2], exact in float32."""
    return float(np.float32(v / 512))


@functools.cache
def _shapes_upto_3(max_dims: int, min_side: int) -> st.SearchStrategy:
    return shapes(max_dims=max_dims, min_side=min_side, max_side=3)


@functools.cache
def _float_specs(shape: tuple[int, ...], views) -> st.SearchStrategy[TensorSpec]:
    """float32/float64 specs of ``shape`` (one strategy object per distinct
    arguments: building strategies afresh per draw costs more than drawing)."""
    return tensor_specs(dtype=(torch.float32, torch.float64), shape=shape, views=views)


@st.composite
def _value_cases(draw, *, batch=False, max_dims=2, min_side=1, views=True):
    """``(x_spec, y_spec)``: float32 or float64 (the same for both), one
    shape of 0..``max_dims`` dims with sides ``min_side``..3 (with ``batch``,
    a leading batch dimension of 1..3 more), in any strided layout of
    ``views`` (offset, stepped, transposed, expanded, unsqueeze/select views;
    ``y`` has ``x``'s layout and other values), values in [-2, 2] exact in
    float32."""
    shape = tuple(draw(_shapes_upto_3(max_dims, min_side)))
    if batch:
        shape = (draw(st.integers(1, 3)), *shape)
    spec = draw(_float_specs(shape, views if isinstance(views, bool) else tuple(views)))
    xs = tuple(_small(v) for v in spec.storage)
    ys = tuple(_small(-v * 0.75) for v in reversed(spec.storage))
    return dataclasses.replace(spec, storage=xs), dataclasses.replace(spec, storage=ys)


def _grid_value_cases(*, max_dims=2, min_dims=0, nonempty=False, overlapping=True):
    """``(x_spec, y_spec)`` per dtype (float32, float64) and layout family of
    :data:`strategies.GRID_LAYOUTS` of at most ``max_dims`` dims and sides
    <= 3 (contiguous, offset, stepped, transposed, select, expanded, 0-d,
    zero-size ...; without ``overlapping`` not the expanded one), values in
    [-1.5, 1.5]; ``y`` is contiguous. Ordered layout by layout (float32,
    then float64), so :func:`_alternate` gives the two dtypes of one layout
    different variants."""
    cases = []
    for pair in zip(layout_grid([torch.float32]), layout_grid([torch.float64]), strict=True):
        for spec in pair:
            dt, shape = spec.dtype, spec.shape
            if not min_dims <= len(shape) <= max_dims or any(s > 3 for s in shape):
                continue
            if (nonempty and 0 in shape) or (not overlapping and _overlaps(spec)):
                continue
            n = math.prod(spec.base_shape)
            x = dataclasses.replace(
                spec, storage=tuple(((i * 7) % 9 - 4) * 0.375 for i in range(n))
            )
            m = math.prod(shape)
            y = TensorSpec(dtype=dt, base_shape=shape,
                           storage=tuple(((i * 5) % 7 - 3) * 0.5 + 0.25 for i in range(m)))  # fmt: skip
            cases.append((x, y))
    return cases


def _alternate(cases, variants):
    """``(case, variant)`` pairs: each explicit case once, with the variants
    (function, argnums, calling form) taken in turn, so every layout and
    dtype of the grid runs and every variant meets several of them."""
    return [(c, variants[i % len(variants)]) for i, c in enumerate(cases)]


def _overlaps(spec: TensorSpec) -> bool:
    """Does the spec's tensor have elements sharing one memory location (an
    expanded view)? Read from its strides on the meta device."""
    meta = spec.apply_views(torch.empty(spec.base_shape, device="meta"))
    return "expanded" in layout_kinds(meta)


#: The layouts forward-mode transforms accept as primals: every view kind
#: but ``expand`` (torch_func.forward-mode-refuses-overlapping-primals).
_FORWARD_VIEWS = NON_OVERLAPPING_VIEWS


#: A fixed non-symmetric matrix for the explicit examples.
_GRID_W = (0.5, -1.0, 0.25, 0.75, 0.5, -0.5, -0.25, 1.0, 0.125)
#: The explicit examples' functions: one combining both arguments through a
#: non-symmetric matmul (a Jacobian that is not symmetric, a gradient in y).
_GRID_FNS = {r: SmoothFn((("sin",), ("mul_y",), ("matmul_w",)), r, _GRID_W) for r in _ALL_REDUCES}


@st.composite
def _transform_cases(draw, transforms=("jacrev", "jacfwd")):
    """``(x_spec, y_spec, transform)``: a :func:`_value_cases` case in the
    layouts ``transform`` accepts (forward mode: no overlapping views)."""
    transform = draw(st.sampled_from(transforms))
    forward = transform in ("jacfwd", "hessian", "jvp")
    x, y = draw(_FORWARD_CASES if forward else _ANY_CASES)
    return x, y, transform


_ANY_CASES = _value_cases()
_FORWARD_CASES = _value_cases(views=_FORWARD_VIEWS)


def _to64(t: torch.Tensor) -> torch.Tensor:
    """A contiguous float64 copy of ``t``'s values (the reference's input)."""
    return t.detach().to(torch.float64).clone(memory_format=torch.contiguous_format)


def _eps32() -> float:
    return torch.finfo(torch.float32).eps


class _Probe:
    """The hook of a float64 reference run: scales every forward
    intermediate by ``1 + scale`` and records the largest |gradient| flowing
    into it and its largest l1 norm."""

    def __init__(self, scale: float = 0.0):
        self.scale = scale
        self.flow = 0.0
        self.l1 = 0.0

    def _record(self, g):
        if g.numel():
            self.flow = max(self.flow, g.abs().max().item())

    def __call__(self, v):
        if self.scale:
            v = v * (1 + self.scale)
        self.l1 = max(self.l1, v.detach().abs().sum().item())
        if v.requires_grad:
            v.register_hook(self._record)
        return v


def _autograd_jacobian(fn: SmoothFn, args, wrt: int, scale: float = 0.0):
    """``(out, J, probe)`` of ``fn(*args)`` (float64) with ``J`` of shape
    ``out.shape + args[wrt].shape``, by ``torch.autograd.grad`` of each output
    element in turn (no torch.func)."""
    leaves = [a.clone().requires_grad_() for a in args]
    probe = _Probe(scale)
    with torch.enable_grad():
        out = fn(*leaves, hook=probe)
        rows = []
        flat = out.reshape(-1)
        for i in range(flat.numel()):
            (g,) = torch.autograd.grad(flat[i], leaves[wrt], retain_graph=True, allow_unused=True)
            rows.append(torch.zeros_like(leaves[wrt]) if g is None else g)
    shape = tuple(out.shape) + tuple(leaves[wrt].shape)
    jac = torch.stack(rows).reshape(shape) if rows else out.new_zeros(shape)
    return out.detach(), jac.detach(), probe


def _autograd_hessian(fn: SmoothFn, args, wrt: int, scale: float = 0.0):
    """``(H, probe)``: the Hessian of the scalar ``fn(*args)`` (float64) with
    respect to ``args[wrt]`` by double backward through ``torch.autograd.grad``."""
    leaves = [a.clone().requires_grad_() for a in args]
    a = leaves[wrt]
    probe = _Probe(scale)
    with torch.enable_grad():
        out = fn(*leaves, hook=probe)
        (g,) = torch.autograd.grad(out, a, create_graph=True, allow_unused=True)
        rows = []
        if g is not None:
            flat = g.reshape(-1)
            for i in range(flat.numel()):
                h = None
                if flat[i].requires_grad:
                    (h,) = torch.autograd.grad(flat[i], a, retain_graph=True, allow_unused=True)
                rows.append(torch.zeros_like(a) if h is None else h)
    shape = tuple(a.shape) * 2
    hess = torch.stack(rows).reshape(shape) if rows else a.new_zeros(shape)
    return hess.detach(), probe


def _sensitivity(compute, ref: torch.Tensor) -> float:
    """How far ``compute(scale)`` (a float64 reference with every forward
    intermediate scaled by ``1 + scale``) moves per float32 eps, for
    ``scale = eps`` (a first-order measure: ``-eps`` moves it as far)."""
    if not ref.numel():
        return 0.0
    eps = _eps32()
    return (compute(eps) - ref).abs().max().item() / eps


def _assert_rounding(got, ref, n: int, magnitude: float, what: str, dtype=None) -> None:
    """``got`` matches the float64 ``ref`` by the rounding rule of ``dtype``
    (the inputs' dtype, the precision the transform computes in; ``got``'s
    own by default): ``|got - ref| <= rtol * (M + |ref|)``, ``rtol = K * eps * n``.
    The result's dtype is the result-structure claims' business (forward
    mode may return float64 for float32 inputs: see
    torch_func.forward-mode-python-scalar-upcasts-0d-tangent)."""
    assert isinstance(got, torch.Tensor), f"{what} is a {type(got).__name__}, not a tensor"
    assert tuple(got.shape) == tuple(ref.shape), (
        f"{what} has shape {tuple(got.shape)}, the reference {tuple(ref.shape)}"
    )
    rtol = K * torch.finfo(dtype or got.dtype).eps * n
    atol = rtol * max(magnitude, 1.0)
    note(f"{what}: {got.tolist()} vs float64 {ref.tolist()} (rtol={rtol:.2e}, M={magnitude:.3g})")
    err = excess(got, ref, rtol, atol)
    assert err <= 1.0, (
        f"{what} differs from the float64 reference computed without torch.func "
        f"({err:.2f} x the tolerance rtol={rtol:.1e}, atol={atol:.1e})"
    )


def _assert_fd(got, fd, slack: float, what: str) -> None:
    """A float64 ``got`` matches finite differences ``fd`` within
    ``FD_RTOL * max(max|fd|, 1) + slack`` (truncation, rounding)."""
    biggest = fd.abs().max().item() if fd.numel() else 0.0
    atol = FD_RTOL * max(biggest, 1.0) + slack
    note(f"{what}: {got.tolist()} vs finite differences {fd.tolist()} (atol={atol:.2e})")
    err = excess(got, fd, 0.0, atol)
    assert err <= 1.0, (
        f"{what} (float64) differs from central finite differences ({err:.2f} x the tolerance "
        f"{atol:.1e})"
    )


_FD_H = 1e-6
_FD_H2 = 1e-3


def _fd_directional(fn: SmoothFn, x, y, dx, dy, h: float = _FD_H):
    """Central differences of ``fn`` (float64, no autograd) at ``(x, y)``
    along ``P`` directions ``(dx[p], dy[p])``: ``(D, u)`` with ``D`` of shape
    ``(P, *out_shape)`` at step ``h`` and ``u = max|D(2h) - D(h)|``. All
    points are evaluated in one batched call."""
    p = dx.shape[0]
    steps = torch.tensor([h, -h, 2 * h, -2 * h], dtype=torch.float64, device=x.device)
    steps = steps.reshape(4, 1, *([1] * x.dim()))
    xs = (x + steps * dx).reshape(4 * p, *x.shape)
    ys = (y + steps * dy).reshape(4 * p, *y.shape)
    with torch.no_grad():
        out = fn(xs, ys, batch=1)
    out = out.reshape(4, p, *out.shape[1:])
    d1 = (out[0] - out[1]) / (2 * h)
    d2 = (out[2] - out[3]) / (4 * h)
    return d1, ((d2 - d1).abs().max().item() if d1.numel() else 0.0)


def _unit_directions(a: torch.Tensor) -> torch.Tensor:
    """One direction per element of ``a``: shape ``(a.numel(), *a.shape)``."""
    n = a.numel()
    return torch.eye(n, dtype=torch.float64, device=a.device).reshape(n, *a.shape)


def _fd_jacobian(fn: SmoothFn, x, y, wrt: int):
    """``(J, u)``: the Jacobian of ``fn`` w.r.t. argument ``wrt`` by central
    differences, shape ``out.shape + arg.shape``."""
    a = (x, y)[wrt]
    e = _unit_directions(a)
    zero = torch.zeros_like(e)
    d, u = _fd_directional(fn, x, y, e if wrt == 0 else zero, zero if wrt == 0 else e)
    out_shape = tuple(d.shape[1:])
    return d.movedim(0, -1).reshape(out_shape + tuple(a.shape)), u


def _fd_hessian(fn: SmoothFn, x, y, wrt: int, h: float = _FD_H2):
    """``(H, slack)``: the Hessian of the scalar ``fn`` w.r.t. argument ``wrt``
    by the four-point formula ``(f(a+h(ei+ej)) + f(a-h(ei+ej)) - f(a+h(ei-ej))
    - f(a-h(ei-ej))) / 4h^2`` (float64, no autograd); ``slack`` is
    ``max|H(2h) - H(h)| + 8 * eps64 * max|f| / h^2``."""
    a, other = (x, y) if wrt == 0 else (y, x)
    n = a.numel()
    e = _unit_directions(a)
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    plus = (e[i.reshape(-1)] + e[j.reshape(-1)]) if n else e
    minus = (e[i.reshape(-1)] - e[j.reshape(-1)]) if n else e

    def second(step):
        pts = torch.cat([a + step * plus, a - step * plus, a + step * minus, a - step * minus])
        rest = other.expand(pts.shape[0], *other.shape)
        with torch.no_grad():
            vals = fn(pts, rest, batch=1) if wrt == 0 else fn(rest, pts, batch=1)
        v = vals.reshape(4, n * n)
        hess = ((v[0] + v[1] - v[2] - v[3]) / (4 * step * step)).reshape(tuple(a.shape) * 2)
        return hess, (vals.abs().max().item() if vals.numel() else 0.0)

    h1, fmax = second(h)
    h2, _ = second(2 * h)
    u = (h2 - h1).abs().max().item() if h1.numel() else 0.0
    return h1, u + 8 * torch.finfo(torch.float64).eps * fmax / (h * h)


def _build_pair(case, device):
    x_spec, y_spec = case
    return x_spec.build(device), y_spec.build(device)


def _gradient_reference(fn: SmoothFn, x64, y64, wrt: int):
    """``(grad, M)``: the float64 autograd gradient of the scalar ``fn`` and
    its conditioning (:func:`_assert_rounding`'s ``M``)."""
    _, ref, probe = _autograd_jacobian(fn, (x64, y64), wrt)
    sens = _sensitivity(lambda s: _autograd_jacobian(fn, (x64, y64), wrt, s)[1], ref)
    return ref, max(1.0, probe.flow, sens)


def _check_gradient(got, fn, x64, y64, wrt: int, dtype: torch.dtype, what: str):
    """``got`` is the gradient of the scalar ``fn`` w.r.t. argument ``wrt``
    at inputs of ``dtype``: by the rounding rule against the float64
    autograd gradient and, for float64 inputs, against central finite
    differences."""
    ref, magnitude = _gradient_reference(fn, x64, y64, wrt)
    _assert_rounding(got, ref, fn.n_ops, magnitude, what, dtype=dtype)
    if dtype == torch.float64:
        fd, u = _fd_jacobian(fn, x64, y64, wrt)
        _assert_fd(got, fd, u, what)


def _forward_reference(fn: SmoothFn, x64, y64):
    """``(out, M)``: the float64 value of ``fn`` and its conditioning for the
    forward rounding rule (largest l1 norm of an intermediate, sensitivity)."""
    probe = _Probe()
    with torch.no_grad():
        out = fn(x64, y64, hook=probe)
    sens = _sensitivity(lambda s: fn(x64, y64, hook=_Probe(s)), out)
    return out, max(1.0, probe.l1, sens)


@pytest.mark.claim("torch_func.grad-values")
@pytest.mark.observes("backward", "to", "clone")
@_examples(
    dict(case=c, fn=_GRID_FNS["sum"], argnums=a)
    for c, a in _alternate(_grid_value_cases(), ("0", "1", "0,1"))
)
@given(
    case=_value_cases(),
    fn=_smooth_fns(),
    argnums=st.sampled_from(["0", "1", "0,1"]),
)
def test_grad_values_match_float64_reference(device, case, fn, argnums):
    """``torch.func.grad(f, argnums)(x, y)`` for a generated smooth scalar
    ``f``: each gradient against the float64 ``torch.autograd.grad``
    gradient of float64 copies (rounding rule of the section comment), and
    a float64 gradient also against central finite differences
    (``1e-6 * max(|fd|, 1)`` plus the truncation estimate).

    Kills: a grad whose values are off - a wrong or dropped chain-rule
    factor, a gradient w.r.t. the wrong argument, a float32 path off by a
    relative 1e-3 (thousands of eps), a wrong result for strided (expanded,
    transposed, sliced) inputs."""
    x, y = _build_pair(case, device)
    nums = tuple(int(a) for a in argnums.split(","))
    evidence.features(argnums=argnums)
    note(f"f(x, y) = {fn.formula()}")
    got = torch.func.grad(fn, argnums=nums if len(nums) > 1 else nums[0])(x, y)
    if len(nums) > 1:
        assert isinstance(got, tuple) and len(got) == len(nums), (
            f"grad with argnums={nums} did not return one gradient per argument"
        )
    else:
        got = (got,)
    x64, y64 = _to64(x), _to64(y)
    for wrt, g in zip(nums, got, strict=True):
        _check_gradient(g, fn, x64, y64, wrt, x.dtype, f"grad w.r.t. argument {wrt}")


@pytest.mark.claim("torch_func.grad-and-value-values")
@pytest.mark.observes("backward", "to", "clone")
@_examples(
    dict(case=c, fn=_GRID_FNS["sum"], argnums=a) for c, a in _alternate(_grid_value_cases(), (0, 1))
)
@given(case=_value_cases(), fn=_smooth_fns(), argnums=st.sampled_from([0, 1]))
def test_grad_and_value_match_float64_reference(device, case, fn, argnums):
    """``torch.func.grad_and_value(f, argnums)(x, y)`` is ``(gradient,
    value)``: the gradient as in ``test_grad_values_match_float64_reference``,
    the value against ``f`` evaluated in float64 on float64 copies (forward
    rounding rule).

    Kills: a grad_and_value that returns the pair in the other order (for
    some shape, e.g. 0-d inputs where both have one shape), a value
    computed at other inputs or in another precision, or a wrong
    gradient."""
    x, y = _build_pair(case, device)
    note(f"f(x, y) = {fn.formula()}")
    got = torch.func.grad_and_value(fn, argnums=argnums)(x, y)
    assert isinstance(got, tuple) and len(got) == 2, "grad_and_value did not return a pair"
    g, value = got
    x64, y64 = _to64(x), _to64(y)
    out64, magnitude = _forward_reference(fn, x64, y64)
    _assert_rounding(value, out64, fn.n_ops, magnitude, "grad_and_value's value", dtype=x.dtype)
    _check_gradient(g, fn, x64, y64, argnums, x.dtype, f"grad_and_value's gradient ({argnums})")


def _cotangent(values, shape, dtype, device):
    """A cotangent/tangent of ``shape`` from drawn values (cycled)."""
    n = math.prod(shape)
    flat = [values[i % len(values)] for i in range(n)]
    return torch.tensor(flat, dtype=dtype, device=device).reshape(shape)


#: Drawn cotangent / tangent values: k / 8 for k in -16..16, cycled over the shape.
_DIRECTIONS = st.lists(st.integers(-16, 16).map(lambda k: k / 8), min_size=1, max_size=9)


@pytest.mark.claim("torch_func.vjp-values")
@pytest.mark.observes("backward", "to", "clone")
@_examples(
    dict(case=c, fn=_GRID_FNS[r], primals=p, cot=[1.5, -0.5, 2.0, 0.25])
    for c, (r, p) in _alternate(_grid_value_cases(), (("none", 2), ("sum0", 1)))
)
@given(
    case=_value_cases(),
    fn=_smooth_fns(_ALL_REDUCES),
    primals=st.sampled_from([1, 2]),
    cot=_DIRECTIONS,
)
def test_vjp_values_match_float64_reference(device, case, fn, primals, cot):
    """``torch.func.vjp(f, x)`` (``y`` captured) or ``vjp(f, x, y)``, then
    ``vjp_fn(v)`` for a drawn cotangent ``v`` (values k/8, |v| <= 2): the
    output against float64 ``f``, each VJP against ``v`` contracted with the
    float64 autograd Jacobian, and (float64) against central differences of
    ``sum(v * f)``.

    Kills: a vjp_fn that drops the cotangent's scale (normalises or ignores
    it), contracts it with the wrong output dimensions, returns the VJP of
    another primal, or a vjp whose output is off."""
    x, y = _build_pair(case, device)
    evidence.features(primals=primals)
    note(f"f(x, y) = {fn.formula()}")
    args = (x, y)[:primals]
    func = fn if primals == 2 else (lambda a: fn(a, y))
    out, vjp_fn = torch.func.vjp(func, *args)
    v = _cotangent(cot, tuple(out.shape), out.dtype, device)
    vjps = vjp_fn(v)
    x64, y64, v64 = _to64(x), _to64(y), _to64(v)
    out64, magnitude = _forward_reference(fn, x64, y64)
    _assert_rounding(out, out64, fn.n_ops, magnitude, "vjp's output", dtype=x.dtype)
    nd = v64.dim()
    for wrt in range(primals):
        _, jac, probe = _autograd_jacobian(fn, (x64, y64), wrt)
        ref = torch.tensordot(v64, jac, dims=nd)
        sens = _sensitivity(
            lambda s, w=wrt: torch.tensordot(v64, _autograd_jacobian(fn, (x64, y64), w, s)[1], nd),
            ref,
        )
        weight = v64.abs().max().item() if v64.numel() else 0.0
        spread = torch.tensordot(v64.abs(), jac.abs(), dims=nd)
        m = max(1.0, probe.flow * weight, sens, spread.max().item() if spread.numel() else 0.0)
        _assert_rounding(vjps[wrt], ref, fn.n_ops, m, f"the VJP of primal {wrt}", dtype=x.dtype)
        if x.dtype == torch.float64:
            fd_jac, u = _fd_jacobian(fn, x64, y64, wrt)
            fd = torch.tensordot(v64, fd_jac, dims=nd)
            slack = u * (v64.abs().sum().item() if v64.numel() else 0.0)
            _assert_fd(vjps[wrt], fd, slack, f"the VJP of primal {wrt}")


@pytest.mark.claim("torch_func.jvp-values")
@pytest.mark.observes("backward", "to", "clone")
@_examples(
    dict(case=c, fn=_GRID_FNS[r], primals=2, tan=[1.5, -0.5, 2.0, 0.25])
    for c, r in _alternate(_grid_value_cases(overlapping=False), ("none", "sum"))
)
@given(
    case=_value_cases(views=_FORWARD_VIEWS),
    fn=_smooth_fns(_ALL_REDUCES),
    primals=st.sampled_from([1, 2]),
    tan=_DIRECTIONS,
)
def test_jvp_values_match_float64_reference(device, case, fn, primals, tan):
    """``torch.func.jvp(f, primals, tangents)`` with one primal (``y``
    captured) or two, tangents from drawn values (k/8): the output against
    float64 ``f``, the tangent output against the float64 autograd Jacobians
    contracted with the tangents, and (float64) against the central
    difference of ``f`` along the tangents.

    Kills: a jvp that drops or rescales the tangent of some primal, returns
    the pair in the other order, or a tangent output off by a chain-rule
    factor (forward-mode formulas are separate from backward ones)."""
    x, y = _build_pair(case, device)
    evidence.features(primals=primals)
    note(f"f(x, y) = {fn.formula()}")
    tx = _cotangent(tan, tuple(x.shape), x.dtype, device)
    ty = _cotangent(list(reversed(tan)), tuple(y.shape), y.dtype, device) * -0.5
    if primals == 2:
        got = torch.func.jvp(fn, (x, y), (tx, ty))
    else:
        got = torch.func.jvp(lambda a: fn(a, y), (x,), (tx,))
    assert isinstance(got, tuple) and len(got) == 2, "jvp did not return (output, jvp_out)"
    out, tout = got
    x64, y64 = _to64(x), _to64(y)
    t64 = (_to64(tx), _to64(ty))[:primals]
    out64, magnitude = _forward_reference(fn, x64, y64)
    _assert_rounding(out, out64, fn.n_ops, magnitude, "jvp's output", dtype=x.dtype)

    def contract(scale):
        total = 0
        for wrt, t in enumerate(t64):
            jac = _autograd_jacobian(fn, (x64, y64), wrt, scale)[1]
            total = total + torch.tensordot(jac, t, dims=t.dim())
        return total

    ref = contract(0.0)
    flows, spread = 0.0, torch.zeros_like(ref)
    for wrt, t in enumerate(t64):
        _, jac, probe = _autograd_jacobian(fn, (x64, y64), wrt)
        weight = t.abs().max().item() if t.numel() else 0.0
        flows = max(flows, probe.flow * weight)
        spread = spread + torch.tensordot(jac.abs(), t.abs(), dims=t.dim())
    m = max(1.0, flows, _sensitivity(contract, ref), spread.max().item() if spread.numel() else 0.0)
    _assert_rounding(tout, ref, fn.n_ops, m, "jvp's tangent output", dtype=x.dtype)
    if x.dtype == torch.float64:
        dy = t64[1] if primals == 2 else torch.zeros_like(y64)
        fd, u = _fd_directional(fn, x64, y64, t64[0].unsqueeze(0), dy.unsqueeze(0))
        _assert_fd(tout, fd[0], u, "jvp's tangent output")


@pytest.mark.claim("torch_func.jacobian-values")
@pytest.mark.observes("backward", "to", "clone")
@_examples(
    dict(case=(*c, t), fn=_GRID_FNS[r], argnums=a)
    for t in ("jacrev", "jacfwd")
    for c, (r, a) in _alternate(
        _grid_value_cases(overlapping=t == "jacrev"), (("none", 0), ("sum0", 1))
    )
)
@given(case=_transform_cases(), fn=_smooth_fns(_ALL_REDUCES), argnums=st.sampled_from([0, 1]))
def test_jacobian_values_match_float64_reference(device, case, fn, argnums):
    """``jacrev`` / ``jacfwd`` of ``f`` w.r.t. argument ``argnums``: against
    the float64 Jacobian built row by row with ``torch.autograd.grad`` and
    (float64) against central differences column by column.

    Kills: a Jacobian transposed (output and input dimensions swapped: the
    same shape when f keeps its input's shape), taken w.r.t. the wrong
    argument, with rows or columns permuted, or off by a chain-rule factor
    in one of the two modes."""
    x, y = _build_pair(case[:2], device)
    transform = case[2]
    evidence.features(form=transform)
    note(f"f(x, y) = {fn.formula()}")
    got = getattr(torch.func, transform)(fn, argnums=argnums)(x, y)
    x64, y64 = _to64(x), _to64(y)
    _, ref, probe = _autograd_jacobian(fn, (x64, y64), argnums)
    sens = _sensitivity(lambda s: _autograd_jacobian(fn, (x64, y64), argnums, s)[1], ref)
    m = max(1.0, probe.flow, sens)
    _assert_rounding(got, ref, fn.n_ops, m, f"{transform}'s Jacobian", dtype=x.dtype)
    if x.dtype == torch.float64:
        fd, u = _fd_jacobian(fn, x64, y64, argnums)
        _assert_fd(got, fd, u, f"{transform}'s Jacobian")


@pytest.mark.claim("torch_func.hessian-values")
@pytest.mark.observes("backward", "to", "clone")
@_examples(
    dict(case=c, fn=_GRID_FNS["sum"], argnums=a)
    for c, a in _alternate(_grid_value_cases(overlapping=False), (0, 1))
)
@given(case=_value_cases(views=_FORWARD_VIEWS), fn=_smooth_fns(), argnums=st.sampled_from([0, 1]))
def test_hessian_values_match_float64_reference(device, case, fn, argnums):
    """``torch.func.hessian(f, argnums)(x, y)`` of a scalar ``f``: against
    the float64 double-backward Hessian (rounding rule with ``n`` doubled)
    and (float64) against the four-point central second difference.

    Kills: a hessian taken w.r.t. the wrong argument (or the mixed
    d2f/dx dy for argnums=1), a transposed or unsymmetrised one, or a
    second-order formula off by a factor."""
    x, y = _build_pair(case, device)
    note(f"f(x, y) = {fn.formula()}")
    got = torch.func.hessian(fn, argnums=argnums)(x, y)
    x64, y64 = _to64(x), _to64(y)
    ref, probe = _autograd_hessian(fn, (x64, y64), argnums)
    sens = _sensitivity(lambda s: _autograd_hessian(fn, (x64, y64), argnums, s)[0], ref)
    m = max(1.0, probe.flow, sens)
    what = f"hessian w.r.t. argument {argnums}"
    _assert_rounding(got, ref, 2 * fn.n_ops, m, what, dtype=x.dtype)
    if x.dtype == torch.float64:
        fd, slack = _fd_hessian(fn, x64, y64, argnums)
        _assert_fd(got, fd, slack, what)


def _batched_grid_cases():
    """Explicit per-sample cases: the grid's non-empty 1-D and 2-D layouts,
    the first dimension the batch."""
    return _grid_value_cases(min_dims=1, nonempty=True)


@pytest.mark.claim("torch_func.vmap-grad-per-sample-gradients")
@pytest.mark.observes("backward", "to", "clone")
# Issue 29, layout ("strided layouts"): the grid's non-empty 1-D and 2-D
# layouts, each with a variant that passes it batched (contiguous, offset,
# stepped, permuted, expanded) and the 1-D select-inner one unbatched (x[0]:
# a 0-d example), by construction; reported as passed to vmap.
@_examples(
    dict(case=c, fn=_GRID_FNS["sum"], in_dims=d, argnums=a)
    for c, (d, a) in _alternate(_batched_grid_cases(), (("None,0", 0), ("0,None", 1), ("0,0", 0)))
)
@given(
    case=_value_cases(batch=True),
    fn=_smooth_fns(),
    in_dims=st.sampled_from(["None,0", "0,0", "0,None"]),
    argnums=st.sampled_from([0, 1]),
)
def test_vmap_of_grad_gives_per_sample_gradients(device, case, fn, in_dims, argnums):
    """``vmap(grad(f, argnums), in_dims)(x, y)``: example ``b`` of the
    result against the float64 autograd gradient of ``f`` at that example
    alone (``x[b]`` or the unbatched ``x``, ``y[b]`` or ``y``); an unbatched
    argument is the first example of its spec (a view).

    Kills: per-sample gradients mixed across the batch (the batch's mean or
    sum for every example, the gradient of the summed loss), or the wrong
    example's gradient in a slot, for some in_dims."""
    xb, yb = _build_pair(case, device)
    dims = tuple(None if d == "None" else 0 for d in in_dims.split(","))
    x = xb if dims[0] == 0 else xb[0]
    y = yb if dims[1] == 0 else yb[0]
    evidence.features(layout=layout_kinds(x) | layout_kinds(y))
    note(f"f(x, y) = {fn.formula()}")
    got = torch.func.vmap(torch.func.grad(fn, argnums=argnums), in_dims=dims)(x, y)
    batch = xb.shape[0]
    assert tuple(got.shape) == (batch, *xb.shape[1:]), (
        f"vmap(grad) returned shape {tuple(got.shape)} for a batch of {batch}"
    )
    x64, y64 = _to64(x), _to64(y)
    for b in range(batch):
        xa = x64[b] if dims[0] == 0 else x64
        ya = y64[b] if dims[1] == 0 else y64
        ref, magnitude = _gradient_reference(fn, xa, ya, argnums)
        what = f"the per-sample gradient of example {b}"
        _assert_rounding(got[b], ref, fn.n_ops, magnitude, what, dtype=x.dtype)


# ------------------------------------------------------ result shapes and dtypes

_SHAPE_ANY = _value_cases(max_dims=3, min_side=0)
_SHAPE_FORWARD = _value_cases(max_dims=3, min_side=0, views=_FORWARD_VIEWS)


@st.composite
def _shape_cases(draw, transforms):
    """``(x_spec, y_spec, transform)`` with shapes of up to three dims of
    side 0..3 (zero-size included) in the layouts ``transform`` accepts."""
    transform = draw(st.sampled_from(transforms))
    forward = transform in ("jvp", "jacfwd", "hessian")
    x, y = draw(_SHAPE_FORWARD if forward else _SHAPE_ANY)
    return x, y, transform


def _has_scalar_op(fn: SmoothFn) -> bool:
    """Does ``fn`` apply an op with a Python float (``scale``)?"""
    return any(op[0] == "scale" for op in fn.ops)


def _scalar_op_reaches(fn: SmoothFn, argnums: int) -> bool:
    """Does an op with a Python float (``scale``) act on a value that depends on
    argument ``argnums``? ``x`` (0) is where ``fn``'s ops start; ``y`` (1) enters
    through ``mul_y``/``add_y``, so only a ``scale`` after one of them sees its
    tangent (a Jacobian w.r.t. ``y`` of ``x * 2.0`` has no Python float on its path)."""
    depends = argnums == 0
    for op in fn.ops:
        depends = depends or op[0] in ("mul_y", "add_y")
        if op[0] == "scale" and depends:
            return True
    return False


def _assert_like(got, ref: torch.Tensor, what: str, shape=None) -> None:
    """``got`` is a tensor with ``shape`` (``ref``'s by default) and ``ref``'s
    dtype and device."""
    want = tuple(ref.shape) if shape is None else tuple(shape)
    assert isinstance(got, torch.Tensor), f"{what} is a {type(got).__name__}, not a tensor"
    assert tuple(got.shape) == want, f"{what} has shape {tuple(got.shape)}, not {want}"
    assert got.dtype == ref.dtype, f"{what} has dtype {got.dtype}, not {ref.dtype}"
    assert got.device == ref.device, f"{what} is on {got.device}, not {ref.device}"


@pytest.mark.claim("torch_func.grad-result-like-input")
@_examples(
    dict(case=(*c, t), fn=_GRID_FNS["sum"], argnums=a)
    for c, (t, a) in _alternate(
        _grid_value_cases(max_dims=3), (("grad", "0"), ("grad_and_value", "0,1"), ("grad", "1"))
    )
)
@given(
    case=_shape_cases(("grad", "grad_and_value")),
    fn=_smooth_fns(("sum",)),
    argnums=st.sampled_from(["0", "1", "0,1"]),
)
def test_grad_result_has_the_arguments_shape_dtype_device(device, case, fn, argnums):
    """Kills: a grad that squeezes size-1 dimensions, flattens, transposes
    or broadcasts the gradient, returns it in another dtype (float64 for
    float32) or on another device, or returns a bare tensor for a tuple
    argnums."""
    x, y = _build_pair(case[:2], device)
    transform = case[2]
    nums = tuple(int(a) for a in argnums.split(","))
    evidence.features(form=transform, argnums=argnums)
    got = getattr(torch.func, transform)(fn, argnums=nums if len(nums) > 1 else nums[0])(x, y)
    if transform == "grad_and_value":
        assert isinstance(got, tuple) and len(got) == 2, "grad_and_value did not return a pair"
        got = got[0]
    if len(nums) > 1:
        assert isinstance(got, tuple) and len(got) == len(nums), (
            f"{transform} with argnums={nums} did not return a tuple of {len(nums)} gradients"
        )
    else:
        got = (got,)
    for wrt, g in zip(nums, got, strict=True):
        _assert_like(g, (x, y)[wrt], f"{transform}'s gradient w.r.t. argument {wrt}")


#: A function with an op by a Python float, and the grid's 0-d cases: where
#: forward mode upcasts (torch_func.forward-mode-python-scalar-upcasts-0d-tangent).
_SCALAR_FN = SmoothFn((("sin",), ("scale", -1.5)), "none", _GRID_W)
_GRID_0D = [c for c in _grid_value_cases() if c[0].shape == ()]


@pytest.mark.claim("torch_func.jacobian-hessian-shapes")
@_examples(
    dict(case=(*c, t), fn=_SCALAR_FN, argnums=0) for c in _GRID_0D for t in ("jacfwd", "jacrev")
)
@_examples(
    dict(case=(*c, t), fn=_GRID_FNS[r], argnums=a)
    for t in ("jacrev", "jacfwd", "hessian")
    for c, (r, a) in _alternate(
        _grid_value_cases(max_dims=3, overlapping=t == "jacrev"), (("none", 0), ("sum", 1))
    )
)
@given(
    case=_shape_cases(("jacrev", "jacfwd", "hessian")),
    fn=_smooth_fns(_ALL_REDUCES),
    argnums=st.sampled_from([0, 1]),
)
def test_jacobian_and_hessian_shapes(device, case, fn, argnums):
    """The expected shape is read from an eager call of ``f``.

    Kills: a Jacobian flattened to (out.numel(), in.numel()) for
    multi-dimensional inputs, transposed (input dimensions first), a Hessian
    with the argument's shape once, or a result in another dtype or on
    another device."""
    x, y = _build_pair(case[:2], device)
    transform = case[2]
    evidence.features(form=transform, scalar_op=_scalar_op_reaches(fn, argnums))
    arg = (x, y)[argnums]
    out_shape = tuple(fn(x, y).shape)
    got = getattr(torch.func, transform)(fn, argnums=argnums)(x, y)
    n = 2 if transform == "hessian" else 1
    _assert_like(got, arg, f"{transform}'s result", shape=out_shape + tuple(arg.shape) * n)


@pytest.mark.claim("torch_func.vjp-jvp-result-structure")
@_examples(dict(case=(*c, t), fn=_SCALAR_FN, primals=1) for c in _GRID_0D for t in ("jvp", "vjp"))
@_examples(
    dict(case=(*c, t), fn=_GRID_FNS[r], primals=p)
    for t in ("vjp", "jvp")
    for c, (r, p) in _alternate(
        _grid_value_cases(max_dims=3, overlapping=t == "vjp"), (("none", 1), ("sum0", 2))
    )
)
@given(
    case=_shape_cases(("vjp", "jvp")),
    fn=_smooth_fns(_ALL_REDUCES),
    primals=st.sampled_from([1, 2]),
)
def test_vjp_and_jvp_result_structure(device, case, fn, primals):
    """The expected output shape and dtype are read from an eager call of
    ``f``.

    Kills: a vjp_fn that returns a bare tensor for one primal (or a list),
    one VJP for two primals, VJPs in another shape or dtype; a jvp that
    returns a list or a triple, or a tangent output of another shape or
    dtype."""
    x, y = _build_pair(case[:2], device)
    transform = case[2]
    evidence.features(form=transform, primals=primals, scalar_op=_has_scalar_op(fn))
    args = (x, y)[:primals]
    func = fn if primals == 2 else (lambda a: fn(a, y))
    eager = fn(x, y)
    if transform == "vjp":
        res = torch.func.vjp(func, *args)
        assert isinstance(res, tuple) and len(res) == 2, "vjp did not return (output, vjp_fn)"
        out, vjp_fn = res
        _assert_like(out, eager, "vjp's output")
        assert callable(vjp_fn), "vjp's second element is not callable"
        vjps = vjp_fn(torch.ones_like(out))
        assert isinstance(vjps, tuple) and len(vjps) == primals, (
            f"vjp_fn returned {type(vjps).__name__} of length "
            f"{len(vjps) if isinstance(vjps, tuple | list) else '-'}, not a tuple of {primals}"
        )
        for i, (v, a) in enumerate(zip(vjps, args, strict=True)):
            _assert_like(v, a, f"the VJP of primal {i}")
        return
    tangents = tuple(torch.ones_like(a) for a in args)
    res = torch.func.jvp(func, args, tangents)
    assert isinstance(res, tuple) and len(res) == 2, "jvp did not return (output, jvp_out)"
    out, tout = res
    _assert_like(out, eager, "jvp's output")
    _assert_like(tout, eager, "jvp's tangent output")


# ----------------------------------------------- forward mode: what torch does


@st.composite
def _overlapping_specs(draw):
    """A float32/float64 spec whose tensor has overlapping elements: a base
    (any layout) expanded along a new leading dimension or a size-1 one to
    2 or 3, values in [-2, 2]."""
    shape = list(draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=3)))
    lead = draw(st.booleans())
    if not lead:
        shape[draw(st.integers(0, len(shape) - 1))] = 1
    spec = draw(
        tensor_specs(
            dtype=(torch.float32, torch.float64), shape=tuple(shape), views=NON_OVERLAPPING_VIEWS
        )
    )
    k = draw(st.integers(2, 3))
    target = (k, *shape) if lead else tuple(k if s == 1 else s for s in shape)
    spec = dataclasses.replace(
        spec, views=(*spec.views, ("expand", target)),
        storage=tuple(_small(v) for v in spec.storage),
    )  # fmt: skip
    return spec


def _overlapping_grid_spec(dtype: torch.dtype, layout: str) -> TensorSpec:
    """The grid spec of ``dtype`` in ``layout`` (at most 2-d, non-empty)
    expanded along a new leading dimension of size 2, values in [-2, 2]."""
    spec = _grid_spec(dtype, layout)
    return dataclasses.replace(
        spec, views=(*spec.views, ("expand", (2, *spec.shape))),
        storage=tuple(_small(v) for v in spec.storage),
    )  # fmt: skip


@pytest.mark.claim("torch_func.forward-mode-refuses-overlapping-primals")
@pytest.mark.observes("clone")
# Issue 29: an expanded primal over each base layout family of the grid
# (contiguous, offset, stepped, transposed), float32 and float64, each
# transform, by construction.
@_examples(
    dict(spec=_overlapping_grid_spec(dt, layout), fn=_GRID_FNS[r], transform=t)
    for layout in ("contiguous", "offset", "stepped", "transposed")
    for dt, r, t in (
        (torch.float32, "none", "jvp"),
        (torch.float64, "sum0", "jacfwd"),
        (torch.float32, "sum", "hessian"),
    )
)
@given(
    spec=_overlapping_specs(),
    fn=_smooth_fns(_ALL_REDUCES),
    transform=st.sampled_from(["jvp", "jacfwd", "hessian"]),
)
def test_forward_mode_refuses_overlapping_primals(device, spec, fn, transform):
    """``y`` is a contiguous copy of ``x``'s values (only the differentiated
    primal overlaps). Pins torch 2.13.

    Kills: a forward-mode transform that starts accepting overlapping
    primals (by copying them, as make_dual's page says it copies a tangent
    of another layout) - then this claim must be revisited, and the value
    claims widened to expanded primals - or that refuses them with another
    error."""
    x = spec.build(device)
    y = x.clone(memory_format=torch.contiguous_format)
    assert "expanded" in layout_kinds(x), "the drawn primal does not overlap"
    evidence.features(form=transform)
    with raises_with(RuntimeError, "more than one element of the written-to tensor"):
        if transform == "jvp":
            torch.func.jvp(fn, (x, y), (torch.ones_like(y), torch.ones_like(y)))
        elif transform == "jacfwd":
            torch.func.jacfwd(fn)(x, y)
        else:
            torch.func.hessian(lambda a, b: fn(a, b).sum())(x, y)


@st.composite
def _scalar_op_fns(draw):
    """A :func:`_smooth_fns` function with a ``("scale", c)`` op inserted."""
    fn = draw(_smooth_fns(_ALL_REDUCES))
    ops = list(fn.ops)
    ops.insert(draw(st.integers(0, len(ops))), ("scale", draw(st.sampled_from(_SCALES))))
    return dataclasses.replace(fn, ops=tuple(ops))


@pytest.mark.claim("torch_func.forward-mode-python-scalar-upcasts-0d-tangent")
# Issue 29, layout (0-d against one or more dimensions): every non-overlapping
# layout family of the grid, zero-size included, for both transforms and both
# dtypes, by construction; the case's spec reports it.
@_examples(
    dict(case=c, fn=SmoothFn((("scale", 2.0),), "none", _GRID_W), transform=t)
    for c in _grid_value_cases(overlapping=False)
    for t in ("jvp", "jacfwd")
)
@given(
    case=_FORWARD_CASES,
    fn=_scalar_op_fns(),
    transform=st.sampled_from(["jvp", "jacfwd"]),
)
def test_forward_mode_python_scalar_upcasts_0d_tangent(device, case, fn, transform):
    """The function applies ``v * c`` with a Python float ``c`` somewhere.
    Expected: float64 for a 0-d float32 primal, the primal's dtype
    otherwise; the output keeps the primal's dtype either way. Pins torch
    2.13 (pytorch#90065).

    Kills: a fix of the upcast (the tangent then keeps float32: the
    deviations recorded against torch_func.vjp-jvp-result-structure and
    torch_func.jacobian-hessian-shapes then pass unexpectedly) or an upcast
    spreading to 1-d and larger primals."""
    x, y = _build_pair(case, device)
    assert _has_scalar_op(fn), "the drawn function has no op with a Python float"
    evidence.features(form=transform)
    upcast = x.dim() == 0 and x.dtype == torch.float32
    want = torch.float64 if upcast else x.dtype
    if transform == "jvp":
        out, got = torch.func.jvp(fn, (x, y), (torch.ones_like(x), torch.ones_like(y)))
        assert out.dtype == x.dtype, f"jvp's output has dtype {out.dtype}, not {x.dtype}"
    else:
        got = torch.func.jacfwd(fn)(x, y)
    assert got.dtype == want, (
        f"{transform} of a {x.dim()}-d {x.dtype} primal through v * c returned {got.dtype}, "
        f"not {want}"
    )
