"""Properties of Tensor subclasses at the copy/alias boundary: ``__torch_function__``
subclasses (type propagation, aliasing, deepcopy, Parameters) and
``__torch_dispatch__`` wrappers (inner aliasing, outer views, autograd, copy_)
(claims in ``claims/subclasses.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
The subclasses are defined here (module level, so pickle and spawn find
them); the wrapper is the suite's own (``torch.testing._internal`` is private).
Wrappers have no storage: aliasing and values are observed on the inner tensor.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from torch.utils._pytree import tree_map

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    capture_warnings,
    element_bytes,
    raises_with,
    shares_storage,
    shares_version_counter,
    writes_visible,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    DIFFERENTIABLE,
    FLOATING,
    GRID_LAYOUTS,
    NON_OVERLAPPING_VIEWS,
    grid_examples,
    layout_grid,
    shapes,
    tensor_specs,
)
from strategies.domains import domain_examples, not_expanded


def _two_per_side(spec) -> bool:
    """At least one dimension, every side >= 2 (the inner-view tests' shapes)."""
    return len(spec.shape) >= 1 and min(spec.shape) >= 2


def _has_dims(spec) -> bool:
    return len(spec.shape) >= 1


# ------------------------------------------------------------------ subjects


class SubTensor(torch.Tensor):
    """A ``__torch_function__`` subclass with the default handler."""


class SubTensorChild(SubTensor):
    """A subclass of :class:`SubTensor` (lower in the hierarchy)."""


class OtherSubTensor(torch.Tensor):
    """A subclass unrelated to :class:`SubTensor`."""


class SubWithNewEmpty(torch.Tensor):
    """A TF subclass whose ``new_empty`` returns its own type (what deepcopy needs)."""

    def new_empty(self, *args, **kwargs):
        return super().new_empty(*args, **kwargs).as_subclass(SubWithNewEmpty)


def _correct_aliasing():
    """``return_and_correct_aliasing`` where this torch has it, else ``None``."""
    try:
        from torch.utils._python_dispatch import return_and_correct_aliasing
    except ImportError:
        return None
    return return_and_correct_aliasing


class Wrapper(torch.Tensor):
    """A ``__torch_dispatch__`` wrapper around one inner tensor ``elem``: every
    op runs on the inner tensors and its tensor results are wrapped again,
    then ``return_and_correct_aliasing`` fixes up aliasing (as the
    subclass docs recommend)."""

    correct = True

    @staticmethod
    def __new__(cls, elem: torch.Tensor, requires_grad: bool = False):
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, device=elem.device, requires_grad=requires_grad,
        )  # fmt: skip
        r.elem = elem
        return r

    def __repr__(self):
        return f"{type(self).__name__}({self.elem!r})"

    def __tensor_flatten__(self):
        return ["elem"], None

    @classmethod
    def __tensor_unflatten__(cls, inner, meta, outer_size, outer_stride):
        return cls(inner["elem"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}

        def unwrap(t):
            return t.elem if isinstance(t, Wrapper) else t

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))
        wrapped = tree_map(
            lambda t: cls(t) if isinstance(t, torch.Tensor) and not isinstance(t, Wrapper) else t,
            out,
        )
        fix = _correct_aliasing() if cls.correct else None
        return fix(func, args, kwargs, wrapped) if fix is not None else wrapped


class PlainWrapper(Wrapper):
    """The same wrapper without ``return_and_correct_aliasing``."""

    correct = False


#: The wrapper kinds: with aliasing correction, and without.
WRAPPERS = {"corrected": Wrapper, "plain": PlainWrapper}


def _wrapper(kind: str, elem: torch.Tensor) -> Wrapper:
    if kind == "corrected" and _correct_aliasing() is None:
        from conformance.evidence import not_applicable

        not_applicable("torch.utils._python_dispatch.return_and_correct_aliasing is missing")
    return WRAPPERS[kind](elem)


def _grid_spec(dtype: torch.dtype, layout: str = "contiguous"):
    names = [g[0] for g in GRID_LAYOUTS]
    return layout_grid([dtype])[names.index(layout)]


