"""Properties of ``copy.deepcopy`` / ``copy.copy`` of tensors, Parameters and modules
(claims in ``claims/deepcopy.toml``).

``Tensor.__deepcopy__`` copies the *storage* through the memo (so tensors sharing a
storage in one ``deepcopy`` call share one new storage) and re-``set_``s the metadata;
``Parameter.__deepcopy__`` instead clones ``p.data`` and bypasses all of that (no storage
memo, no ``.grad``, no ``__dict__``: issues #79788, #95711, #117275, recorded as
deviations); ``copy.copy`` has no ``__copy__`` and goes through ``__reduce_ex__``, which
aliases. Values are compared bit for bit against an independent build of the same spec.
What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    first_index,
    raises_with,
    same_bits,
    sentinel_for,
    shares_storage,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    DOMAIN_SPEC_COMPLEX,
    domain_examples,
    non_empty,
    tensor_kind_of,
    writable_non_empty,
)

#: uint16/uint32/uint64 (torch >= 2.3): copy.copy of a plain tensor of these raises on
#: torch 2.13 (deepcopy.copy-copy-wide-unsigned-raises); to_sparse has no kernels for them.
WIDE_UNSIGNED = tuple(
    getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)
)
NO_WIDE_UNSIGNED = tuple(d for d in ALL_DTYPES if d not in WIDE_UNSIGNED)


def _meta(t: torch.Tensor) -> tuple:
    return (t.dtype, t.device, tuple(t.shape), t.stride(), t.storage_offset())


def _write_seen(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """Write a sentinel into ``src``'s first element; is ``dst``'s first element it?
    (Both must index their first element at the same memory location if they share.)"""
    value = sentinel_for(dst)
    with torch.no_grad():
        src[first_index(src)] = value
    want = torch.tensor(value, dtype=dst.dtype).item()
    return dst[first_index(dst)].item() == want


#: Further tensors on the storage of a spec's tensor ``t`` (built from ``base``).
COMPANIONS = ("base", "flat-offset", "sub-view", "detached")


def _companion(kind: str, base: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    if kind == "base":
        return base
    if kind == "flat-offset":  # the storage seen as 1-d from element 1 on
        n = base.untyped_storage().nbytes() // base.element_size()
        return base.as_strided((max(n - 1, 0),), (1,), min(1, n))
    if kind == "sub-view":  # a view of the view
        return t[1:] if t.dim() and t.shape[0] > 1 else t.unsqueeze(0)
    if kind == "detached":  # another tensor object over the same memory
        return t.detach()
    raise ValueError(kind)


def _family(spec, device, companions, view_first):
    base = spec.build_base(device)
    t = spec.apply_views(base)
    others = [_companion(k, base, t) for k in companions]
    return [t, *others] if view_first else [*others, t]


def _pack(tensors: list, container: str):
    if container == "list":
        return list(tensors)
    if container == "dict":
        return {f"k{i}": x for i, x in enumerate(tensors)}
    return {"outer": [(x,) for x in tensors]}  # nested


def _unpack(obj, container: str) -> list:
    if container == "list":
        return list(obj)
    if container == "dict":
        return list(obj.values())
    return [x for (x,) in obj["outer"]]


# ==================================================================== values


@pytest.mark.claim("deepcopy.values-metadata-independent")
@pytest.mark.observes("tensor")
@grid_examples(grid_values="all", requires_grad=False, direction="to-copy")
@grid_examples(
    dtypes=(torch.float64,), grid_values="all", requires_grad=True, direction="to-source"
)
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    direction=st.sampled_from(["to-copy", "to-source"]),
)
def test_deepcopy_keeps_values_and_metadata_in_new_storage(device, spec, requires_grad, direction):
    """``copy.deepcopy(t)`` of a leaf is a new tensor of t's type, dtype, device, shape,
    strides and storage offset, holding t's bits, in a new storage of t's storage size;
    writes to either side are not seen by the other.

    Kills: a deepcopy that aliases (for one layout or dtype), that compacts the storage
    or drops the offset, that makes a permuted/channels_last/expanded layout contiguous,
    or that changes values (NaN payloads, -0.0, subnormals)."""
    t = spec.build(device, requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE, leaf=True)
    evidence.features(tensor_kind="leaf" if t.requires_grad else "plain")
    want = spec.build(device)
    c = copy.deepcopy(t)
    assert c is not t and type(c) is type(t), f"deepcopy returned {type(c).__name__} / t itself"
    assert _meta(c) == _meta(t), f"deepcopy changed metadata {_meta(t)} -> {_meta(c)}"
    assert_same_bits(c, want, "copy.deepcopy(t) keeps t's values")
    assert c.untyped_storage().nbytes() == t.untyped_storage().nbytes(), (
        f"deepcopy storage has {c.untyped_storage().nbytes()} bytes, "
        f"t's {t.untyped_storage().nbytes()}"
    )
    if t.untyped_storage().nbytes() == 0:
        return
    assert not shares_storage(c, t), "deepcopy shares the source's storage"
    if t.numel():
        if direction == "to-copy":
            assert not _write_seen(t, c), "a write to the source is seen in its deepcopy"
        else:
            assert not _write_seen(c, t), "a write to the deepcopy is seen in the source"


@pytest.mark.claim("deepcopy.memo-preserves-sharing")
@pytest.mark.observes("detach")
@grid_examples(companions=("base",), view_first=True, container="list")
@given(
    spec=tensor_specs(values="all"),
    companions=st.lists(st.sampled_from(COMPANIONS), min_size=1, max_size=2).map(tuple),
    view_first=st.booleans(),
    container=st.sampled_from(["list", "dict", "nested"]),
)
def test_deepcopy_memo_preserves_sharing(device, spec, companions, view_first, container):
    """Tensors sharing a storage, deep-copied in one call, share one new storage with
    each one's metadata and bits; a write through one copy is seen in the other copies
    and not in the originals; a second deepcopy call shares nothing with the first.

    Kills: a deepcopy without a storage memo (each tensor its own storage), one that
    memoizes wrongly (aliasing the originals), or one that loses offsets or strides of
    the views."""
    objs = _family(spec, device, companions, view_first)
    copies = _unpack(copy.deepcopy(_pack(objs, container)), container)
    for i, (o, c) in enumerate(zip(objs, copies, strict=True)):
        assert _meta(c) == _meta(o), f"deepcopy: tensor {i} has {_meta(c)}, source {_meta(o)}"
        assert_same_bits(c, o, f"deepcopy keeps the values of tensor {i}")
    if objs[0].untyped_storage().nbytes() == 0:
        return  # nothing to share
    for i in range(1, len(copies)):
        assert shares_storage(copies[i], copies[0]), (
            f"deepcopy did not preserve storage sharing (tensors 0 and {i})"
        )
    assert not shares_storage(copies[0], objs[0]), "deepcopy shares the originals' storage"
    again = copy.deepcopy(objs[0])
    assert not shares_storage(again, copies[0]), "two deepcopy calls share a storage"
    k = next((i for i, o in enumerate(objs) if o.numel()), None)
    if k is None:
        return
    value = sentinel_for(objs[k])
    with torch.no_grad():
        objs[k][first_index(objs[k])] = value
        copies[k][first_index(copies[k])] = value
    for i, (o, c) in enumerate(zip(objs, copies, strict=True)):
        assert same_bits(c, o), (
            f"deepcopy did not preserve storage sharing: a write through copy {k} is not "
            f"seen in copy {i}"
        )


# ================================================================== autograd


#: A float32 (2, 3) spec: the explicit examples of each state of a domain (issue 29).
_F32_SPEC = TensorSpec(
    dtype=torch.float32, base_shape=(2, 3), storage=(1.0, -0.0, 3.5, 4.0, 5.0, 6.0)
)


#: The ``tensor_kind`` values (issue 29) of what each state of
#: :func:`test_deepcopy_of_nonleaf_raises` deep-copies.
_NONLEAF_STATE_KINDS = {
    "op-result": {"non_leaf"},
    "view": {"non_leaf"},
    "in-list": {"plain", "non_leaf"},
    "in-dict": {"non_leaf"},
    "parameter-and-view": {"parameter", "non_leaf"},
    "leaf": {"plain"},
    "leaf-requires-grad": {"leaf"},
    "computed-under-no-grad": {"plain"},
    "detached": {"plain"},
}


def _each_state(states, **fixed):
    """One explicit ``@example`` per state, of a float32 (2, 3) tensor."""

    def decorate(fn):
        for state in states:
            fn = example(spec=_F32_SPEC, state=state, **fixed)(fn)
        return fn

    return decorate


@pytest.mark.claim("deepcopy.nonleaf-raises")
@pytest.mark.observes("detach")
@_each_state(_NONLEAF_STATE_KINDS)
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    state=st.sampled_from(
        [
            "op-result",
            "view",
            "in-list",
            "in-dict",
            "parameter-and-view",
            "leaf",
            "leaf-requires-grad",
            "computed-under-no-grad",
            "detached",
        ]
    ),  # fmt: skip
)
def test_deepcopy_of_nonleaf_raises(device, spec, state):
    """``copy.deepcopy`` of a non-leaf (an op result, a view of a tensor requiring grad,
    such a tensor in a container) raises RuntimeError "Only Tensors created explicitly
    by the user (graph leaves) support the deepcopy protocol at the moment"; leaves copy.

    Kills: a deepcopy that silently copies a non-leaf (detaching it, or keeping a
    grad_fn), for views only or inside containers; or one that refuses leaves."""
    evidence.features(tensor_kind=_NONLEAF_STATE_KINDS[state])
    r = spec.build(device, requires_grad=True)
    if state == "op-result":
        obj = r * 2
    elif state == "view":
        obj = r.expand(spec.shape) if r.is_leaf else r  # a view with a grad_fn
    elif state == "in-list":
        obj = [spec.build(device), r * 2]
    elif state == "in-dict":
        obj = {"a": r * 2}
    elif state == "parameter-and-view":
        p = torch.nn.Parameter(spec.build(device))
        obj = [p, p.expand(spec.shape)]
    elif state == "leaf":
        obj = spec.build(device)
    elif state == "leaf-requires-grad":
        obj = spec.build(device, requires_grad=True, leaf=True)
    elif state == "computed-under-no-grad":
        with torch.no_grad():
            obj = r * 2
    else:
        obj = (r * 2).detach()
    if state in ("leaf", "leaf-requires-grad", "computed-under-no-grad", "detached"):
        copy.deepcopy(obj)
        return
    with raises_with(RuntimeError, "Only Tensors created explicitly by the user (graph leaves)"):
        copy.deepcopy(obj)


@pytest.mark.claim("deepcopy.requires-grad-and-leaf-kept")
@pytest.mark.observes("backward")
@example(spec=_F32_SPEC, requires_grad=False, kind="tensor")
@example(spec=_F32_SPEC, requires_grad=True, kind="tensor")
@example(spec=_F32_SPEC, requires_grad=True, kind="parameter")
@example(spec=_F32_SPEC, requires_grad=False, kind="parameter")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS),
    requires_grad=st.booleans(),
    kind=st.sampled_from(["tensor", "parameter"]),
)
def test_deepcopy_keeps_requires_grad_unconnected(device, spec, requires_grad, kind):
    """The deep copy of a leaf has its ``requires_grad``, is a leaf without grad_fn and is
    not connected to it: backward through the copy fills the copy's ``.grad`` and leaves
    the original's None.

    Kills: a deepcopy that drops (or sets) requires_grad for some dtype, that returns a
    non-leaf (an autograd op), or whose backward reaches the source."""
    if kind == "parameter":
        t = torch.nn.Parameter(spec.build(device), requires_grad=requires_grad)
    else:
        t = spec.build(device, requires_grad=requires_grad, leaf=True)
    evidence.features(
        tensor_kind="parameter" if kind == "parameter" else "leaf" if requires_grad else "plain"
    )
    c = copy.deepcopy(t)
    assert c.requires_grad == requires_grad, (
        f"deepcopy has requires_grad={c.requires_grad}, source {requires_grad}"
    )
    assert c.is_leaf and c.grad_fn is None, f"deepcopy is not a leaf (grad_fn {c.grad_fn})"
    if requires_grad and c.numel():
        loss = (c * c).sum()
        (loss.real if loss.is_complex() else loss).backward()
        assert c.grad is not None, "backward through the deepcopy did not reach it"
        assert t.grad is None, "backward through the deepcopy reached the source"


@pytest.mark.claim("deepcopy.grad-and-attrs-copied-for-tensors")
@domain_examples(dtypes=DIFFERENTIABLE, attr=None)  # issue 29: every layout and family
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, values="all"),
    attr=st.sampled_from([None, [1, 2], {"k": (3,)}]),
)
def test_deepcopy_copies_grad_and_attributes_of_tensors(device, spec, attr):
    """A plain tensor leaf's ``.grad`` is deep-copied with it (same values, shape, dtype,
    strides; a new storage), and a Python attribute set on it is deep-copied too.

    Kills: a deepcopy that drops ``.grad`` (issue #3307), aliases it, or drops or shares
    the tensor's ``__dict__``."""
    t = spec.build(device, requires_grad=True, leaf=True)
    t.grad = spec.build(device)  # a .grad with t's layout (strided, offset, expanded...)
    if attr is not None:
        t.tag = attr
    c = copy.deepcopy(t)
    assert c.grad is not None, "deepcopy dropped a tensor's .grad"
    assert c.grad is not t.grad, "deepcopy shares the source's .grad object"
    assert _meta(c.grad) == _meta(t.grad), "deepcopy changed the .grad's metadata"
    assert_same_bits(c.grad, t.grad, "deepcopy keeps the .grad's values")
    if t.grad.untyped_storage().nbytes():
        assert not shares_storage(c.grad, t.grad), "deepcopy's .grad shares the source's"
    if attr is not None:
        assert getattr(c, "tag", None) == attr, "deepcopy dropped a tensor's attribute"
        assert c.tag is not t.tag, "deepcopy shares a tensor's attribute object (shallow)"


@pytest.mark.claim("deepcopy.fresh-version-counter")
@domain_examples(where=writable_non_empty, bumps=1, side="copy", with_view=False)  # issue 29
@given(
    spec=tensor_specs(shape=shapes(min_side=1), views=NON_OVERLAPPING_VIEWS),
    bumps=st.integers(0, 3),
    side=st.sampled_from(["copy", "source"]),
    with_view=st.booleans(),
)
def test_deepcopy_has_its_own_version_counter(device, spec, bumps, side, with_view):
    """A deep copy has its own version counter: an in-place write to the copy leaves the
    source's ``_version`` and vice versa; a base and its view deep-copied together share
    a storage but not a version counter.

    Kills: a deepcopy that aliases the version counter (a saved-tensor check on the
    source would fire on writes to the copy, or miss writes)."""
    base = spec.build_base(device)
    t = spec.apply_views(base)
    for _ in range(bumps):
        torch.autograd.graph.increment_version(t)
    if with_view:
        assume(spec.views)
        cb, c = copy.deepcopy([base, t])
    else:
        c = copy.deepcopy(t)
    before_t, before_c = t._version, c._version
    src, dst = (c, t) if side == "copy" else (t, c)
    with torch.no_grad():
        src[first_index(src)] = sentinel_for(src)
    assert (t._version, c._version) != (before_t, before_c), "the write bumped no version"
    if side == "copy":
        assert t._version == before_t, "a write to the deepcopy bumped the source's version"
    else:
        assert c._version == before_c, "a write to the source bumped the deepcopy's version"
    if with_view:
        v = cb._version
        torch.autograd.graph.increment_version(c)
        assert cb._version == v, "views deep-copied together share a version counter"


@pytest.mark.claim("deepcopy.conj-neg-resolved-unshared")
# Issue 29: every layout family of the base and every family with negation
# (a negative view; complex128's is conj().imag), alone and with its base; a
# conjugate view of complex64.
@domain_examples(dtypes=ARITHMETIC, with_base=True)
@domain_examples(dtypes=ARITHMETIC, with_base=False)
@example(spec=DOMAIN_SPEC_COMPLEX, with_base=True)
@example(spec=DOMAIN_SPEC_COMPLEX, with_base=False)
@given(
    spec=tensor_specs(dtype=ARITHMETIC, values="all"),
    with_base=st.booleans(),
)
def test_deepcopy_resolves_conj_and_neg_bits(device, spec, with_base):
    """Pins torch 2.13: the deep copy of a conjugate view (``c.conj()``) or a negative
    view (``c.conj().imag``, ``torch._neg_view(x)``) holds the view's values without the
    bit, in a storage of its own: deep-copied with its base it does not share the base
    copy's storage (unlike every other view).

    Kills: a deepcopy that keeps the bit (as torch.save does) or loses the values
    (copies the raw storage), for one dtype or rank."""
    base = spec.build(device)
    if spec.dtype in COMPLEX:
        v = base.conj() if spec.dtype == torch.complex64 else base.conj().imag
    else:
        v = torch._neg_view(base)
    evidence.features(math_bit="conj" if v.is_conj() else "neg")
    if with_base:
        cb, cv = copy.deepcopy([base, v])
    else:
        cv = copy.deepcopy(v)
    assert not cv.is_conj() and not cv.is_neg(), "deepcopy kept the conjugate/negative bit"
    # The resolved view (the neg kernel quiets a NaN's payload in bfloat16, so the
    # resolved values, not the raw sign flip, are the oracle).
    want = v.resolve_conj().resolve_neg()
    assert_same_bits(cv, want, "deepcopy of a conjugate/negative view holds its resolved values")
    if with_base and base.numel():
        assert not shares_storage(cv, cb), "deepcopy of a conj/neg view shares its base copy"


# ============================================================ copy.copy


@pytest.mark.claim("deepcopy.copy-copy-aliases")
@pytest.mark.observes("tensor")
@grid_examples(state="leaf", direction="to-source")
@given(
    spec=tensor_specs(),
    state=st.sampled_from(["leaf", "leaf-requires-grad", "non-leaf", "parameter"]),
    direction=st.sampled_from(["to-source", "to-copy"]),
)
def test_copy_copy_aliases(device, spec, state, direction):
    """``copy.copy(t)`` is a new tensor object aliasing t's storage with t's strides and
    offset (writes seen both ways), with t's requires_grad, as a leaf without ``.grad``
    and with its own version counter; a Parameter gives a Parameter.

    Kills: a shallow copy that copies the data (for some layout), returns t itself, or
    shares t's version counter / autograd history."""
    grad_ok = spec.dtype in DIFFERENTIABLE
    if state == "parameter":
        t = torch.nn.Parameter(spec.build(device), requires_grad=grad_ok)
    elif state == "non-leaf":
        assume(grad_ok)
        t = spec.build(device, requires_grad=True).expand(spec.shape)
    else:
        t = spec.build(device, requires_grad=grad_ok and state == "leaf-requires-grad", leaf=True)
    c = copy.copy(t)
    assert c is not t, "copy.copy returned the tensor itself"
    assert type(c) is type(t), f"copy.copy of a {type(t).__name__} is a {type(c).__name__}"
    assert _meta(c) == _meta(t), f"copy.copy changed metadata {_meta(t)} -> {_meta(c)}"
    assert c.requires_grad == t.requires_grad, "copy.copy changed requires_grad"
    assert c.is_leaf and c.grad_fn is None and c.grad is None, "copy.copy is not a bare leaf"
    if t.untyped_storage().nbytes():
        assert shares_storage(c, t), "copy.copy does not share the tensor's storage"
    if t.numel() == 0:
        return
    before = t._version
    if direction == "to-source":
        assert _write_seen(c, t), "a write through copy.copy(t) is not seen in t"
        assert t._version == before, "a write through copy.copy(t) bumped t's version"
    else:
        assert _write_seen(t, c), "a write to t is not seen through copy.copy(t)"


# ============================================================ Parameters


def _parameter_family(spec, device, case):
    """Objects sharing one storage, at least one a Parameter (never one object twice)."""
    base = spec.build_base(device)
    t = spec.apply_views(base)
    if case == "two-parameters":
        return [torch.nn.Parameter(t), torch.nn.Parameter(t)]
    p = torch.nn.Parameter(t)
    other = base if case == "parameter-and-base" else p.detach()
    return [p, other] if case != "tensor-first" else [other, p]


@pytest.mark.claim("deepcopy.parameter-keeps-sharing")
@pytest.mark.observes("detach")
@domain_examples(dtypes=DIFFERENTIABLE, where=non_empty, case="two-parameters")  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, shape=shapes(min_side=1)),
    case=st.sampled_from(
        ["two-parameters", "parameter-and-base", "parameter-and-detached", "tensor-first"]
    ),  # fmt: skip
)
def test_deepcopy_of_parameters_keeps_sharing(device, spec, case):
    """Parameters deep-copied in one call keep sharing a storage with each other and
    with plain tensors on the same storage, like plain tensors do
    (``deepcopy.memo-preserves-sharing``). torch 2.13 does not (issue #79788):
    recorded deviation, pinned by ``deepcopy.parameter-copies-by-clone``.

    Kills: (once fixed) a Parameter deepcopy that loses sharing again."""
    objs = _parameter_family(spec, device, case)
    copies = copy.deepcopy(objs)
    for i in range(1, len(copies)):
        assert shares_storage(copies[i], copies[0]), (
            f"deepcopy did not preserve storage sharing between a Parameter and tensor {i}"
        )
    assert not shares_storage(copies[0], objs[0]), "deepcopy of Parameters aliases the originals"
    for i, (o, c) in enumerate(zip(objs, copies, strict=True)):
        assert _meta(c) == _meta(o), f"deepcopy: tensor {i} has {_meta(c)}, source {_meta(o)}"


