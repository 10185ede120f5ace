"""Properties of tensor construction (claims in ``claims/construct.toml``):
``torch.tensor``, ``Tensor.new_tensor``, ``torch.as_tensor``, ``torch.asarray``
and ``torch.Tensor()``.

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import textwrap

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    capture_warnings,
    grad_mode_restored,
    raises_with,
    run_fresh_interpreter,
    shares_storage,
    writes_visible,
)
from strategies import ALL_DTYPES, DIFFERENTIABLE, FLOATING, grid_examples, shapes, tensor_specs
from strategies.domains import (
    DOMAIN_SPEC,
    TENSOR_KINDS,
    build_kind,
    domain_examples,
    tensor_kind_of,
    value_examples,
)

COPY_WARNING = "To copy construct from a tensor, it is recommended to use"
ASARRAY_WARNING = "unspecified requires_grad now defaults to obj.requires_grad"


def _build(spec, device, requires_grad, leaf):
    """Build ``spec``; ``requires_grad`` only applies to differentiable dtypes."""
    rg = requires_grad and spec.dtype in DIFFERENTIABLE
    return spec.build(device, requires_grad=rg, leaf=leaf)


def _root_leaf(t: torch.Tensor) -> torch.Tensor:
    """The leaf a tensor built by ``TensorSpec.build`` derives from."""
    return t if t.is_leaf else t._base


def _real_sum(t: torch.Tensor) -> torch.Tensor:
    s = t.sum()
    return s.real if s.is_complex() else s


def _assert_unshared_copy(c: torch.Tensor, t: torch.Tensor, what: str) -> None:
    assert not shares_storage(c, t), f"{what} shares storage with its input"
    if t.numel() and c.numel():
        assert not writes_visible(c, t), f"{what}: a write to the copy is visible in the input"


# ---------------------------------------------------------------- torch.tensor


@pytest.mark.claim("construct.tensor-is-detach-clone")
@pytest.mark.observes("clone", "detach")
@grid_examples(grid_values="all", kind="plain")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC)  # issue 29: every tensor kind
@given(spec=tensor_specs(values="all"), kind=st.sampled_from(TENSOR_KINDS))
def test_tensor_of_tensor_is_detach_clone(device, spec, kind):
    """Values are compared bit for bit (every value class drawn) with an
    independent build of t's spec; strides with ``t.detach().clone()``.

    Kills: torch.tensor(t) that aliases t, keeps its graph (grad_fn, requires_grad),
    converts its dtype/device, or changes values (-0.0, NaN, subnormals ...)
    or layout relative to detach().clone(), for some layout, dtype family or
    tensor kind (leaves, non-leaves, Parameters, subclasses, inference tensors)."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    ref = t.detach().clone()
    with capture_warnings():
        c = torch.tensor(t)
    assert c.dtype == ref.dtype and c.device == ref.device, "torch.tensor(t) changed dtype/device"
    assert_same_bits(c, spec.build(device), "torch.tensor(t) changed the values")
    assert c.stride() == ref.stride(), "torch.tensor(t) has other strides than detach().clone()"
    assert c.requires_grad is False, "torch.tensor(t) requires grad"
    assert c.grad_fn is None and c.is_leaf, "torch.tensor(t) has autograd history"
    _assert_unshared_copy(c, t, "torch.tensor(t)")


@pytest.mark.claim("construct.tensor-requires-grad-is-detach-clone-requires-grad")
@pytest.mark.observes("backward")
@grid_examples(dtypes=DIFFERENTIABLE, grid_values="all", requires_grad=False, leaf=False)
@given(
    spec=tensor_specs(requires_grad=True, values="all"),
    requires_grad=st.booleans(),
    leaf=st.booleans(),
)
def test_tensor_requires_grad_true_is_fresh_leaf(device, spec, requires_grad, leaf):
    """Kills: torch.tensor(t, requires_grad=True) that keeps t's graph (gradient reaching t),
    returns a non-leaf, or aliases t."""
    t = _build(spec, device, requires_grad, leaf)
    with capture_warnings():
        c = torch.tensor(t, requires_grad=True)
    assert_same_bits(c, spec.build(device), "torch.tensor(t, requires_grad=True) changed values")
    assert c.requires_grad and c.is_leaf and c.grad_fn is None, (
        "torch.tensor(t, requires_grad=True) is not a fresh leaf requiring grad"
    )
    _assert_unshared_copy(c, t, "torch.tensor(t, requires_grad=True)")
    _real_sum(c).backward()
    assert c.grad is not None, "gradient did not reach torch.tensor(t, requires_grad=True)"
    if requires_grad:
        assert _root_leaf(t).grad is None, "gradient flowed from torch.tensor(t) back into t"