def _examples(rows):
    """One explicit example per keyword dict in ``rows`` (a dtype grid)."""

    def decorate(fn):
        for kw in rows:
            fn = example(**kw)(fn)
        return fn

    return decorate


def _bytes_kept(t: torch.Tensor, before, what: str) -> None:
    assert np.array_equal(element_bytes(t), before), f"{what}: the values changed"


# --------------------------------------------------------- __torch_function__

#: Ops on a tensor ``x`` (a subclass instance or a plain tensor): name ->
#: (dtypes it is defined for, fn). Each gives the same values on both.
_TF_OPS = {
    "clone": (ALL_DTYPES, lambda x: x.clone()),
    "torch.clone": (ALL_DTYPES, lambda x: torch.clone(x)),
    "detach": (ALL_DTYPES, lambda x: x.detach()),
    "view": (ALL_DTYPES, lambda x: x.view(x.shape)),
    "reshape": (ALL_DTYPES, lambda x: x.reshape(-1)),
    "transpose": (ALL_DTYPES, lambda x: x.transpose(0, -1) if x.dim() else x.t()),
    "getitem": (ALL_DTYPES, lambda x: x[...]),
    "contiguous": (ALL_DTYPES, lambda x: x.contiguous()),
    "to": (ALL_DTYPES, lambda x: x.to(torch.float64)),
    "add": (ARITHMETIC, lambda x: x + 1),
    "torch.add": (ARITHMETIC, lambda x: torch.add(x, 1)),
    "sum": (ARITHMETIC, lambda x: x.sum()),
    ".data": (ALL_DTYPES, lambda x: x.data),
    "new_zeros": (ALL_DTYPES, lambda x: x.new_zeros(2)),
    "zeros_like": (ALL_DTYPES, lambda x: torch.zeros_like(x)),
    "as_tensor": (ALL_DTYPES, lambda x: torch.as_tensor(x)),
    "flatten-unbind": (ALL_DTYPES, lambda x: x.reshape(-1).unbind(0)[0] if x.numel() else x),
    "cat": (ALL_DTYPES, lambda x: torch.cat([x.new_zeros(x.shape).as_subclass(torch.Tensor), x])
            if x.dim() else x.clone()),
    "stack": (ALL_DTYPES, lambda x: torch.stack([x, x])),
}  # fmt: skip

#: In-place methods (they return the instance itself).
_TF_INPLACE = {
    "zero_": (ALL_DTYPES, lambda x: x.zero_()),
    "mul_": (ARITHMETIC, lambda x: x.mul_(1)),
    "copy_": (ALL_DTYPES, lambda x: x.copy_(x.detach().as_subclass(torch.Tensor).clone())),
    "requires_grad_": (ALL_DTYPES, lambda x: x.requires_grad_(False)),
}


def _plain(spec, device) -> torch.Tensor:
    return spec.build(device)


def _sub(spec, device, cls=SubTensor) -> torch.Tensor:
    return spec.build(device).as_subclass(cls)


@pytest.mark.claim("subclasses.torch-function-type-preserved")
@pytest.mark.observes("clone", "copy_", "detach", "to")
@grid_examples(op="view")
@given(
    spec=tensor_specs(values="all"),
    op=st.sampled_from(sorted(_TF_OPS) + sorted(_TF_INPLACE)),
)
def test_torch_function_keeps_subclass(device, spec, op):
    """Expected values: the same op applied to a plain build of the spec.

    Kills: a __torch_function__ path that returns plain Tensors for some
    ops (views, indexing, a calling form), or in-place methods that return
    another object."""
    table = _TF_OPS if op in _TF_OPS else _TF_INPLACE
    overlapping = any(v[0] == "expand" for v in spec.views)
    if spec.dtype not in table[op][0] or (table is _TF_INPLACE and overlapping):
        op = "clone"
        table = _TF_OPS
    fn = table[op][1]
    evidence.features(form=op)
    s = _sub(spec, device)
    out = fn(s)
    if table is _TF_INPLACE:
        assert out is s, f"in-place {op} on a subclass instance returned another object"
        return
    assert type(out) is SubTensor, f"{op} of a SubTensor returned {type(out).__name__}"
    assert_same_bits(out.as_subclass(torch.Tensor), fn(_plain(spec, device)), f"{op} keeps values")