@pytest.mark.claim("deepcopy.parameter-copies-by-clone")
@pytest.mark.observes("clone")
@grid_examples(requires_grad=False, case="with-base")
@given(
    spec=tensor_specs(values="all"),
    requires_grad=st.booleans(),
    case=st.sampled_from(["alone", "twice", "with-base", "two-parameters"]),
)
def test_deepcopy_of_parameter_is_a_clone(device, spec, requires_grad, case):
    """Pins torch 2.13: ``copy.deepcopy(p)`` is ``Parameter(p.data.clone(
    memory_format=torch.preserve_format), p.requires_grad)``: storage offset 0, a storage
    of exactly ``numel * element_size`` bytes, the strides of a preserve_format clone, the
    values bit for bit, requires_grad kept, sharing no storage with anything else copied
    in the same call; the same Parameter twice gives one copy (memo by object).

    Kills: a Parameter deepcopy that starts to copy the whole storage and keep offsets
    and sharing (the fix of #79788) or that loses its memo or its values, for one layout
    or dtype."""
    requires_grad = requires_grad and spec.dtype in DIFFERENTIABLE
    base = spec.build_base(device)
    t = spec.apply_views(base)
    p = torch.nn.Parameter(t, requires_grad=requires_grad)
    objs = {"alone": [p], "twice": [p, p], "with-base": [p, base],
            "two-parameters": [p, torch.nn.Parameter(t, requires_grad=requires_grad)]}[case]  # fmt: skip
    copies = copy.deepcopy(objs)
    c = copies[0]
    assert type(c) is torch.nn.Parameter and c.requires_grad == requires_grad, (
        f"deepcopy of a Parameter is a {type(c).__name__} with requires_grad={c.requires_grad}"
    )
    assert_same_bits(c, spec.build(device), "deepcopy of a Parameter keeps its values")
    assert c.storage_offset() == 0, f"deepcopy of a Parameter has offset {c.storage_offset()}"
    want = t.numel() * t.element_size()
    assert c.untyped_storage().nbytes() == want, (
        f"deepcopy of a Parameter has a {c.untyped_storage().nbytes()}-byte storage, a clone {want}"
    )
    assert c.stride() == t.clone().stride(), (
        f"deepcopy of a Parameter has strides {c.stride()}, a clone {t.clone().stride()}"
    )
    if case == "twice":
        assert copies[1] is c, "the same Parameter deep-copied twice gave two copies"
    elif case != "alone" and c.untyped_storage().nbytes():
        assert not shares_storage(copies[1], c), "a Parameter's deepcopy shares a storage"


