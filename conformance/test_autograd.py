"""Properties of leaves, ``requires_grad``, ``.grad``, ``retain_grad`` and
backward errors (claims in ``claims/autograd.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
Tensors are drawn as :class:`~strategies.TensorSpec` recipes; "leaf" tensors
are re-rooted with the spec's strides (``leaf=True``), so every layout family
(offsets, steps, permutes, expands, channels_last, 0-d, zero-size) is a
user-created tensor somewhere in the draws.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import evidence
from conformance.checks import bits_difference, capture_warnings, helper_op, raises_with
from strategies import (
    ALL_DTYPES,
    DIFFERENTIABLE,
    FLOATING,
    INTEGRAL,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    build_kind,
    domain_examples,
    layout_kinds,
    tensor_kind_of,
    value_examples,
)
from strategies.dtypes import BOOL, dtype_family

NONLEAF_GRAD_WARNING = "is not a leaf Tensor is being accessed"
REDUCED = (torch.float16, torch.bfloat16)

_LEAF_SPEC = TensorSpec(dtype=torch.float32, base_shape=(2,), storage=(1.0, -0.5))

# Unary operations valid for every differentiable dtype and every shape
# (0-d and zero-size included); each returns a new tensor (never its input).
DIFF_OPS = {
    "add": lambda t: t + 1,
    "mul": lambda t: t * 2,
    "neg": torch.neg,
    "exp": torch.exp,
    "sum": lambda t: t.sum(),
    "reshape": lambda t: t.reshape(-1),
    "index": lambda t: t[...],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t.expand(2, *t.shape),
    "clone": lambda t: t.clone(),
    "cat": lambda t: torch.cat([t.reshape(-1), t.reshape(-1)]),
    "stack": lambda t: torch.stack([t, t]),
}

# Operations valid for every dtype (bool and the wide unsigned ints included).
ANY_DTYPE_OPS = {
    "clone": lambda t: t.clone(),
    "reshape": lambda t: t.reshape(-1),
    "index": lambda t: t[...],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t.expand(2, *t.shape),
    "cat": lambda t: torch.cat([t.reshape(-1), t.reshape(-1)]),
    "stack": lambda t: torch.stack([t, t]),
    "mul": lambda t: t * 2,
    "sum": lambda t: t.sum(),
    "eq": lambda t: t == t,
    "where": lambda t: torch.where(t == t, t, t),
}

# Graphs made of these save no tensor for backward (checked: x * 2 does save
# its wrapped scalar, so it is not here).
NO_SAVE_OPS = {
    "add": lambda t: t + 1,
    "sub": lambda t: t - 3,
    "neg": torch.neg,
    "sum": lambda t: t.sum(),
    "index": lambda t: t[...],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "reshape": lambda t: t.reshape(-1),
    "expand": lambda t: t.expand(2, *t.shape),
    "clone": lambda t: t.clone(),
}

# Graphs whose node saves a tensor for backward.
SAVING_OPS = {
    "mul-self": lambda t: t * t,
    "exp": torch.exp,
    "sigmoid": torch.sigmoid,
    "pow": lambda t: t**2,
}


def _set_all(t: torch.Tensor) -> None:
    t[...] = 1


def _iadd(t: torch.Tensor) -> None:
    t += 1


INPLACE_OPS = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(3),
    "copy_": lambda t: t.copy_(torch.ones_like(t)),
    "setitem": _set_all,
    "iadd": _iadd,
}


def chains(ops: dict, max_size: int = 3):
    """Strategy for a non-empty list of op names from ``ops``."""
    return st.lists(st.sampled_from(sorted(ops)), min_size=1, max_size=max_size)


def run_chain(ops: dict, chain: list[str], t: torch.Tensor) -> torch.Tensor:
    """Apply the helper ops ``chain`` in order. They only build the tensor the
    claim is about: one without a kernel for the dtype on the installed torch
    (torch.where on uint16 before 2.13) makes the example not applicable."""
    for name in chain:
        with helper_op(name, t.dtype):
            t = ops[name](t)
    return t


def real_scalar(t: torch.Tensor) -> torch.Tensor:
    """A real scalar loss depending on every element of ``t``."""
    s = t.sum()
    return s.real if s.is_complex() else s


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Exact equality that treats NaN as equal to NaN (complex exp can overflow to NaN)."""
    return a.shape == b.shape and torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)


def nonleaf_of(spec, device) -> torch.Tensor:
    """The spec's view chain applied to a *non-leaf* base that requires grad,
    so in-place ops on the result are legal (no leaf rule involved)."""
    base = spec.build_base(device).requires_grad_(True)
    return spec.apply_views(base * 1)