_BINARY = {
    "add": lambda a, b: a + b,
    "torch.mul": lambda a, b: torch.mul(a, b),
    "torch.cat": lambda a, b: torch.cat([a, b]),
    "torch.stack": lambda a, b: torch.stack([a, b]),
    "torch.where": lambda a, b: torch.where(torch.ones_like(a, dtype=torch.bool), a, b),
}


@pytest.mark.claim("subclasses.lowest-subclass-wins")
# Issue 29: every layout with a dimension, every dtype family (bool beside the
# arithmetic dtypes: a + b of bool tensors is a logical or).
@domain_examples(dtypes=(torch.bool, *ARITHMETIC), where=_has_dims, op="add", order="child-first")
@given(
    spec=tensor_specs(dtype=ARITHMETIC, shape=shapes(min_dims=1)),
    op=st.sampled_from(sorted(_BINARY)),
    order=st.sampled_from(["parent-first", "child-first", "unrelated"]),
)
def test_lowest_subclass_wins(device, spec, op, order):
    """Kills: a dispatch that takes the first operand's type (or the
    parent's), or that combines unrelated subclasses instead of refusing."""
    parent, child = _sub(spec, device), _sub(spec, device, SubTensorChild)
    fn = _BINARY[op]
    evidence.features(form=op)
    if order == "unrelated":
        other = _sub(spec, device, OtherSubTensor)
        needle = "unsupported operand" if op == "add" else "__torch_function__"
        with raises_with(TypeError, needle):
            fn(parent, other)
        return
    args = (parent, child) if order == "parent-first" else (child, parent)
    out = fn(*args)
    assert type(out) is SubTensorChild, f"{op} ({order}) gave {type(out).__name__}"


#: Non-view ops whose TF result is an alias of the plain result.
_NON_VIEW = {
    "clone": lambda x: x.clone(),
    "mul": lambda x: x * 1,
    "sum": lambda x: x.sum(),
    "neg": lambda x: -x,
}


@pytest.mark.claim("subclasses.results-are-alias-views")
@pytest.mark.observes("clone")
@domain_examples(dtypes=DIFFERENTIABLE, op="clone", requires_grad=False)  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    op=st.sampled_from(sorted(_NON_VIEW)),
    requires_grad=st.booleans(),
)
def test_subclass_results_are_alias_views(device, spec, op, requires_grad):
    """Kills: a __torch_function__ that builds subclass results some other
    way (a plain re-wrap without a view), so _is_view/_base/AliasBackward0
    and the detach_ refusal change."""
    s = _sub(spec, device).requires_grad_(requires_grad)
    out = _NON_VIEW[op](s)
    evidence.features(form=op)
    assert out._is_view(), f"the SubTensor result of {op} is not a view"
    assert type(out._base) is torch.Tensor, f"its _base is a {type(out._base).__name__}"
    if requires_grad:
        assert out.grad_fn is not None and out.grad_fn.name() == "AliasBackward0", (
            f"the SubTensor result of {op} has grad_fn {out.grad_fn}"
        )
    with raises_with(RuntimeError, "Can't detach views in-place"):
        out.detach_()


_VIEW_OPS = {
    "view": lambda x: x.view(x.shape),
    "reshape": lambda x: x.reshape(x.shape),
    "transpose": lambda x: x.transpose(0, -1) if x.dim() else x.view(()),
    "slice": lambda x: x[1:] if x.dim() else x[...],
    "select": lambda x: x.select(0, 0) if x.dim() and x.shape[0] else x[...],
    "unsqueeze": lambda x: x.unsqueeze(0),
    "expand": lambda x: x.expand(2, *x.shape),
}