@pytest.mark.claim("construct.copy-construct-warns")
@domain_examples(requires_grad=False, via="torch.tensor")  # issue 29: every layout and family
@given(
    spec=tensor_specs(),
    requires_grad=st.booleans(),
    via=st.sampled_from(["torch.tensor", "new_tensor"]),
)
def test_copy_construct_warns_on_every_call(device, spec, requires_grad, via):
    """Kills: a copy-construct path that stopped warning, or warns only once per process."""
    t = _build(spec, device, requires_grad, leaf=True)
    with capture_warnings() as caught:
        for _ in range(2):
            if via == "torch.tensor":
                torch.tensor(t)
            else:
                t.new_tensor(t)
    hits = [
        w for w in caught if issubclass(w.category, UserWarning) and COPY_WARNING in str(w.message)
    ]
    assert len(hits) == 2, f"{via}(tensor) emitted {len(hits)} copy-construct warnings for 2 calls"


@pytest.mark.claim("construct.tensor-requires-data")
@pytest.mark.parametrize("form", ["no arguments", "device=", "dtype= and requires_grad="])
def test_tensor_without_data_raises_type_error(device, form):
    """Every calling form without data: bare, and with keyword arguments only.

    Kills: torch.tensor() that returns an empty tensor like torch.Tensor(),
    bare or when given only keyword arguments."""
    call = {
        "no arguments": lambda: torch.tensor(),
        "device=": lambda: torch.tensor(device=device),
        "dtype= and requires_grad=": lambda: torch.tensor(
            dtype=torch.float64, device=device, requires_grad=True
        ),
    }[form]
    with raises_with(TypeError, "missing 1 required positional argument"):
        call()


@pytest.mark.claim("construct.tensor-class-call-is-empty")
@given(default=st.sampled_from(FLOATING))
def test_tensor_class_call_is_empty_default_float(device, default):
    """Kills: torch.Tensor() that raises like torch.tensor(), or ignores the default dtype."""
    with grad_mode_restored():
        torch.set_default_dtype(default)
        e = torch.Tensor()
    assert e.shape == (0,), f"torch.Tensor() has shape {tuple(e.shape)}"
    assert e.dtype == default, f"torch.Tensor() is {e.dtype}, default dtype is {default}"
    assert not e.requires_grad and e.is_leaf, "torch.Tensor() has autograd state"


# ------------------------------------------------------------- Tensor.new_tensor


@pytest.mark.claim("construct.new-tensor-is-detach-clone")
# Grid examples have no data to draw self from: they use a 0-d self of x's dtype.
@grid_examples(grid_values="all", data=None, requires_grad=False, leaf=False, ask_grad=False)
@given(
    spec=tensor_specs(values="all"),
    data=st.data(),
    requires_grad=st.booleans(),
    leaf=st.booleans(),
    ask_grad=st.booleans(),
)
def test_new_tensor_is_detach_clone(device, spec, data, requires_grad, leaf, ask_grad):
    """Kills: new_tensor(x) that aliases x (no copy), keeps x's graph, or ignores
    requires_grad=True."""
    x = _build(spec, device, requires_grad, leaf)
    # The equivalence is stated for self of x's dtype: self's dtype is new_tensor's default.
    if data is None:
        self_t = torch.zeros((), dtype=spec.dtype, device=device)
    else:
        self_t = data.draw(tensor_specs(dtype=spec.dtype), label="self_spec").build(device)
    ask_grad = ask_grad and spec.dtype in DIFFERENTIABLE
    with capture_warnings():
        c = self_t.new_tensor(x, requires_grad=ask_grad)
    assert c.dtype == x.dtype and c.device == x.device, "new_tensor(x) changed dtype/device"
    assert_same_bits(c, spec.build(device), "new_tensor(x) changed the values")
    assert c.requires_grad is ask_grad, f"new_tensor(x, requires_grad={ask_grad}) disagrees"
    assert c.grad_fn is None and c.is_leaf, "new_tensor(x) has autograd history"
    _assert_unshared_copy(c, x, "new_tensor(x)")
    assert not shares_storage(c, self_t), "new_tensor(x) shares storage with self"