@st.composite
def same_shape_pair(draw, dtypes=DIFFERENTIABLE):
    """Two specs of the same shape and dtype (independent layouts and values)."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes())
    return (
        draw(tensor_specs(dtype=dtype, shape=shape)),
        draw(tensor_specs(dtype=dtype, shape=shape)),
    )


@st.composite
def binary_cases(draw):
    """(op, spec_a, spec_b, a requires grad, b requires grad).

    Elementwise ops get broadcast-compatible shapes and mixed dtypes (the
    non-requiring side may be an integer tensor); matmul gets (n, k) @ (k, m)
    of one dtype, as in the seed's ``t1 @ t2``. ``a`` is always floating or
    complex so the result can require grad; bool is left out of ``b`` because
    ``float - bool`` is unsupported, and half/bfloat16 is never paired with a
    complex dtype because a 0-d operand can promote the pair to complex32,
    which the suite excludes (no kernels).
    """
    op = draw(st.sampled_from(["add", "sub", "mul", "div", "matmul"]))
    rg_a, rg_b = draw(st.booleans()), draw(st.booleans())
    dt_a = draw(st.sampled_from(DIFFERENTIABLE))
    if op == "matmul":
        n, k, m = (draw(st.integers(0, 3)) for _ in range(3))
        spec_a = draw(tensor_specs(dtype=dt_a, shape=(n, k)))
        spec_b = draw(tensor_specs(dtype=dt_a, shape=(k, m)))
    else:
        pool = DIFFERENTIABLE if rg_b else DIFFERENTIABLE + (torch.int8, torch.uint8, torch.int64)
        if dt_a in REDUCED:
            pool = tuple(d for d in pool if not d.is_complex)
        elif dt_a.is_complex:
            pool = tuple(d for d in pool if d not in REDUCED)
        dt_b = draw(st.sampled_from(pool))
        shape_a = draw(shapes())
        shape_b = draw(hnp.broadcastable_shapes(shape_a, min_dims=0, max_dims=4, max_side=4))
        spec_a = draw(tensor_specs(dtype=dt_a, shape=shape_a))
        spec_b = draw(tensor_specs(dtype=dt_b, shape=shape_b))
    return op, spec_a, spec_b, rg_a, rg_b


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "matmul": lambda a, b: a @ b,
}


# --------------------------------------------------------------------------- leaves


@pytest.mark.claim(
    "autograd.leaf-table", "autograd.leaf-until-operated", "autograd.only-leaves-get-grad"
)
@pytest.mark.observes("clone")
# Issue 29, leaf_kind (only-leaves-get-grad): a leaf requiring grad is a
# plain tensor or an nn.Parameter, each drawn by construction.
@value_examples(
    "leaf_kind", ("tensor", "parameter"), spec=_LEAF_SPEC, requires_grad=True, chain=["mul", "sum"]
)
# Issue 29: every layout and differentiable family of the user-created
# tensor, requiring grad or not.
@domain_examples(
    dtypes=DIFFERENTIABLE, requires_grad=True, chain=["mul", "sum"], leaf_kind="tensor"
)
@domain_examples(
    dtypes=DIFFERENTIABLE, requires_grad=False, chain=["mul", "sum"], leaf_kind="parameter"
)
@given(
    spec=tensor_specs(requires_grad=True),
    requires_grad=st.booleans(),
    chain=chains(DIFF_OPS),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_leaf_table(device, spec, requires_grad, chain, leaf_kind):
    """All four rows of the seed's table over generated leaves (plain
    tensors and ``nn.Parameter``s) and op chains.

    Kills: a user-created tensor with a grad_fn or not a leaf; an op result on
    a requires-grad tensor that is a leaf, lacks a grad_fn or drops
    requires_grad; a backward that skips the leaf (of either kind) or fills a
    non-leaf's .grad.
    """
    table, until, only = (
        "autograd.leaf-table", "autograd.leaf-until-operated", "autograd.only-leaves-get-grad"
    )  # fmt: skip

    def check(claims: tuple[str, ...], ok: bool, message: str) -> None:
        for c in claims:  # one row of the table can back several claims
            evidence.check(c, ok, message)

    x = _leaf_of_kind(spec, device, leaf_kind, requires_grad=requires_grad)
    if requires_grad:  # leaf_kind is the kind of a leaf that requires grad
        evidence.features(leaf_kind=leaf_kind)
    check((table,), x.grad_fn is None, "a user-created tensor has a grad_fn")
    check((table,), x.is_leaf, "a user-created tensor is not a leaf")
    check(
        (table,), x.requires_grad is requires_grad, "requires_grad of a user-created tensor changed"
    )
    if requires_grad:
        check((until,), x.is_leaf, "a tensor created with requires_grad=True is not a leaf")
    y = run_chain(DIFF_OPS, chain, x)
    check(
        (table, until) if requires_grad else (table,),
        y.requires_grad is requires_grad,
        "an op result's requires_grad differs from its input's",
    )
    if requires_grad:
        check(
            (table, until),
            y.grad_fn is not None,
            "an op result on a requires-grad tensor has no grad_fn",
        )
        check((table, until), not y.is_leaf, "an op result on a requires-grad tensor is a leaf")
        real_scalar(y).backward()
        check(
            (table, only),
            x.grad is not None,
            "backward did not populate a requires-grad leaf's .grad",
        )
        check(
            (table, only),
            x.grad is None or x.grad.shape == x.shape,
            "a leaf's .grad has a different shape",
        )
        with capture_warnings():
            check((table, only), y.grad is None, "backward populated a non-leaf's .grad")
    else:
        check(
            (table,), y.grad_fn is None, "an op result on a tensor not requiring grad has a grad_fn"
        )
        check((table,), y.is_leaf, "an op result on a tensor not requiring grad is not a leaf")
        check(
            (table, only),
            x.grad is None and y.grad is None,
            "a tensor not requiring grad has a .grad",
        )


@pytest.mark.claim("autograd.requires-grad-false-always-leaf")
@pytest.mark.observes("clone")
# Issue 29, dtype_family ("for every dtype"): every family (and every layout
# family) by construction; the spec reports dtype_family itself.
@domain_examples("spec", ALL_DTYPES, chain=["reshape"])
@given(spec=tensor_specs(dtype=ALL_DTYPES), chain=chains(ANY_DTYPE_OPS))
def test_requires_grad_false_always_leaf(device, spec, chain):
    """Kills: a result of ops on tensors not requiring grad (any dtype
    family) that is reported as a non-leaf or gets a grad_fn."""
    x = spec.build(device)
    assert x.is_leaf and x.grad_fn is None, "a tensor not requiring grad is not a leaf"
    y = run_chain(ANY_DTYPE_OPS, chain, x)
    assert y.requires_grad is False, "an op on tensors not requiring grad gave a requiring result"
    assert y.grad_fn is None, "a tensor with requires_grad=False has a grad_fn"
    assert y.is_leaf, "a tensor with requires_grad=False is not a leaf"


#: A 0-d operand, broadcast against any first operand (issue 29 examples).
_SCALAR_B = TensorSpec(dtype=torch.float32, base_shape=(), storage=(1.5,))
_INT_B = TensorSpec(dtype=torch.int64, base_shape=(), storage=(3,))


@pytest.mark.claim("autograd.requires-grad-contagious")
# Issue 29: every layout and differentiable family of the first operand, with
# a 0-d second operand: a requires grad, b does (a float32 one), or neither
# (an int64 one: mixed dtypes).
@domain_examples("case", dtypes=DIFFERENTIABLE, make=lambda s: ("mul", s, _SCALAR_B, True, False))
@domain_examples("case", dtypes=DIFFERENTIABLE, make=lambda s: ("add", s, _SCALAR_B, False, True))
@domain_examples("case", dtypes=DIFFERENTIABLE, make=lambda s: ("sub", s, _INT_B, False, False))
@given(case=binary_cases())
def test_requires_grad_contagious(device, case):
    """Kills: a binary op (broadcasting, type promotion, matmul) that drops
    requires_grad when only one input requires it, or records a graph when
    none does; a backward that gives an input a .grad of the broadcast shape."""
    op, spec_a, spec_b, rg_a, rg_b = case
    a = spec_a.build(device, requires_grad=rg_a, leaf=True)
    b = spec_b.build(device, requires_grad=rg_b, leaf=True)
    evidence.features(layout=layout_kinds(a), dtype_family=dtype_family(a.dtype))
    r = BINARY[op](a, b)
    expected = rg_a or rg_b
    assert r.requires_grad is expected, (
        f"{op}: result requires_grad={r.requires_grad} with inputs requiring ({rg_a}, {rg_b})"
    )
    assert (r.grad_fn is not None) is expected, f"{op}: grad_fn presence differs from requires_grad"
    assert r.is_leaf is not expected, f"{op}: is_leaf differs from 'no input requires grad'"
    if expected:
        real_scalar(r).backward()
        for t, rg in ((a, rg_a), (b, rg_b)):
            if rg:
                assert t.grad is not None and t.grad.shape == t.shape, (
                    f"{op}: an input's .grad is missing or not of the input's shape"
                )
            else:
                assert t.grad is None, f"{op}: an input not requiring grad got a .grad"


_HALF_SPEC = TensorSpec(dtype=torch.float16, base_shape=(2,), storage=(1.5, -0.25))
_DOUBLE_SPEC = TensorSpec(dtype=torch.float64, base_shape=(2,), storage=(1.5, -0.25))


@pytest.mark.claim("autograd.cast-copy-not-leaf")
@pytest.mark.observes("to")
# Issue 29: both kinds of leaf (leaf_kind) and both real floating families
# (dtype_family, reported by the spec), by construction.
@example(spec=_HALF_SPEC, other=torch.float32, move=False, leaf_kind="tensor")
@example(spec=_HALF_SPEC, other=torch.float64, move=False, leaf_kind="parameter")
@example(spec=_DOUBLE_SPEC, other=torch.float32, move=False, leaf_kind="tensor")
@example(spec=_DOUBLE_SPEC, other=torch.float16, move=False, leaf_kind="parameter")
@given(
    spec=tensor_specs(dtype=FLOATING, requires_grad=True),
    other=st.sampled_from(FLOATING),
    move=st.booleans(),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_cast_copy_not_leaf(device, spec, other, move, leaf_kind):
    """Real floating dtypes only: a complex-to-real cast warns and drops the
    imaginary part, which is a different claim. Moving between devices needs
    a CPU source, so on CPU only the dtype copy happens. The leaf is a plain
    tensor or an ``nn.Parameter``.

    Kills: a dtype/device copy that is reported as a leaf (the seed's GPU
    trap), that does not pass gradients back to the original leaf, or that
    itself receives a .grad.
    """
    src_device = "cpu" if (move and device != "cpu") else device
    evidence.features(leaf_kind=leaf_kind)
    x = _leaf_of_kind(spec, src_device, leaf_kind)
    if other == x.dtype and src_device == device:
        other = torch.float64 if x.dtype != torch.float64 else torch.float32
    c = x.to(device=device, dtype=other)
    assert c is not x, "to() with a new dtype/device returned its input"
    assert not c.is_leaf, "a dtype/device copy of a requires-grad leaf is a leaf"
    assert c.grad_fn is not None, "a dtype/device copy of a requires-grad leaf has no grad_fn"
    real_scalar(c * 2).backward()
    assert x.grad is not None and x.grad.shape == x.shape, "the original leaf got no .grad"
    with capture_warnings():
        assert c.grad is None, "the copy (a non-leaf) got a .grad"


# --------------------------------------------------------------------------- in-place on leaves


LEAF_INPLACE_ERROR = "leaf Variable that requires grad is being used in an in-place"


def _leaf_of_kind(spec, device, leaf_kind: str, requires_grad: bool = True) -> torch.Tensor:
    """A user-created leaf built from ``spec``: the plain tensor
    (``leaf_kind="tensor"``) or an ``nn.Parameter`` over it (``"parameter"``)."""
    x = spec.build(device, requires_grad=requires_grad, leaf=True)
    if leaf_kind == "parameter":
        x = torch.nn.Parameter(x, requires_grad=requires_grad)
    return x


@pytest.mark.claim("autograd.leaf-inplace-raises", "autograd.leaf-inplace-error-before-write")
@pytest.mark.observes("copy_")
# Every kind of leaf (issue 29: leaf_kind), itself and through a view.
@example(spec=_LEAF_SPEC, view_of_leaf=False, op="add_", leaf_kind="tensor")
@example(spec=_LEAF_SPEC, view_of_leaf=True, op="add_", leaf_kind="tensor")
@example(spec=_LEAF_SPEC, view_of_leaf=False, op="add_", leaf_kind="parameter")
@example(spec=_LEAF_SPEC, view_of_leaf=True, op="add_", leaf_kind="parameter")
@given(
    spec=tensor_specs(requires_grad=True, values="all"),
    view_of_leaf=st.booleans(),
    op=st.sampled_from(sorted(INPLACE_OPS)),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_leaf_inplace_raises(device, spec, view_of_leaf, op, leaf_kind):
    """The leaf's values are compared bit for bit with an independent build
    of the spec, over every value class (NaN, +-Inf, -0.0, subnormals). The
    leaf is a plain tensor or an ``nn.Parameter``; for the latter the view
    is ``p[...]``.

    Kills: an in-place op that silently overwrites a leaf requiring grad
    (or a view of one), or one that writes before raising (issue #2940)."""
    evidence.features(leaf_kind=leaf_kind)
    if leaf_kind == "parameter":
        p = _leaf_of_kind(spec, device, "parameter")
        x = p[...] if view_of_leaf else p
    else:
        x = spec.build(device, requires_grad=True, leaf=not view_of_leaf)
    version = x._version
    try:
        INPLACE_OPS[op](x)
        raised = None
    except RuntimeError as e:
        raised = e
    evidence.check(
        "autograd.leaf-inplace-raises",
        raised is not None and LEAF_INPLACE_ERROR in str(raised),
        f"in-place {op} on a leaf requiring grad did not raise {LEAF_INPLACE_ERROR!r} "
        f"(got {raised!r})",
    )
    if raised is not None:  # the second claim is about refused ops only
        why = bits_difference(x, spec.build(device))
        evidence.check(
            "autograd.leaf-inplace-error-before-write",
            why is None,
            f"a refused in-place op on a leaf changed its values: {why}",
        )
        evidence.check(
            "autograd.leaf-inplace-error-before-write",
            x._version == version,
            "a refused in-place op on a leaf bumped its version",
        )


# --------------------------------------------------------------------------- backward and .grad


@pytest.mark.claim("autograd.nonscalar-backward-needs-gradient")
# Issue 29: both real floating families (dtype_family) and the zero-element
# and 0-d tensors (layout) the sentence names, by construction; the spec
# reports both.
@example(spec=TensorSpec(dtype=torch.bfloat16, base_shape=(3,), storage=(1.0, -2.0, 0.5)))
@example(spec=TensorSpec(dtype=torch.float32, base_shape=(), storage=(1.5,)))
@example(spec=TensorSpec(dtype=torch.float64, base_shape=(0, 3), storage=()))
@example(spec=TensorSpec(dtype=torch.float16, base_shape=(), storage=(-0.5,)))
@example(spec=TensorSpec(dtype=torch.float32, base_shape=(2, 3), storage=(1.0,) * 6))
@given(spec=tensor_specs(dtype=FLOATING, requires_grad=True))
def test_nonscalar_backward_needs_gradient(device, spec):
    """Real dtypes only: complex outputs need a gradient even when they have
    one element ('only for real scalar outputs'), outside this sentence.

    Kills: a backward that invents a gradient for a multi-element output, or
    that refuses a one-element output of any shape; a backward(gradient=ones)
    that computes a wrong gradient.
    """
    x = spec.build(device, requires_grad=True, leaf=True)
    y = x * 2
    if y.numel() == 1:
        y.backward()
        assert torch.equal(x.grad, torch.full_like(x, 2)), "backward() on a one-element tensor"
    else:
        with raises_with(RuntimeError, "grad can be implicitly created only for scalar outputs"):
            y.backward()
        assert x.grad is None, "a refused backward() populated .grad"
    x.grad = None
    y = x * 2
    y.backward(torch.ones_like(y))
    assert torch.equal(x.grad, torch.full_like(x, 2)), "backward(gradient=ones) gave a wrong grad"


@pytest.mark.claim("autograd.nonleaf-grad-warns")
@pytest.mark.observes("clone")
@domain_examples(dtypes=DIFFERENTIABLE, chain=["mul"])  # issue 29: every layout and family
@given(spec=tensor_specs(requires_grad=True), chain=chains(DIFF_OPS))
def test_nonleaf_grad_warns(device, spec, chain):
    """Kills: a non-leaf .grad access that silently returns None (or a
    tensor), or a leaf .grad access that warns."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = run_chain(DIFF_OPS, chain, x)
    for when in ("before backward", "after backward"):
        with capture_warnings() as caught:
            g = y.grad
        hits = [
            w
            for w in caught
            if issubclass(w.category, UserWarning) and NONLEAF_GRAD_WARNING in str(w.message)
        ]
        assert g is None, f"a non-leaf's .grad is not None {when}"
        assert len(hits) == 1, f"reading a non-leaf's .grad {when} gave {len(hits)} warnings"
        if when == "before backward":
            real_scalar(y).backward()
    with capture_warnings() as caught:
        _ = x.grad
    assert not [w for w in caught if NONLEAF_GRAD_WARNING in str(w.message)], (
        "reading a leaf's .grad warned"
    )


@pytest.mark.claim("autograd.retain-grad-populates")
@domain_examples(dtypes=DIFFERENTIABLE, k=1, twice=False, form="result")  # issue 29
@given(
    spec=tensor_specs(requires_grad=True),
    k=st.integers(1, 4),
    twice=st.booleans(),
    form=st.sampled_from(["result", "view-of-leaf", "view-of-result"]),
)
def test_retain_grad_populates(device, spec, k, twice, form):
    """Kills: a retain_grad that does not fill the non-leaf's .grad (for an
    op result or a non-leaf view), fills it with a wrong value or shape, or
    leaves the non-leaf warning on access."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = {"result": lambda: x * 2, "view-of-leaf": lambda: x[...],
         "view-of-result": lambda: (x * 2)[...]}[form]()  # fmt: skip
    assert y.retain_grad() is None
    if twice:
        y.retain_grad()  # idempotent
    assert y.retains_grad, "retains_grad is False after retain_grad() on a non-leaf"
    real_scalar(y * k).backward()
    with capture_warnings() as caught:
        g = y.grad
    assert not [w for w in caught if NONLEAF_GRAD_WARNING in str(w.message)], (
        "reading .grad of a non-leaf that retains grad warned"
    )
    assert g is not None, "retain_grad() did not populate the non-leaf's .grad"
    assert torch.equal(g, torch.full_like(y, k)), "retained .grad has the wrong value or shape"