@pytest.mark.claim("subclasses.views-share-storage-and-version")
@grid_examples(op="view", direction="into-view")
@given(
    spec=tensor_specs(values="all"),
    op=st.sampled_from(sorted(_VIEW_OPS)),
    direction=st.sampled_from(["into-view", "from-view"]),
)
def test_views_of_subclass_share_storage_and_version(device, spec, op, direction):
    """Kills: a view of a subclass instance that copies (for some dtype or
    view op), or that gets its own version counter."""
    s = _sub(spec, device)
    v = _VIEW_OPS[op](s)
    evidence.features(form=op)
    assert type(v) is SubTensor, f"{op} of a SubTensor gave {type(v).__name__}"
    assert shares_storage(v, s), f"{op} of a SubTensor does not share its storage"
    assert type(v._base) is torch.Tensor and v._base is not s, "the view's _base is not plain"
    assert shares_version_counter(v, s), f"{op} of a SubTensor has its own version counter"
    if v.numel():
        # The same view taken of a plain alias of s: its first element is v's.
        plain = _VIEW_OPS[op](s.as_subclass(torch.Tensor))
        ok = writes_visible(v, plain) if direction == "from-view" else writes_visible(plain, v)
        assert ok, f"a write {direction} is not seen through {op}"


def _numpy_ok(dtype: torch.dtype) -> bool:
    return dtype != torch.bfloat16


@pytest.mark.claim("subclasses.type-dropped-at-boundaries")
@pytest.mark.observes("backward", "numpy", "tensor")
@_examples(dict(spec=_grid_spec(dt), boundary="from_dlpack") for dt in ALL_DTYPES)
@domain_examples(boundary="torch.tensor")  # issue 29: every layout and dtype family
@given(
    spec=tensor_specs(values="all"),
    boundary=st.sampled_from(["torch.tensor", "from_dlpack", "from_numpy", "grad"]),
)
def test_subclass_type_dropped_at_boundaries(device, spec, boundary):
    """Kills: a torch whose constructors from foreign objects (or the
    autograd engine's .grad) keep the subclass type, or that share where
    they copy and copy where they share."""
    if boundary == "from_numpy" and (not _numpy_ok(spec.dtype) or device != "cpu"):
        # .numpy() exists for CPU tensors only (a CUDA tensor raises TypeError)
        boundary = "from_dlpack"
    if boundary == "grad" and spec.dtype not in DIFFERENTIABLE:
        boundary = "torch.tensor"
    evidence.features(form=boundary)
    if boundary == "grad":
        s = _sub(spec, device).requires_grad_()
        y = s * 1
        (y.real if y.is_complex() else y).sum().backward()
        assert type(s.grad) is torch.Tensor, f".grad of a SubTensor is a {type(s.grad).__name__}"
        return
    s = _sub(spec, device)
    if boundary == "torch.tensor":
        with capture_warnings() as caught:
            out = torch.tensor(s)
        assert any("copy construct" in str(w.message) for w in caught), "no copy-construct warning"
        assert s.untyped_storage().nbytes() == 0 or not shares_storage(out, s), "it shares"
    elif boundary == "from_dlpack":
        out = torch.from_dlpack(s)
    else:
        out = torch.from_numpy(s.numpy())
    assert type(out) is torch.Tensor, f"{boundary} of a SubTensor gave {type(out).__name__}"
    assert_same_bits(out, _plain(spec, device), f"{boundary} keeps the values")
    if boundary != "torch.tensor" and s.numel():
        assert out.data_ptr() == s.data_ptr(), f"{boundary} of a SubTensor does not share memory"


#: dtypes whose *plain* tensors pickle.dumps cannot serialize on torch 2.13
#: (AttributeError: UntypedStorage has no attribute 'dtype'): not a subclass
#: matter, so the pickle half of the claim skips them (the serialization area's subject).
_UNPICKLABLE = tuple(getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n))