@pytest.mark.claim("deepcopy.parameter-keeps-grad-and-attrs")
@domain_examples(dtypes=DIFFERENTIABLE, what="grad")  # issue 29: every layout and family
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    what=st.sampled_from(["grad", "attr", "both"]),
)
def test_deepcopy_of_parameter_keeps_grad_and_attrs(device, spec, what):
    """A Parameter's deep copy carries a copy of its ``.grad`` and of its Python
    attributes, as a plain tensor's does (``deepcopy.grad-and-attrs-copied-for-tensors``).
    torch 2.13 drops both (issues #95711, #117275): recorded deviation, pinned by
    ``deepcopy.parameter-drops-grad-and-attrs``.

    Kills: (once fixed) a Parameter deepcopy that drops them again."""
    p = torch.nn.Parameter(spec.build(device))
    if what in ("grad", "both"):
        p.grad = torch.ones_like(p)
    if what in ("attr", "both"):
        p.tag = [1, 2]
    c = copy.deepcopy(p)
    if what in ("grad", "both"):
        assert c.grad is not None, "deepcopy of a Parameter dropped its .grad"
        assert c.grad is not p.grad, "deepcopy of a Parameter shares the source's .grad object"
        assert_same_bits(c.grad, p.grad, "deepcopy of a Parameter keeps its .grad")
    if what in ("attr", "both"):
        assert getattr(c, "tag", None) == [1, 2], "deepcopy of a Parameter dropped its attribute"