@st.composite
def _small_int_lists(draw):
    # Python lists of values 0..100: representable in every dtype (list data that
    # overflows self's dtype raises instead of converting, which is another matter).
    arr = draw(hnp.arrays("int64", shapes(max_dims=3), elements=st.integers(0, 100)))
    return arr.tolist()


def _plain_2x3(spec) -> bool:
    """The grid's plain contiguous layout: with ``grid_examples``, one example per dtype."""
    return spec.base_shape == (2, 3) and not spec.views


@pytest.mark.claim("construct.new-tensor-default-dtype-device")
@pytest.mark.observes("to")
# Issue 29: self of every dtype (so every family), by construction, with
# tensor data and with list data.
@grid_examples(
    "self_spec", where=_plain_2x3, data_spec=DOMAIN_SPEC, as_list=False, lst=[1], explicit=None
)
@grid_examples(
    "self_spec", where=_plain_2x3, data_spec=DOMAIN_SPEC, as_list=True, lst=[1, 0], explicit=None
)
@given(
    self_spec=tensor_specs(views=False),
    data_spec=tensor_specs(),
    as_list=st.booleans(),
    lst=_small_int_lists(),
    explicit=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)),
)
def test_new_tensor_takes_self_dtype_and_device(
    device, self_spec, data_spec, as_list, lst, explicit
):
    """Kills: new_tensor that infers the dtype from data (like torch.tensor) instead of
    taking self's, or ignores an explicit dtype."""
    self_t = self_spec.build(device)
    data = lst if as_list else data_spec.build(device)
    kwargs = {} if explicit is None else {"dtype": explicit}
    with capture_warnings():
        c = self_t.new_tensor(data, **kwargs)
        ref = (torch.tensor(data, device=device) if as_list else data).to(c.dtype)
    want = self_t.dtype if explicit is None else explicit
    assert c.dtype == want, f"new_tensor gave {c.dtype}, expected {want}"
    assert c.device == self_t.device, "new_tensor is not on self's device"
    src_dtype = torch.int64 if as_list else data_spec.dtype
    if torch.can_cast(src_dtype, want):  # value-preserving direction only
        # Bounded values: a conversion is not bit-preserving for NaN payloads.
        assert_same_bits(c, ref, "new_tensor values differ from data.to(dtype)")


# --------------------------------------------------------------- torch.as_tensor