@pytest.mark.claim("subclasses.deepcopy-needs-new-empty")
@_examples(dict(spec=_grid_spec(dt), kind="SubTensor") for dt in ALL_DTYPES)
# Tensor.__deepcopy__ builds its copy with detach() (torch/_tensor.py).
@pytest.mark.observes("detach")
@domain_examples(kind="SubTensor")  # issue 29: every layout and dtype family
@given(
    spec=tensor_specs(values="all"),
    kind=st.sampled_from(["SubTensor", "SubTensorChild", "Parameter", "SubWithNewEmpty"]),
)
def test_deepcopy_of_subclass_needs_new_empty(device, spec, kind):
    """Kills: a deepcopy that silently falls back to another copy for some
    subclasses or dtypes (or refuses one with new_empty), or a pickle round
    trip that loses the type or values."""
    cls = {"SubTensor": SubTensor, "SubTensorChild": SubTensorChild, "Parameter": SubTensor,
           "SubWithNewEmpty": SubWithNewEmpty}[kind]  # fmt: skip
    s = _sub(spec, device, cls)
    if kind == "Parameter":
        s = torch.nn.Parameter(s, requires_grad=False)
    evidence.features(form=kind)
    if spec.dtype not in _UNPICKLABLE:
        again = pickle.loads(pickle.dumps(s))
        assert type(again) is type(s), f"pickle turned a {kind} into a {type(again).__name__}"
        assert_same_bits(
            again.as_subclass(torch.Tensor), _plain(spec, device), "pickle keeps values"
        )
    if s.numel() == 0:  # data_ptr() is 0: deepcopy takes it for a wrapper subclass
        with raises_with(RuntimeError, "for wrapper subclasses only works for subclass types"):
            copy.deepcopy(s)
        return
    if kind != "SubWithNewEmpty":
        with raises_with(RuntimeError, "only works for subclass types that implement new_empty()"):
            copy.deepcopy(s)
        return
    c = copy.deepcopy(s)
    assert type(c) is SubWithNewEmpty, f"deepcopy gave a {type(c).__name__}"
    assert c.untyped_storage().nbytes() == 0 or not shares_storage(c, s), "deepcopy shares memory"
    assert_same_bits(c.as_subclass(torch.Tensor), _plain(spec, device), "deepcopy keeps values")


@pytest.mark.claim("subclasses.parameter-of-subclass")
@pytest.mark.observes("clone", "detach")
@domain_examples(kind="SubTensor", requires_grad=False)  # issue 29: every layout and family
@given(
    spec=tensor_specs(),
    kind=st.sampled_from(["SubTensor", "corrected", "plain"]),
    requires_grad=st.booleans(),
)
def test_parameter_of_subclass_instance(device, spec, kind, requires_grad):
    """Kills: a Parameter constructor that loses the subclass type, the
    parameter flag (for frozen or some subclasses), requires_grad or the
    shared data, or that marks derived tensors as Parameters."""
    requires_grad = requires_grad and spec.dtype in DIFFERENTIABLE
    x = _sub(spec, device) if kind == "SubTensor" else _wrapper(kind, spec.build(device))
    evidence.features(form=kind, requires_grad=requires_grad)
    p = torch.nn.Parameter(x, requires_grad=requires_grad)
    assert type(p) is type(x), f"Parameter of a {type(x).__name__} is a {type(p).__name__}"
    assert isinstance(p, torch.nn.Parameter), "isinstance(p, nn.Parameter) is False"
    assert p.requires_grad == requires_grad, "the Parameter's requires_grad is not the requested"
    inner = (lambda t: t) if kind == "SubTensor" else (lambda t: t.elem)
    assert shares_storage(inner(p), inner(x)), "the Parameter does not share the data"
    m = torch.nn.Module()
    m.p = p
    assert dict(m.named_parameters()).get("p") is p, "a Module did not register it"
    for name, derived in (("detach", p.detach()), ("clone", p.clone()), ("view", p.view(p.shape))):
        assert not isinstance(derived, torch.nn.Parameter), f"p.{name}() is a Parameter"


# ------------------------------------------------------- __torch_dispatch__