@pytest.mark.claim("deepcopy.parameter-drops-grad-and-attrs")
@domain_examples(dtypes=DIFFERENTIABLE, requires_grad=True, what="grad")  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    requires_grad=st.booleans(),
    what=st.sampled_from(["grad", "attr", "both"]),
)
def test_deepcopy_of_parameter_drops_grad_and_attrs(device, spec, requires_grad, what):
    """Pins torch 2.13: ``copy.deepcopy`` of an ``nn.Parameter`` with a ``.grad`` and/or a
    Python attribute returns a Parameter (requires_grad kept) whose ``.grad`` is None and
    that lacks the attribute, while the source keeps both.

    Kills: a change here (a fix of #95711/#117275 shows up as a failure of this pin and
    an unexpected pass of ``deepcopy.parameter-keeps-grad-and-attrs``), for one dtype or
    one of the two."""
    p = torch.nn.Parameter(spec.build(device), requires_grad=requires_grad)
    if what in ("grad", "both"):
        p.grad = torch.ones_like(p)
    if what in ("attr", "both"):
        p.tag = [1, 2]
    c = copy.deepcopy(p)
    assert type(c) is torch.nn.Parameter and c.requires_grad == requires_grad, (
        "deepcopy of a Parameter changed its type or requires_grad"
    )
    assert c.grad is None, "deepcopy of a Parameter copied its .grad"
    assert not hasattr(c, "tag"), "deepcopy of a Parameter copied its attribute"
    if what in ("grad", "both"):
        assert p.grad is not None, "deepcopy cleared the source's .grad"