@pytest.mark.claim("autograd.retain-grad-noop-on-leaf")
@example(spec=_LEAF_SPEC, k=2, leaf_kind="tensor")
@example(spec=_LEAF_SPEC, k=2, leaf_kind="parameter")
@given(
    spec=tensor_specs(requires_grad=True),
    k=st.integers(1, 4),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_retain_grad_noop_on_leaf(device, spec, k, leaf_kind):
    """Kills: a retain_grad that changes a leaf (a plain tensor or an
    ``nn.Parameter``: marks it retaining, breaks its gradient accumulation)."""
    evidence.features(leaf_kind=leaf_kind)
    x = _leaf_of_kind(spec, device, leaf_kind)
    assert x.retain_grad() is None
    assert x.retains_grad is False, "retains_grad is True on a leaf"
    assert x.is_leaf and x.grad_fn is None, "retain_grad() changed a leaf"
    real_scalar(x * k).backward()
    assert torch.equal(x.grad, torch.full_like(x, k)), "a leaf's .grad is wrong after retain_grad()"


#: The tensor kinds that do not require grad (issue 29: tensor_kind of
#: autograd.retain-grad-requires-grad); ``parameter`` is an ``nn.Parameter``
#: with ``requires_grad=False``.
NO_GRAD_KINDS = ("plain", "parameter", "subclass", "inference")


def _not_requiring_grad(spec, device, kind: str) -> torch.Tensor:
    """``spec`` built as a tensor of ``kind`` (one of :data:`NO_GRAD_KINDS`)
    that does not require grad."""
    if kind == "parameter":
        return torch.nn.Parameter(spec.build(device), requires_grad=False)
    return build_kind(spec, device, kind)


@pytest.mark.claim("autograd.retain-grad-requires-grad")
@pytest.mark.observes("clone")
# Issue 29, tensor_kind: every kind of tensor that does not require grad.
@value_examples("kind", NO_GRAD_KINDS, spec=DOMAIN_SPEC, chain=[])
@given(
    spec=tensor_specs(dtype=ALL_DTYPES),
    chain=st.lists(st.sampled_from(sorted(ANY_DTYPE_OPS))),
    kind=st.sampled_from(NO_GRAD_KINDS),
)
def test_retain_grad_requires_grad(device, spec, chain, kind):
    """The tensor is a plain tensor, an ``nn.Parameter`` with
    ``requires_grad=False``, a ``__torch_function__`` subclass instance or an
    inference tensor, or the result of ops on one (reported as the kind of
    the tensor retain_grad is called on).

    Kills: a retain_grad that silently accepts a tensor with
    requires_grad=False (of some kind)."""
    t = run_chain(ANY_DTYPE_OPS, chain, _not_requiring_grad(spec, device, kind))
    evidence.features(tensor_kind=tensor_kind_of(t))
    with raises_with(RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"):
        t.retain_grad()


_CHAIN_PAIRS = (
    (torch.bfloat16, (1.5, -2.0), (3.0, 0.5)),
    (torch.float32, (1.5, -2.0), (3.0, 0.5)),
    (torch.complex64, (1.5 + 1j, -2.0), (3.0 - 2j, 0.5j)),
)


@pytest.mark.claim("autograd.chain-rule-values")
@pytest.mark.observes("detach")
# Issue 29, dtype_family: reduced floats, floats and complex (conj matters),
# by construction, with a != b; the first spec of the pair reports the family.
@example(pair=tuple(TensorSpec(_CHAIN_PAIRS[0][0], (2,), v) for v in _CHAIN_PAIRS[0][1:]))
@example(pair=tuple(TensorSpec(_CHAIN_PAIRS[1][0], (2,), v) for v in _CHAIN_PAIRS[1][1:]))
@example(pair=tuple(TensorSpec(_CHAIN_PAIRS[2][0], (2,), v) for v in _CHAIN_PAIRS[2][1:]))
@given(pair=same_shape_pair())
def test_chain_rule_values(device, pair):
    """Kills: a backward that computes wrong gradients through a two-step
    chain (mul of two leaves, then scaling), for every dtype and layout."""
    spec_a, spec_b = pair
    a = spec_a.build(device, requires_grad=True, leaf=True)
    b = spec_b.build(device, requires_grad=True, leaf=True)
    F = a * b
    G = F * 2
    G.backward(torch.ones_like(G))
    assert same_values(a.grad, (b.detach() * 2).conj().resolve_conj()), "a.grad != 2 * conj(b)"
    assert same_values(b.grad, (a.detach() * 2).conj().resolve_conj()), "b.grad != 2 * conj(a)"


_PARAM_SPEC = TensorSpec(dtype=torch.float32, base_shape=(2,), storage=(1.0, 2.0))


@pytest.mark.claim("autograd.grad-accumulates")
# An nn.Parameter is a leaf too (issue 29: the sentence speaks of every leaf).
@example(spec=_PARAM_SPEC, k=3, retained=False, leaf_kind="tensor")
@example(spec=_PARAM_SPEC, k=3, retained=False, leaf_kind="parameter")
@example(spec=_PARAM_SPEC, k=2, retained=True, leaf_kind="parameter")
@given(
    spec=tensor_specs(requires_grad=True),
    k=st.integers(1, 4),
    retained=st.booleans(),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_grad_accumulates(device, spec, k, retained, leaf_kind):
    """Kills: a .grad that starts non-None, is overwritten instead of
    accumulated (for any leaf: a plain tensor or an ``nn.Parameter``), or
    accumulates differently for retained graphs."""
    x = spec.build(device, requires_grad=True, leaf=True)
    if leaf_kind == "parameter":
        x = torch.nn.Parameter(x)
    evidence.features(leaf_kind=leaf_kind)
    assert x.grad is None, ".grad is not None before any backward"
    loss = real_scalar(x * k)
    loss.backward(retain_graph=retained)
    assert torch.equal(x.grad, torch.full_like(x, k)), ".grad after one backward is wrong"
    if not retained:
        loss = real_scalar(x * k)
    loss.backward()
    assert torch.equal(x.grad, torch.full_like(x, 2 * k)), "the second backward did not accumulate"


@pytest.mark.claim("autograd.backward-twice-raises")
@pytest.mark.observes("clone")
@domain_examples(dtypes=DIFFERENTIABLE, op="exp", retain=False)  # issue 29
@given(
    spec=tensor_specs(requires_grad=True),
    op=st.sampled_from(sorted(SAVING_OPS)),
    retain=st.booleans(),
)
def test_backward_twice_raises(device, spec, op, retain):
    """Kills: a backward that does not free saved tensors (silently reusing
    freed memory would be worse: it is caught by the error), or a
    retain_graph=True that still frees them."""
    x = spec.build(device, requires_grad=True, leaf=True)
    loss = real_scalar(SAVING_OPS[op](x))
    loss.backward(retain_graph=retain)
    first = x.grad.clone()
    if retain:
        loss.backward()
        assert same_values(x.grad, first * 2), "a retained graph's second backward did not add"
    else:
        with raises_with(RuntimeError, "Trying to backward through the graph a second time"):
            loss.backward()


@pytest.mark.claim("autograd.backward-twice-without-saved-tensors")
@pytest.mark.observes("clone")
@domain_examples(dtypes=DIFFERENTIABLE, chain=["neg", "add"])  # issue 29
@given(spec=tensor_specs(requires_grad=True), chain=chains(NO_SAVE_OPS))
def test_backward_twice_without_saved_tensors(device, spec, chain):
    """Kills: a second backward through a graph with nothing saved that
    raises, or that does not accumulate."""
    x = spec.build(device, requires_grad=True, leaf=True)
    loss = real_scalar(run_chain(NO_SAVE_OPS, chain, x))
    loss.backward()
    first = x.grad.clone()
    loss.backward()
    assert same_values(x.grad, first * 2), "the second backward did not accumulate"


# --------------------------------------------------------------------------- requires_grad_


@pytest.mark.claim("autograd.requires-grad-method")
@example(spec=_LEAF_SPEC, initial=True, flag=False, form="method", leaf_kind="tensor")
@example(spec=_LEAF_SPEC, initial=True, flag=False, form="method", leaf_kind="parameter")
@given(
    spec=tensor_specs(requires_grad=True),
    initial=st.booleans(),
    flag=st.sampled_from([True, False, None]),
    form=st.sampled_from(["method", "attribute"]),
    leaf_kind=st.sampled_from(["tensor", "parameter"]),
)
def test_requires_grad_method(device, spec, initial, flag, form, leaf_kind):
    """``flag=None`` calls ``requires_grad_()`` with its default; the leaf is
    a plain tensor or an ``nn.Parameter``.

    Kills: a requires_grad_ that returns a copy, ignores its argument or
    default, or turns the leaf into a non-leaf; an attribute setter that
    behaves differently.
    """
    evidence.features(leaf_kind=leaf_kind)
    x = _leaf_of_kind(spec, device, leaf_kind, requires_grad=initial)
    want = True if flag is None else flag
    if form == "method":
        r = x.requires_grad_() if flag is None else x.requires_grad_(flag)
        assert r is x, "requires_grad_() did not return the tensor itself"
    else:
        x.requires_grad = want
    assert x.requires_grad is want, f"requires_grad is {x.requires_grad} after setting {want}"
    assert x.is_leaf and x.grad_fn is None, "setting requires_grad made the tensor a non-leaf"


@pytest.mark.claim("autograd.requires-grad-nonleaf")
@pytest.mark.observes("clone")
@domain_examples(dtypes=DIFFERENTIABLE, chain=["mul"], form="method")  # issue 29
@given(
    spec=tensor_specs(requires_grad=True),
    chain=chains(DIFF_OPS),
    form=st.sampled_from(["method", "attribute"]),
)
def test_requires_grad_nonleaf(device, spec, chain, form):
    """Kills: a requires_grad_(False) that silently detaches a non-leaf, or a
    requires_grad_(True) that raises or changes the non-leaf."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = run_chain(DIFF_OPS, chain, x)
    node = type(y.grad_fn)
    assert y.requires_grad_(True) is y, "requires_grad_(True) on a non-leaf did not return it"
    assert y.requires_grad and not y.is_leaf, "requires_grad_(True) changed a non-leaf"
    assert type(y.grad_fn) is node, "requires_grad_(True) replaced a non-leaf's grad_fn"
    with raises_with(RuntimeError, "you can only change requires_grad flags of leaf variables"):
        if form == "method":
            y.requires_grad_(False)
        else:
            y.requires_grad = False
    assert y.requires_grad, "a refused requires_grad_(False) changed the flag"


@pytest.mark.claim("autograd.requires-grad-integer-raises")
@pytest.mark.observes("tensor")
# Issue 29, dtype_family: bool, signed and unsigned integers, by construction.
@example(spec=TensorSpec(dtype=torch.bool, base_shape=(2,), storage=(True, False)), form="method")
@example(spec=TensorSpec(dtype=torch.int32, base_shape=(2,), storage=(-3, 7)), form="method")
@example(spec=TensorSpec(dtype=torch.uint8, base_shape=(2,), storage=(0, 255)), form="method")
@given(
    spec=tensor_specs(dtype=INTEGRAL + BOOL),
    form=st.sampled_from(["method", "attribute", "factory", "tensor"]),
)
def test_requires_grad_integer_raises(device, spec, form):
    """Kills: an integer/bool tensor that accepts requires_grad=True (it
    could never receive a gradient), through any of the four entry points."""
    x = spec.build(device)
    x.requires_grad_(False)  # accepted
    with raises_with(RuntimeError, "Tensors of floating point"):
        if form == "method":
            x.requires_grad_()
        elif form == "attribute":
            x.requires_grad = True
        elif form == "factory":
            torch.zeros(x.shape, dtype=x.dtype, device=device, requires_grad=True)
        else:
            torch.tensor(x.tolist(), dtype=x.dtype, device=device, requires_grad=True)
    assert x.requires_grad is False, "a refused requires_grad changed the flag"


@pytest.mark.claim("autograd.requires-grad-on-copy-starts-graph")
@pytest.mark.observes("clone")
@domain_examples(dtypes=DIFFERENTIABLE, k=1)  # issue 29
@given(spec=tensor_specs(requires_grad=True), k=st.integers(1, 4))
def test_requires_grad_on_copy_starts_graph(device, spec, k):
    """Kills: a clone().requires_grad_() that is not a leaf, does not receive
    its gradient, or leaks a gradient to the original."""
    x = spec.build(device)
    c = x.clone().requires_grad_()
    assert c.is_leaf and c.grad_fn is None, "clone().requires_grad_() is not a leaf"
    real_scalar(c * k).backward()
    assert torch.equal(c.grad, torch.full_like(c, k)), "the copy's .grad is wrong"
    assert x.grad is None and not x.requires_grad, "the original received a gradient"


@pytest.mark.claim("autograd.grad-setter-validates")
@domain_examples(dtypes=DIFFERENTIABLE, case="same", other=torch.float32)  # issue 29
@given(
    spec=tensor_specs(requires_grad=True),
    case=st.sampled_from(["same", "none", "shape", "same-numel", "dtype", "non-tensor"]),
    other=st.sampled_from(DIFFERENTIABLE),
)
def test_grad_setter_validates(device, spec, case, other):
    """Kills: a .grad setter that stores a gradient of the wrong shape (also
    one with the same number of elements, silently reshaped) or dtype
    (optimizers would then fail far away), or copies a valid one."""
    x = spec.build(device, requires_grad=True, leaf=True)
    if case == "same":
        g = torch.ones_like(x)
        x.grad = g
        assert x.grad is g, "a valid .grad assignment was not stored as is"
    elif case == "none":
        x.grad = torch.ones_like(x)
        x.grad = None
        assert x.grad is None, "assigning None did not clear .grad"
    elif case == "shape":
        with raises_with(RuntimeError, "attempting to assign a gradient"):
            x.grad = torch.ones((*x.shape, 2), dtype=x.dtype, device=device)
        assert x.grad is None, "a refused .grad assignment was stored"
    elif case == "same-numel":
        wrong = (x.numel(),) if x.dim() != 1 else (1, x.numel())
        with raises_with(RuntimeError, "attempting to assign a gradient"):
            x.grad = torch.ones(wrong, dtype=x.dtype, device=device)
        assert x.grad is None, "a refused .grad assignment was stored"
    elif case == "dtype":
        if other == x.dtype:
            other = torch.float64 if x.dtype != torch.float64 else torch.float32
        with raises_with(RuntimeError, "attempting to assign a gradient"):
            x.grad = torch.ones(x.shape, dtype=other, device=device)
        assert x.grad is None, "a refused .grad assignment was stored"
    else:
        with raises_with(TypeError, "expected to be a Tensor or None"):
            x.grad = 0
        assert x.grad is None, "a refused .grad assignment was stored"


# --------------------------------------------------------------------------- in-place on views


def _not_expanded(spec) -> bool:
    return not any(op[0] == "expand" for op in spec.views)


@pytest.mark.claim("autograd.inplace-on-view-rebases-base")
# Issue 29, layout: every non-overlapping layout family of the view (a spec
# without views is viewed as b[...]), by construction; the spec reports it.
@domain_examples("spec", DIFFERENTIABLE, where=_not_expanded)
@given(spec=tensor_specs(requires_grad=True, views=NON_OVERLAPPING_VIEWS))
def test_inplace_on_view_rebases_base(device, spec):
    """Expanded views are excluded: an in-place write into an overlapping view
    is refused for a different reason (internal overlap).

    Kills: an in-place op on a view whose base keeps its old grad_fn (the
    write would be invisible to backward), or a CopySlices node that gives
    wrong gradients for offset/stepped/permuted/selected views.
    """
    base = spec.build_base(device).requires_grad_(True)
    b = base * 1
    v = spec.apply_views(b) if spec.views else b[...]
    v.mul_(2)
    assert type(b.grad_fn).__name__ == "CopySlices", (
        f"in-place on a view left the base's grad_fn as {type(b.grad_fn).__name__}"
    )
    real_scalar(b).backward()
    covered = torch.zeros(spec.base_shape, dtype=base.dtype, device=device)
    (spec.apply_views(covered) if spec.views else covered[...]).fill_(1)
    assert torch.equal(base.grad, 1 + covered), "wrong gradient after in-place on a view"


@pytest.mark.claim("autograd.inplace-shared-storage-raises")
@domain_examples(dtypes=DIFFERENTIABLE, where=_not_expanded)  # issue 29
@given(spec=tensor_specs(requires_grad=True, views=NON_OVERLAPPING_VIEWS))
def test_inplace_shared_storage_raises(device, spec):
    """The autograd note's sentence as written. Stale: recorded in expectations.

    Kills (if it held): an in-place op allowed while another Tensor references
    the modified storage.
    """
    base = spec.build_base(device).requires_grad_(True)
    b = base * 1
    v = spec.apply_views(b) if spec.views else b[...]
    assert v.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    with pytest.raises(RuntimeError):
        v.mul_(2)


@pytest.mark.claim("autograd.multi-output-view-inplace-raises")
@pytest.mark.observes("copy_")
# Issue 29: every layout with a dimension of non-empty sides, every differentiable family.
@domain_examples(
    dtypes=DIFFERENTIABLE,
    where=lambda s: len(s.shape) >= 1 and min(s.shape) >= 1,
    fn="unbind",
    dim=0,
    op="fill_",
)
@given(
    spec=tensor_specs(requires_grad=True, shape=shapes(min_dims=1, min_side=1)),
    fn=st.sampled_from(["unbind", "split", "chunk"]),
    dim=st.integers(0, 3),
    op=st.sampled_from(["add_", "mul_", "zero_", "fill_"]),
)
def test_multi_output_view_inplace_raises(device, spec, fn, dim, op):
    """Only non-leaf bases: on a leaf the leaf rule may fire first.

    Kills: an in-place op on one output of unbind/split/chunk that is
    allowed (autograd cannot rebase several views of one node).
    """
    b = nonleaf_of(spec, device)
    dim = dim % b.dim()
    outs = {
        "unbind": lambda: b.unbind(dim),
        "split": lambda: b.split(1, dim),
        "chunk": lambda: b.chunk(2, dim),
    }[fn]()
    with raises_with(RuntimeError, "is a view and is being modified inplace"):
        INPLACE_OPS[op](outs[0])


@pytest.mark.claim("autograd.backward-without-graph-raises")
@pytest.mark.observes("clone")
# Issue 29, grad_mode: tensors computed with grad enabled and under no_grad.
@value_examples("source", ("plain", "ops", "no_grad"), spec=_LEAF_SPEC, chain=["sum"])
@given(
    spec=tensor_specs(requires_grad=True),
    source=st.sampled_from(["plain", "ops", "no_grad"]),
    chain=chains(DIFF_OPS),
)
def test_backward_without_graph_raises(device, spec, source, chain):
    """Views are left out of the no_grad source: a view made under no_grad
    of a tensor that requires grad still reports requires_grad (gradmode area).

    Kills: a backward() on a graph-less tensor (computed with grad enabled
    or under no_grad) that silently does nothing.
    """
    evidence.features(grad_mode="no_grad" if source == "no_grad" else "enabled")
    if source == "no_grad":
        x = spec.build(device, requires_grad=True, leaf=True)
        with torch.no_grad():
            t = real_scalar(x * 2)
    else:
        t = spec.build(device)
        if source == "ops":
            t = run_chain(DIFF_OPS, chain, t)
        t = real_scalar(t)
    with raises_with(RuntimeError, "does not require grad and does not have a grad_fn"):
        t.backward()