#: Ops on a wrapper (or on a plain tensor, for the expected result).
_WRAPPER_OPS = {
    "clone": (ALL_DTYPES, lambda x: x.clone()),
    "detach": (ALL_DTYPES, lambda x: x.detach()),
    ".data": (ALL_DTYPES, lambda x: x.data),
    "to-same-dtype": (ALL_DTYPES, lambda x: x.to(x.dtype)),
    "contiguous": (ALL_DTYPES, lambda x: x.contiguous()),
    "add": (ARITHMETIC, lambda x: x + 1),
    **{k: (ALL_DTYPES, f) for k, f in _VIEW_OPS.items() if k != "reshape"},
}


def _product_strides(t: torch.Tensor) -> tuple[int, ...]:
    """Stride ``i`` = the product of the sizes after dimension ``i``: row-major strides
    for a non-empty shape, and what torch 2.2's ``set_`` (without strides) gives any
    shape, a zero-size one included (``(3, 0)`` -> ``(0, 1)``)."""
    return tuple(math.prod(t.shape[i + 1 :]) for i in range(t.dim()))


def _wrapper_specs():
    return tensor_specs(values="all")


@pytest.mark.claim("subclasses.wrapper-type-and-inner-aliasing")
@pytest.mark.observes("clone", "detach", "to")
@_examples(
    dict(spec=_grid_spec(dt, layout), kind="plain", op=op)
    for dt in ALL_DTYPES
    for layout, op in (("contiguous", "detach"), ("stepped", "slice"))
)
# Issue 29: every layout and dtype family of the inner tensor, with and
# without return_and_correct_aliasing, through an aliasing op and a copying one.
@domain_examples(kind="plain", op="detach")
@domain_examples(kind="corrected", op="slice")
@domain_examples(kind="plain", op="clone")
@given(
    spec=_wrapper_specs(),
    kind=st.sampled_from(sorted(WRAPPERS)),
    op=st.sampled_from(sorted(_WRAPPER_OPS)),
)
def test_wrapper_ops_type_and_inner_aliasing(device, spec, kind, op):
    """Expected: the same op on a plain build of the spec says whether the
    result aliases (shares storage) and what its values are.

    Kills: a wrapper op path that copies the inner tensor where the plain op
    aliases (detach, a view op, for some dtype), aliases where it copies,
    or whose outer metadata disagrees with its inner tensor."""
    if spec.dtype not in _WRAPPER_OPS[op][0]:
        op = "clone"
    fn = _WRAPPER_OPS[op][1]
    evidence.features(form=op, kind=kind)
    w = _wrapper(kind, spec.build(device))
    plain = spec.build(device)
    want = fn(plain)
    # torch 2.2's return_and_correct_aliasing gives the wrapper of a view op's result
    # the strides set_ gives its shape: a region feature of the plain op's result (the
    # reference), never of the wrapper's.
    evidence.features(plain_result_off_product_strides=want.stride() != _product_strides(want))
    out = fn(w)
    assert type(out) is type(w), f"{op} of a wrapper gave {type(out).__name__}"
    alias = plain.untyped_storage().nbytes() > 0 and shares_storage(want, plain)
    got_alias = w.elem.untyped_storage().nbytes() > 0 and shares_storage(out.elem, w.elem)
    assert got_alias == alias, (
        f"{op} of a wrapper {'copies' if alias else 'aliases'} the inner tensor; "
        f"the plain op {'aliases' if alias else 'copies'}"
    )
    assert_same_bits(out.elem, want, f"{op} of a wrapper keeps the plain op's values")
    meta = (tuple(out.shape), out.stride(), out.storage_offset())
    inner = (tuple(out.elem.shape), out.elem.stride(), out.elem.storage_offset())
    assert meta == inner, f"{op}: wrapper metadata {meta} differs from its inner tensor's {inner}"