# ================================================================ modules


@pytest.mark.claim("deepcopy.module-tied-parameters")
@domain_examples(dtypes=DIFFERENTIABLE, buf_spec=DOMAIN_SPEC, depth=2)  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, values="all"),
    buf_spec=tensor_specs(),
    depth=st.integers(1, 3),
)
def test_deepcopy_of_module_keeps_tied_parameters(device, spec, buf_spec, depth):
    """Deep-copying a module whose submodules share one Parameter object (tied weights)
    and one buffer yields a module whose corresponding attributes are one new Parameter
    (and one new buffer) - the same object in both places, distinct from the original's,
    not sharing its storage, with its values.

    Kills: a deepcopy that unties weights (two copies), or that keeps the original
    object (a teacher/EMA copy silently tied to the student)."""
    evidence.features(tensor_kind=frozenset({"parameter", "buffer"}))  # both, every example
    w = torch.nn.Parameter(spec.build(device))
    b = buf_spec.build(device)
    root = torch.nn.Module()
    node = root
    for _ in range(depth - 1):
        node.inner = torch.nn.Module()
        node = node.inner
    node.a = torch.nn.Module()
    root.b = torch.nn.Module()
    node.a.weight = w
    root.b.weight = w
    node.a.register_buffer("buf", b)
    root.b.register_buffer("buf", b)
    c = copy.deepcopy(root)
    cnode = c
    for _ in range(depth - 1):
        cnode = cnode.inner
    assert cnode.a.weight is c.b.weight, "deepcopy untied a shared Parameter"
    assert cnode.a.buf is c.b.buf, "deepcopy untied a shared buffer"
    assert c.b.weight is not w and c.b.buf is not b, "deepcopy kept the original objects"
    assert_same_bits(c.b.weight, w, "the tied Parameter's copy keeps its values")
    assert_same_bits(c.b.buf, b, "the tied buffer's copy keeps its values")
    if w.untyped_storage().nbytes():
        assert not shares_storage(c.b.weight, w), "the tied Parameter's copy shares storage"