@pytest.mark.claim("construct.as-tensor-identity")
@grid_examples(kind="plain", explicit=True)
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC, explicit=False)  # issue 29
@given(spec=tensor_specs(), kind=st.sampled_from(TENSOR_KINDS), explicit=st.booleans())
def test_as_tensor_returns_input_itself(device, spec, kind, explicit):
    """Kills: as_tensor that copies or aliases (a new object) when nothing needs converting,
    or drops the autograd state, for some layout, dtype family or tensor kind."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    rg, fn = t.requires_grad, t.grad_fn
    kwargs = {"dtype": t.dtype, "device": t.device} if explicit else {}
    r = torch.as_tensor(t, **kwargs)
    assert r is t, "as_tensor(t) did not return t itself"
    assert t.requires_grad == rg and t.grad_fn is fn, "as_tensor(t) changed t's autograd state"


@pytest.mark.claim("construct.as-tensor-converts-with-history")
@pytest.mark.observes("backward", "detach", "to")
@grid_examples(grid_values="all", target=torch.float64, requires_grad=False)
@given(
    spec=tensor_specs(values="all"),
    target=st.sampled_from(ALL_DTYPES),
    requires_grad=st.booleans(),
)
def test_as_tensor_other_dtype_copies_with_history(device, spec, target, requires_grad):
    """The claim is equality with ``t.to(d)`` (the same conversion): compared
    bit for bit, over every value class.

    Kills: as_tensor(t, dtype=d) that aliases t, differs from t.to(d), or cuts the graph
    (no grad_fn, no gradient for t)."""
    if target == spec.dtype:
        target = torch.float64 if spec.dtype != torch.float64 else torch.float32
    t = _build(spec, device, requires_grad, leaf=True)
    with capture_warnings():  # complex -> real casts warn
        r = torch.as_tensor(t, dtype=target)
        ref = t.detach().to(target)
    assert r is not t and r.dtype == target, "as_tensor(t, dtype=d) did not convert"
    assert_same_bits(r, ref, "as_tensor(t, dtype=d) differs from t.to(d)")
    assert not shares_storage(r, t), "as_tensor(t, dtype=d) shares storage with t"
    if t.requires_grad and target in DIFFERENTIABLE:
        assert r.grad_fn is not None and not r.is_leaf, "as_tensor(t, dtype=d) dropped history"
        _real_sum(r).backward()
        assert t.grad is not None, "gradient did not flow back through as_tensor(t, dtype=d)"
        assert torch.equal(t.grad, torch.ones_like(t)), "wrong gradient through as_tensor"


# ----------------------------------------------------------------- torch.asarray


@pytest.mark.claim("construct.asarray-shares-by-default")
@grid_examples(kind="plain")
@value_examples("kind", TENSOR_KINDS, spec=DOMAIN_SPEC)  # issue 29: every tensor kind
@given(spec=tensor_specs(), kind=st.sampled_from(TENSOR_KINDS))
def test_asarray_shares_memory_by_default(device, spec, kind):
    """Kills: asarray(t) that copies, or changes dtype/device, for some
    layout, dtype family or tensor kind."""
    t = build_kind(spec, device, kind)
    evidence.features(tensor_kind=tensor_kind_of(t))
    with capture_warnings():  # the once-per-process requires_grad notice
        b = torch.asarray(t)
    assert b.dtype == t.dtype and b.device == t.device, "asarray(t) changed dtype/device"
    assert shares_storage(b, t), "asarray(t) does not share memory with t"
    assert b.data_ptr() == t.data_ptr(), "asarray(t) starts at a different address"


@pytest.mark.claim("construct.asarray-returns-same-object")
@grid_examples(requires_grad=False, leaf=False, copy=None, explicit=False)
@given(
    spec=tensor_specs(),
    requires_grad=st.booleans(),
    leaf=st.booleans(),
    copy=st.sampled_from([None, False]),
    explicit=st.booleans(),
)
def test_asarray_returns_the_input_object(device, spec, requires_grad, leaf, copy, explicit):
    """Kills: asarray returning a fresh alias instead of the input object (a behaviour
    change callers relying on identity would notice)."""
    t = _build(spec, device, requires_grad, leaf)
    # Before torch 2.12 asarray's requires_grad defaulted to False: a non-leaf
    # requiring grad came back as a new detached alias (recorded deviation).
    evidence.features(nonleaf_requires_grad=t.requires_grad and not t.is_leaf)
    kwargs = {"dtype": t.dtype, "device": t.device} if explicit else {}
    with capture_warnings():
        b = torch.asarray(t, copy=copy, **kwargs)
    assert b is t, "asarray(t) did not return t itself"


@pytest.mark.claim("construct.asarray-copy-true-never-shares")
@pytest.mark.observes("detach", "to")
@grid_examples(grid_values="all", target=None, requires_grad=False)
@given(
    spec=tensor_specs(values="all"),
    target=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)),
    requires_grad=st.booleans(),
)
def test_asarray_copy_true_never_shares(device, spec, target, requires_grad):
    """Without a dtype change the copy must keep t's values bit for bit (an
    independent build of t's spec); with one, equal ``t.to(d)`` bit for bit
    (the same conversion). Every value class is drawn.

    Kills: copy=True ignored when no conversion is needed (the asarray fast path)."""
    t = _build(spec, device, requires_grad, leaf=True)
    with capture_warnings():
        b = torch.asarray(t, dtype=target, copy=True, requires_grad=False)
        ref = spec.build(device) if target in (None, t.dtype) else t.detach().to(target)
    assert b is not t, "asarray(t, copy=True) returned t"
    assert not shares_storage(b, t), "asarray(t, copy=True) shares memory with t"
    assert_same_bits(b, ref, "asarray(t, copy=True) changed the values")
    if t.numel() and b.dtype == t.dtype:
        assert not writes_visible(b, t), "asarray(t, copy=True): write to the copy seen in t"


@pytest.mark.claim("construct.asarray-copy-false-aliases-or-raises")
@grid_examples(target=torch.float64, case="alias")
@given(
    spec=tensor_specs(),
    target=st.sampled_from(ALL_DTYPES),
    case=st.sampled_from(["alias", "dtype", "sequence"]),
)
def test_asarray_copy_false_aliases_or_raises(device, spec, target, case):
    """Kills: copy=False that silently copies (dtype change, Python data) instead of
    raising, or refuses an aliasable tensor."""
    t = spec.build(device)
    if case == "alias":
        b = torch.asarray(t, copy=False)
        assert shares_storage(b, t), "asarray(t, copy=False) does not share memory"
    elif case == "dtype":
        if target == t.dtype:
            target = torch.float64 if t.dtype != torch.float64 else torch.int8
        with raises_with(ValueError, "can't alias"):
            torch.asarray(t, dtype=target, copy=False)
    else:
        with raises_with(ValueError, "can't alias"):
            torch.asarray(t.tolist(), copy=False, device=device)


@pytest.mark.claim("construct.asarray-requires-grad-default-inherits")
# Issue 29: every layout and dtype family (plain), and each tensor kind.
@domain_examples(requires_grad=False, leaf=True)
@example(spec=DOMAIN_SPEC, requires_grad=True, leaf=True)
@example(spec=DOMAIN_SPEC, requires_grad=True, leaf=False)
@given(spec=tensor_specs(), requires_grad=st.booleans(), leaf=st.booleans())
def test_asarray_default_requires_grad_inherits(device, spec, requires_grad, leaf):
    """Kills: the pre-#170897 default (requires_grad=False), which also cleared the
    caller's flag on a leaf; or a default that drops a non-leaf's history."""
    t = _build(spec, device, requires_grad, leaf)
    rg, fn = t.requires_grad, t.grad_fn
    evidence.features(input_requires_grad=rg, tensor_kind=tensor_kind_of(t))
    with capture_warnings():
        b = torch.asarray(t)
    assert b.requires_grad == rg, "asarray() result does not inherit requires_grad"
    assert b.grad_fn is fn, "asarray() result does not keep the input's grad_fn"
    assert t.requires_grad == rg, "asarray() changed the input's requires_grad"


_WARN_ONCE_CODE = textwrap.dedent(
    """
    import json, warnings, torch
    dev = {device!r}
    counts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        def count():
            return sum({needle!r} in str(w.message) for w in caught)
        torch.asarray(torch.zeros(3, device=dev))
        torch.asarray(torch.zeros(3, device=dev, requires_grad=True), requires_grad=True)
        torch.asarray(torch.zeros(3, device=dev, requires_grad=True), requires_grad=False)
        counts.append(count())
        torch.asarray(torch.zeros(3, device=dev, requires_grad=True))
        counts.append(count())
        torch.asarray(torch.zeros(3, device=dev, requires_grad=True) * 2)
        torch.asarray(torch.ones(2, device=dev, requires_grad=True))
        counts.append(count())
        cats = sorted({{w.category.__name__ for w in caught if {needle!r} in str(w.message)}})
    print(json.dumps({{"counts": counts, "categories": cats}}))
    """
)


@pytest.mark.claim("construct.asarray-requires-grad-default-warns-once")
def test_asarray_default_requires_grad_warns_once_per_process(device):
    """Kills: a notice that never fires, fires for explicit requires_grad / inputs not
    requiring grad, or fires on every call. Runs in a fresh interpreter because the
    warning is once per process."""
    code = _WARN_ONCE_CODE.format(device=device, needle=ASARRAY_WARNING)
    out = run_fresh_interpreter(code)
    counts = out["counts"]
    assert counts[0] == 0, "asarray warned for explicit requires_grad or a non-grad input"
    assert counts[1] == 1, "asarray(t requiring grad) did not warn about the new default"
    assert counts[2] == 1, "asarray requires_grad notice fired more than once per process"
    assert out["categories"] == ["UserWarning"], f"notice category {out['categories']}"


def _notices(caught) -> int:
    return sum(ASARRAY_WARNING in str(w.message) for w in caught)


@pytest.mark.claim("construct.asarray-requires-grad-default-warns-once")
@pytest.mark.observes("clone", "detach")
@given(spec=tensor_specs(requires_grad=True), leaf=st.booleans())
def test_asarray_default_requires_grad_notice_not_repeated(device, spec, leaf):
    """The in-process half of the claim (the fresh-interpreter test above
    sees the first notice): after a first call, which may be the process's
    first notice, no further asarray call warns - again with requires_grad
    unspecified, with an explicit requires_grad=, or for an input that does
    not require grad.

    Kills: a notice repeated on later calls (for leaves, non-leaves, views or
    some dtype), or fired for explicit requires_grad= or inputs not requiring
    grad."""
    t = spec.build(device, requires_grad=True, leaf=True)
    if not leaf:
        t = t * 1
    with capture_warnings() as caught:
        torch.asarray(t)  # the process's first notice, if none fired before
        first = _notices(caught)
        torch.asarray(t)
        torch.asarray(t)
        torch.asarray(t.detach())
        fresh = t.detach().clone().requires_grad_()
        torch.asarray(fresh, requires_grad=True)
        torch.asarray(fresh, requires_grad=False)
        torch.asarray(t * 1, requires_grad=False)
    assert first <= 1, f"asarray requires_grad notice fired {first} times for one call"
    assert _notices(caught) == first, (
        "asarray requires_grad notice fired more than once per process"
    )


@pytest.mark.claim("construct.asarray-requires-grad-keeps-or-drops-history")
@pytest.mark.observes("backward")
@grid_examples(dtypes=DIFFERENTIABLE, keep=False)
@given(spec=tensor_specs(requires_grad=True), keep=st.booleans())
def test_asarray_requires_grad_keeps_or_drops_history(device, spec, keep):
    """Kills: requires_grad=True that re-roots a non-leaf (new leaf, gradient lost), or
    requires_grad=False that copies instead of sharing."""
    x = spec.build(device, requires_grad=True, leaf=True)
    y = x * 1  # a non-leaf with history, same values
    b = torch.asarray(y, requires_grad=keep)
    assert shares_storage(b, y), f"asarray(y, requires_grad={keep}) does not share memory"
    if keep:
        assert b.grad_fn is y.grad_fn, "asarray(y, requires_grad=True) lost y's history"
        _real_sum(b).backward()
        assert x.grad is not None, "gradient did not flow through asarray(y, requires_grad=True)"
    else:
        assert b.grad_fn is None and not b.requires_grad, (
            "asarray(y, requires_grad=False) kept the history"
        )
        assert y.requires_grad, "asarray(y, requires_grad=False) changed y"


@pytest.mark.claim("construct.asarray-requires-grad-sets-input-flag")
@grid_examples(dtypes=DIFFERENTIABLE, before=True, flag=False)
@given(spec=tensor_specs(requires_grad=True), before=st.booleans(), flag=st.booleans())
def test_asarray_requires_grad_sets_the_input_flag(device, spec, before, flag):
    """Pins the side effect: asarray(leaf, requires_grad=b) is the leaf, now with flag b.
    Kills: a fix that returns an alias (the caller's flag would stay put)."""
    x = spec.build(device, requires_grad=before, leaf=True)
    b = torch.asarray(x, requires_grad=flag)
    assert b is x, "asarray(leaf, requires_grad=...) did not return the leaf itself"
    assert x.requires_grad is flag, (
        f"asarray(leaf, requires_grad={flag}) left the caller's flag at {x.requires_grad}"
    )