@pytest.mark.claim("subclasses.wrapper-outer-views-share-version")
@domain_examples(where=not_expanded, kind="plain", op="view", through="view")  # issue 29
@given(
    spec=tensor_specs(views=NON_OVERLAPPING_VIEWS),
    kind=st.sampled_from(sorted(WRAPPERS)),
    op=st.sampled_from(sorted(k for k in _VIEW_OPS if k != "reshape")),
    through=st.sampled_from(["view", "base"]),
)
def test_wrapper_views_share_outer_version(device, spec, kind, op, through):
    """Kills: a view of a wrapper that autograd does not track as a view of
    it (new version counter, no _base), or in-place ops that return a new
    wrapper."""
    w = _wrapper(kind, spec.build(device))
    v = _VIEW_OPS[op](w)
    evidence.features(form=op)
    if v is w:
        return
    assert v._is_view() and v._base is w, f"{op} of a wrapper is not an autograd view of it"
    assert shares_version_counter(v, w), f"{op} of a wrapper has its own version counter"
    target, other = (v, w) if through == "view" else (w, v)
    before = other._version
    if op != "expand" or through == "base":
        assert target.zero_() is target, "an in-place op on a wrapper returned another object"
        assert other._version > before, "an in-place op did not bump the other's version"


def _inner_view_case(spec, device, kind, op):
    w = _wrapper(kind, spec.build(device))
    v = _VIEW_OPS[op](w)
    evidence.features(form=op)
    return w, v


@pytest.mark.claim("subclasses.dispatch-inner-views-share-version")
@_examples(dict(spec=_grid_spec(dt), kind="plain", op="slice") for dt in ALL_DTYPES)
@domain_examples(where=_two_per_side, kind="plain", op="slice")  # issue 29
@given(
    spec=tensor_specs(shape=shapes(min_dims=1, min_side=2)),
    kind=st.sampled_from(sorted(WRAPPERS)),
    op=st.sampled_from(["view", "transpose", "slice", "select", "unsqueeze", "expand"]),
)
def test_dispatch_inner_views_share_version(device, spec, kind, op):
    """Issue 96319 as users expect it (recorded in expectations, pinned by
    ``subclasses.dispatch-inner-views-unlinked``).

    Kills: inner views made in __torch_dispatch__ that copy the inner
    tensor (checked first, so such a torch fails differently)."""
    w, v = _inner_view_case(spec, device, kind, op)
    assert shares_storage(v.elem, w.elem), f"the inner result of {op} does not share storage"
    assert shares_version_counter(v.elem, w.elem), (
        f"the inner result of {op} does not share the version counter"
    )
    assert v.elem._is_view(), f"the inner result of {op} is not tracked as a view"


@pytest.mark.claim("subclasses.dispatch-inner-views-unlinked")
@_examples(dict(spec=_grid_spec(dt), kind="plain", op="slice") for dt in ALL_DTYPES)
@domain_examples(where=_two_per_side, kind="plain", op="slice")  # issue 29
@given(
    spec=tensor_specs(shape=shapes(min_dims=1, min_side=2)),
    kind=st.sampled_from(sorted(WRAPPERS)),
    op=st.sampled_from(["view", "transpose", "slice", "select", "unsqueeze", "expand"]),
)
def test_dispatch_inner_views_are_unlinked(device, spec, kind, op):
    """Pins torch 2.13 (issue 96319, open).

    Kills: a change in how views made inside __torch_dispatch__ are
    tracked (a fix links them), or inner views that copy."""
    w, v = _inner_view_case(spec, device, kind, op)
    assert shares_storage(v.elem, w.elem), f"the inner result of {op} does not share storage"
    assert not v.elem._is_view() and v.elem._base is None, f"the inner {op} is now tracked"
    assert not shares_version_counter(v.elem, w.elem), f"the inner {op} now shares the version"