@pytest.mark.claim("deepcopy.inference-and-sparse")
# Issue 29: every layout and dtype family of the inference tensor, and of the
# dense source of the sparse tensor (at least 1-d, no wide unsigned dtype).
@domain_examples(kind="inference")
@domain_examples(dtypes=NO_WIDE_UNSIGNED, where=lambda s: len(s.shape) >= 1, kind="sparse_coo")
@given(
    spec=tensor_specs(dtype=NO_WIDE_UNSIGNED, values="all", shape=shapes(min_dims=1, max_dims=3)),
    kind=st.sampled_from(["inference", "sparse_coo"]),
)
def test_deepcopy_of_inference_and_sparse_tensors(device, spec, kind):
    """An inference tensor deep-copies (outside inference mode) to a normal tensor with
    its values; a sparse COO tensor deep-copies to a sparse COO tensor with the same
    indices and values in new memory.

    Kills: a deepcopy that keeps the inference flag (the copy could not be used in
    autograd or mutated), or that densifies a sparse tensor or aliases its values."""
    if kind == "inference":
        with torch.inference_mode():
            t = spec.build(device)
        c = copy.deepcopy(t)
        assert not c.is_inference(), "deepcopy of an inference tensor is an inference tensor"
        assert _meta(c) == _meta(t), "deepcopy of an inference tensor changed metadata"
        assert_same_bits(c, spec.build(device), "deepcopy of an inference tensor keeps values")
        return
    t = spec.build(device).to_sparse()
    c = copy.deepcopy(t)
    assert c.layout == torch.sparse_coo, f"deepcopy of a sparse COO tensor has layout {c.layout}"
    assert c.is_coalesced() == t.is_coalesced(), "deepcopy changed coalescing"
    assert_same_bits(c._indices(), t._indices(), "deepcopy keeps a sparse tensor's indices")
    assert_same_bits(c._values(), t._values(), "deepcopy keeps a sparse tensor's values")
    if t._values().numel():
        assert not shares_storage(c._values(), t._values()), (
            "deepcopy of a sparse tensor shares its values"
        )