@pytest.mark.claim("subclasses.wrapper-autograd-at-outer-level")
@pytest.mark.observes("backward", "detach")
@_examples(dict(spec=_grid_spec(dt), kind="plain", op="mul") for dt in FLOATING)
@domain_examples(dtypes=FLOATING, where=not_expanded, kind="plain", op="mul")  # issue 29
@given(
    spec=tensor_specs(dtype=FLOATING, views=NON_OVERLAPPING_VIEWS),
    kind=st.sampled_from(sorted(WRAPPERS)),
    op=st.sampled_from(["mul", "view", "slice"]),
)
def test_wrapper_autograd_at_outer_level(device, spec, kind, op):
    """Expected gradient: d(sum(2 * f(w)))/dw, i.e. 2 where f keeps the
    element and 0 elsewhere, built from a plain tensor of ones through the
    same view.

    Kills: autograd that tracks the inner tensor instead of the wrapper, or
    a .grad of another type (a plain tensor for some dtype)."""
    w = _wrapper(kind, spec.build(device)).requires_grad_()
    assert w.requires_grad and w.is_leaf, "requires_grad_() did not make the wrapper a leaf"
    assert not w.elem.requires_grad, "the inner tensor requires grad"
    f = {"mul": lambda x: x * 1, "view": lambda x: x.view(x.shape), "slice": _VIEW_OPS["slice"]}[op]
    out = f(w) * 2
    assert type(out) is type(w) and out.grad_fn is not None, f"{op} of a wrapper has no grad_fn"
    out.sum().backward()
    assert type(w.grad) is type(w), f".grad of a wrapper is a {type(w.grad).__name__}"
    ones = torch.zeros_like(spec.build(device))
    (ones if op == "mul" else f(ones)).fill_(2)
    assert_same_bits(w.grad.elem, ones, "the wrapper's .grad holds the gradient")
    d = w.detach()
    assert type(d) is type(w) and not d.requires_grad and d.is_leaf, "detach() of a wrapper"
    assert shares_storage(d.elem, w.elem), "detach() of a wrapper copies the inner tensor"


@pytest.mark.claim("subclasses.copy-across-subclass-boundary")
@pytest.mark.observes("copy_", "detach")
@_examples(
    dict(spec=_grid_spec(dt), direction=d)
    for dt in ALL_DTYPES
    for d in ("plain<-wrapper", "plain<-sub")
)
# Issue 29: every layout (but expanded) and dtype family, in each direction.
@domain_examples(where=not_expanded, direction="plain<-sub")
@domain_examples(where=not_expanded, direction="sub<-plain")
@domain_examples(where=not_expanded, direction="plain<-wrapper")
@domain_examples(where=not_expanded, direction="wrapper<-plain")
@domain_examples(where=not_expanded, direction="detached-wrapper<-plain")
@given(
    spec=tensor_specs(values="all", views=NON_OVERLAPPING_VIEWS),
    direction=st.sampled_from(
        ["plain<-sub", "sub<-plain", "plain<-wrapper", "wrapper<-plain", "detached-wrapper<-plain"]
    ),
)
def test_copy_across_subclass_boundary(device, spec, direction):
    """Expected values: another build of the spec (the source's values).

    Kills: a copy_ across the boundary that writes the wrong values or into
    the wrong memory, or returns another object than the convention says."""
    src_values = spec.build(device)
    dst_plain = torch.zeros_like(spec.build(device))
    evidence.features(form=direction)
    if direction == "plain<-sub":
        out = dst_plain.copy_(_sub(spec, device))
        assert type(out) is SubTensor and out is not dst_plain, "plain.copy_(sub) convention"
        assert out.data_ptr() == dst_plain.data_ptr(), "plain.copy_(sub) returned other memory"
        written = dst_plain
    elif direction == "sub<-plain":
        s = dst_plain.as_subclass(SubTensor)
        assert s.copy_(spec.build(device)) is s, "sub.copy_(plain) did not return the subclass"
        written = s.as_subclass(torch.Tensor)
    elif direction == "plain<-wrapper":
        out = dst_plain.copy_(PlainWrapper(spec.build(device)))
        assert out is dst_plain, "plain.copy_(wrapper) did not return the plain destination"
        written = dst_plain
    else:
        w = PlainWrapper(dst_plain)
        target = w if direction == "wrapper<-plain" else w.detach()
        assert target.copy_(spec.build(device)) is target, "wrapper.copy_ returned another object"
        written = w.elem
    assert_same_bits(written, src_values, f"{direction}: copy_ writes the source's values")