@pytest.mark.claim("deepcopy.copy-copy-wide-unsigned-raises")
# Issue 29: every layout family, each kind of call, by construction.
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), kind="tensor")
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), kind="parameter")
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), kind="deepcopy")
@given(
    spec=tensor_specs(dtype=WIDE_UNSIGNED or (torch.uint8,)),
    kind=st.sampled_from(["tensor", "parameter", "deepcopy"]),
)
def test_copy_copy_of_wide_unsigned_tensor_raises(device, spec, kind):
    """Pins torch 2.13: ``copy.copy`` of a plain uint16/uint32/uint64 tensor raises
    AttributeError "'torch.storage.UntypedStorage' object has no attribute
    '_untyped_storage'" (``__reduce_ex__`` hands ``_rebuild_tensor_v3`` an untyped storage
    where it expects a typed one); ``copy.copy`` of such an ``nn.Parameter`` (rebuilt from
    ``p.data``) and ``copy.deepcopy`` of the tensor work.

    Kills: a change here (a fix shows up as a failure of this pin and an unexpected pass
    of ``deepcopy.copy-copy-aliases``), for one of the three dtypes."""
    if not WIDE_UNSIGNED:
        from conformance.evidence import not_applicable

        not_applicable("torch < 2.3 has no uint16/uint32/uint64")
    t = spec.build(device)
    evidence.features(tensor_kind="parameter" if kind == "parameter" else tensor_kind_of(t))
    if kind == "tensor":
        with raises_with(AttributeError, "has no attribute '_untyped_storage'"):
            copy.copy(t)
    elif kind == "parameter":
        p = torch.nn.Parameter(t, requires_grad=False)
        c = copy.copy(p)
        assert type(c) is torch.nn.Parameter, "copy.copy of a Parameter is not a Parameter"
        if t.untyped_storage().nbytes():
            assert shares_storage(c, p), "copy.copy of a Parameter does not alias it"
    else:
        c = copy.deepcopy(t)
        assert_same_bits(c, spec.build(device), "deepcopy of a wide unsigned tensor keeps values")


# ================================================ shared memory, grad modes


def _plain_2x3(spec) -> bool:
    """The grid's plain contiguous layout: with ``grid_examples``, one example per dtype."""
    return spec.base_shape == (2, 3) and not spec.views


@pytest.mark.claim("deepcopy.copy-not-shared")
@grid_examples(where=_plain_2x3, grid_values="all", kind="tensor")
@example(spec=_F32_SPEC, kind="parameter")
@example(spec=_F32_SPEC, kind="module")
@given(
    spec=tensor_specs(values="all"),
    kind=st.sampled_from(["tensor", "parameter", "module", "copy.copy"]),
)
def test_deepcopy_of_shared_tensor_is_private(device, spec, kind):
    """The source is put in shared memory (``share_memory_()``, a module's
    ``share_memory()``); its deep copy is not in shared memory, holds its values, and
    the source stays shared. ``copy.copy`` aliases, so its result is shared.

    Kills: a deepcopy that copies into shared memory (or hands back the shared storage),
    for tensors, Parameters or module buffers; a ``copy.copy`` that copies."""
    if kind == "copy.copy":
        assume(spec.dtype not in WIDE_UNSIGNED)  # deepcopy.copy-copy-wide-unsigned-raises
    evidence.features(
        tensor_kind={"parameter": "parameter", "module": {"parameter", "buffer"}}.get(kind, "plain")
    )
    t = spec.build(device)
    if kind == "parameter":
        t = torch.nn.Parameter(t, requires_grad=False)
    if kind == "module":
        m = torch.nn.Module()
        m.p = torch.nn.Parameter(spec.build(device), requires_grad=False)
        m.register_buffer("buf", t)
        m.share_memory()
        c = copy.deepcopy(m)
        pairs = [("parameter", m.p, c.p), ("buffer", m.buf, c.buf)]
    else:
        t.share_memory_()
        c = (copy.copy if kind == "copy.copy" else copy.deepcopy)(t)
        pairs = [(kind, t, c)]
    want = spec.build(device)
    for what, src, cp in pairs:
        assert src.is_shared(), f"the source {what} is not in shared memory"
        assert_same_bits(cp, want, f"the copy of a shared {what} keeps its values")
        if kind == "copy.copy":
            assert cp.is_shared(), "copy.copy of a shared tensor is not in shared memory"
        else:
            assert not cp.is_shared(), f"copy.deepcopy of a shared {what} is in shared memory"


@pytest.mark.claim("deepcopy.grad-mode-independent")
@pytest.mark.observes("backward")
@example(spec=_F32_SPEC, kind="tensor", requires_grad=False)
@example(spec=_F32_SPEC, kind="tensor", requires_grad=True)
@example(spec=_F32_SPEC, kind="parameter", requires_grad=True)
@example(spec=_F32_SPEC, kind="non-leaf", requires_grad=True)
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, values="all"),
    kind=st.sampled_from(["tensor", "parameter", "non-leaf"]),
    requires_grad=st.booleans(),
)
def test_deepcopy_under_no_grad_is_unchanged(device, spec, kind, requires_grad):
    """Inside ``torch.no_grad()`` a leaf copies to a leaf of its type with its
    ``requires_grad`` (not an inference tensor, same values) that trains on its own
    afterwards; a non-leaf still raises.

    Kills: a deepcopy that reads grad mode: drops ``requires_grad`` (an EMA copy made
    under no_grad that silently stops training), returns an inference or non-leaf
    tensor, or copies a non-leaf under no_grad."""
    evidence.features(
        tensor_kind={"non-leaf": "non_leaf", "parameter": "parameter"}.get(
            kind, "leaf" if requires_grad else "plain"
        )
    )
    if kind == "non-leaf":
        r = spec.build(device, requires_grad=True) * 2
        with torch.no_grad():
            with raises_with(RuntimeError, "Only Tensors created explicitly by the user"):
                copy.deepcopy(r)
        return
    if kind == "parameter":
        t = torch.nn.Parameter(spec.build(device), requires_grad=requires_grad)
    else:
        t = spec.build(device, requires_grad=requires_grad, leaf=True)
    with torch.no_grad():
        c = copy.deepcopy(t)
    assert type(c) is type(t), f"deepcopy under no_grad of a {type(t).__name__} is a {type(c)}"
    assert c.requires_grad == requires_grad, (
        f"deepcopy under no_grad has requires_grad={c.requires_grad}, source {requires_grad}"
    )
    assert c.is_leaf and c.grad_fn is None, f"deepcopy under no_grad has grad_fn {c.grad_fn}"
    assert not c.is_inference(), "deepcopy under no_grad is an inference tensor"
    assert_same_bits(c, spec.build(device), "deepcopy under no_grad keeps the values")
    if requires_grad and c.numel():
        loss = (c * c).sum()
        (loss.real if loss.is_complex() else loss).backward()
        assert c.grad is not None, "backward through a copy made under no_grad did not reach it"
        assert t.grad is None, "backward through a copy made under no_grad reached the source"


@pytest.mark.claim("deepcopy.inference-mode-gives-inference-tensors")
@grid_examples(where=_plain_2x3, grid_values="all", kind="with-base")
@domain_examples(kind="tensor")  # issue 29: every layout and dtype family
@given(
    spec=tensor_specs(values="all"),
    kind=st.sampled_from(["tensor", "requires-grad", "parameter", "with-base"]),
)
def test_deepcopy_in_inference_mode_gives_inference_tensors(device, spec, kind):
    """Normal tensors deep-copied inside ``torch.inference_mode()``: the copies are
    inference tensors with the sources' type, ``requires_grad`` and values (a view still
    sharing its base copy's storage); the sources stay normal.

    Kills: a deepcopy that builds normal tensors inside inference mode (for Parameters,
    for one dtype), drops ``requires_grad`` there, or loses the storage memo."""
    grad = kind in ("requires-grad", "parameter") and spec.dtype in DIFFERENTIABLE
    base = spec.build_base(device)
    t = spec.apply_views(base)
    if kind == "parameter":
        t = torch.nn.Parameter(t, requires_grad=grad)
    elif kind == "requires-grad" and grad:
        t = spec.build(device, requires_grad=True, leaf=True)
    objs = [base, t] if kind == "with-base" else [t]
    with torch.inference_mode():
        copies = copy.deepcopy(objs)
    for i, (o, c) in enumerate(zip(objs, copies, strict=True)):
        assert c.is_inference(), f"deepcopy inside inference mode: copy {i} is a normal tensor"
        assert not o.is_inference(), "deepcopy inside inference mode changed the source"
        assert type(c) is type(o), f"deepcopy of a {type(o).__name__} is a {type(c).__name__}"
        assert c.requires_grad == o.requires_grad, (
            f"deepcopy inside inference mode has requires_grad={c.requires_grad}, "
            f"source {o.requires_grad}"
        )
        assert c.is_leaf and c.grad_fn is None, f"deepcopy has grad_fn {c.grad_fn}"
        assert_same_bits(c, o, f"deepcopy inside inference mode keeps the values of tensor {i}")
    if kind == "with-base" and base.untyped_storage().nbytes():
        assert shares_storage(copies[1], copies[0]), (
            "deepcopy inside inference mode: the view's copy does not share its base copy's storage"
        )
