"""Mutants of the ``subclasses`` area (__torch_function__ subclasses and
__torch_dispatch__ wrappers); claims in ``conformance/claims/subclasses.toml``,
tests in ``conformance/test_subclasses.py``.

The ``__torch_function__`` mutants replace the default
``torch.Tensor.__torch_function__`` (inherited by subclasses that do not
override it). The wrapper mutants recognise a wrapper by its Python dispatch
key or its ``__tensor_flatten__`` (plain tensors have neither).

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, domain_mutants
from conformance.mutants.base import Mutant
from conformance.mutants.patching import torch, wrap


def _wrapper_subclass():
    """A wrapper tensor subclass (``__torch_dispatch__`` runs each op on the
    wrapped ``elem`` and wraps tensor results): the witnesses' input."""
    from torch.utils._pytree import tree_map

    class W(torch.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype)
            r.elem = elem
            return r

        def __tensor_flatten__(self):
            return ["elem"], None

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            out = func(
                *tree_map(lambda t: t.elem if isinstance(t, W) else t, args),
                **tree_map(lambda t: t.elem if isinstance(t, W) else t, kwargs or {}),
            )
            return tree_map(lambda t: W(t) if isinstance(t, torch.Tensor) else t, out)

    return W


def _patch_tf_subclass_lost_on_views():
    _tf = torch.Tensor.__torch_function__.__func__

    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = _tf(cls, func, types, args, kwargs)
        if (
            isinstance(out, torch.Tensor)
            and type(out) is not torch.Tensor
            and getattr(func, "__name__", "") in ("view", "transpose", "__getitem__")
        ):
            with torch._C.DisableTorchFunctionSubclass():
                out = out.as_subclass(torch.Tensor)
        return out

    torch.Tensor.__torch_function__ = classmethod(__torch_function__)


def _witness_tf_subclass_lost_on_views():
    class S(torch.Tensor):
        pass

    s = torch.zeros(2, 3).as_subclass(S)
    assert type(s.view(6)) is S and type(s[0]) is S


def _patch_tf_first_operand_type_wins():
    from torch.utils._pytree import tree_leaves

    _tf = torch.Tensor.__torch_function__.__func__

    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = _tf(cls, func, types, args, kwargs)
        first = next(
            (a for a in tree_leaves((args, kwargs or {})) if isinstance(a, torch.Tensor)), None
        )
        if (
            isinstance(out, torch.Tensor)
            and first is not None
            and type(first) is not torch.Tensor
            and type(out) is not type(first)
            and isinstance(out, type(first))
        ):
            with torch._C.DisableTorchFunctionSubclass():
                out = out.as_subclass(type(first))
        return out

    torch.Tensor.__torch_function__ = classmethod(__torch_function__)


def _witness_tf_first_operand_type_wins():
    class S(torch.Tensor):
        pass

    class C(S):
        pass

    out = torch.ones(2).as_subclass(S) + torch.ones(2).as_subclass(C)
    assert type(out) is C


def _patch_tf_subclass_clone_not_aliased():
    _tf = torch.Tensor.__torch_function__.__func__

    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "clone":
            with torch._C.DisableTorchFunctionSubclass():
                ret = func(*args, **(kwargs or {}))
            return torch.Tensor._make_subclass(cls, ret, ret.requires_grad)
        return _tf(cls, func, types, args, kwargs)

    torch.Tensor.__torch_function__ = classmethod(__torch_function__)


def _witness_tf_subclass_clone_not_aliased():
    class S(torch.Tensor):
        pass

    assert torch.ones(2).as_subclass(S).clone()._is_view()


def _patch_tf_subclass_view_copies_int():
    _tf = torch.Tensor.__torch_function__.__func__
    _VIEWS = ("view", "reshape", "transpose", "__getitem__", "select", "unsqueeze", "expand")

    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = _tf(cls, func, types, args, kwargs)
        if (
            isinstance(out, torch.Tensor)
            and getattr(func, "__name__", "") in _VIEWS
            and not (out.dtype.is_floating_point or out.dtype.is_complex)
            and out.dtype != torch.bool
        ):
            with torch._C.DisableTorchFunctionSubclass():
                out = out.clone().as_subclass(cls)
        return out

    torch.Tensor.__torch_function__ = classmethod(__torch_function__)


def _witness_tf_subclass_view_copies_int():
    class S(torch.Tensor):
        pass

    s = torch.arange(6).as_subclass(S)
    assert s.view(2, 3).data_ptr() == s.data_ptr()


def _from_dlpack_keeps_subclass_int64(from_dlpack, ext, *args, **kwargs):
    import torch.utils.dlpack

    out = from_dlpack(ext, *args, **kwargs)
    if (
        isinstance(ext, torch.Tensor)
        and type(ext) is not torch.Tensor
        and not isinstance(ext, torch.nn.Parameter)
        and ext.dtype == torch.int64
    ):
        return out.as_subclass(type(ext))
    return out


def _witness_from_dlpack_keeps_subclass_int64():
    class S(torch.Tensor):
        pass

    assert type(torch.from_dlpack(torch.arange(3).as_subclass(S))) is torch.Tensor


def _deepcopy_subclass_falls_back_to_clone_f16(deepcopy, self, memo):
    if (
        type(self) is not torch.Tensor
        and self.dtype == torch.float16
        and not torch._C._dispatch_keys(self).has(torch._C.DispatchKey.Python)
    ):
        return self.clone()
    return deepcopy(self, memo)


def _witness_deepcopy_subclass_falls_back_to_clone_f16():
    import copy

    class S(torch.Tensor):
        pass

    try:
        copy.deepcopy(torch.ones(2, dtype=torch.float16).as_subclass(S))
        refused = False
    except RuntimeError:
        refused = True
    assert refused


def _patch_parameter_subclass_loses_flag_when_frozen():
    _new = torch.nn.Parameter.__new__

    def __new__(cls, data=None, requires_grad=True):
        p = _new(cls, data, requires_grad)
        if (
            data is not None
            and type(data) not in (torch.Tensor, torch.nn.Parameter)
            and not requires_grad
        ):
            p._is_param = False
        return p

    torch.nn.Parameter.__new__ = staticmethod(__new__)


def _witness_parameter_subclass_loses_flag_when_frozen():
    class S(torch.Tensor):
        pass

    p = torch.nn.Parameter(torch.ones(2).as_subclass(S), requires_grad=False)
    assert isinstance(p, torch.nn.Parameter)


def _wrapper_detach_copies_inner_f64(detach, self):
    out = detach(self)
    if (
        type(self) is not torch.Tensor
        and self.dtype == torch.float64
        and torch._C._dispatch_keys(self).has(torch._C.DispatchKey.Python)
    ):
        return out.clone()
    return out


def _witness_wrapper_detach_copies_inner_f64():
    W = _wrapper_subclass()
    w = W(torch.zeros(3, dtype=torch.float64))
    assert w.detach().elem.data_ptr() == w.elem.data_ptr()


def _wrapper_view_inner_copies_f16(call, self, *args, **kwargs):
    import torch._ops

    out = call(self, *args, **kwargs)
    if self.is_view and type(out) is torch.Tensor and out.dtype == torch.float16:
        return out.clone()
    return out


def _witness_wrapper_view_inner_copies_f16():
    x = torch.zeros(4, dtype=torch.float16)
    assert torch.ops.aten.slice.Tensor(x, 0, 1).data_ptr() == x.data_ptr() + 2


def _wrapper_view_unshares_version_slices(getitem, self, key):
    out = getitem(self, key)
    if type(out) is not torch.Tensor and hasattr(out, "__tensor_flatten__") and out._is_view():
        names, ctx = out.__tensor_flatten__()
        return type(out).__tensor_unflatten__(
            {n: getattr(out, n) for n in names}, ctx, out.shape, out.stride()
        )
    return out


def _witness_wrapper_view_unshares_version_slices():
    from torch.utils._pytree import tree_map

    class W(torch.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = torch.Tensor._make_wrapper_subclass(
                cls,
                elem.size(),
                strides=elem.stride(),
                storage_offset=elem.storage_offset(),
                dtype=elem.dtype,
            )
            r.elem = elem
            return r

        def __tensor_flatten__(self):
            return ["elem"], None

        @classmethod
        def __tensor_unflatten__(cls, inner, meta, size, stride):
            return cls(inner["elem"])

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            out = func(
                *tree_map(lambda t: t.elem if isinstance(t, W) else t, args), **(kwargs or {})
            )
            return tree_map(lambda t: W(t) if isinstance(t, torch.Tensor) else t, out)

    w = W(torch.zeros(3))
    assert w[1:]._base is w


def _patch_wrapper_grad_unwrapped_f64():
    _grad = torch._C.TensorBase.grad

    def _get(self):
        g = _grad.__get__(self)
        if (
            g is not None
            and type(g) is not torch.Tensor
            and hasattr(g, "__tensor_flatten__")
            and g.dtype == torch.float64
        ):
            names, _ = g.__tensor_flatten__()
            return getattr(g, names[0])
        return g

    torch.Tensor.grad = property(_get, _grad.__set__, _grad.__delete__)


def _witness_wrapper_grad_unwrapped_f64():
    W = _wrapper_subclass()
    w = W(torch.ones(3, dtype=torch.float64)).requires_grad_()
    (w * 2).sum().backward()
    assert type(w.grad) is W


def _copy_from_wrapper_writes_zeros_f32(copy, self, src, non_blocking=False):
    if (
        type(self) is torch.Tensor
        and type(src) is not torch.Tensor
        and hasattr(src, "__tensor_flatten__")
        and src.dtype == torch.float32
    ):
        return self.zero_()
    return copy(self, src, non_blocking)


def _witness_copy_from_wrapper_writes_zeros_f32():
    W = _wrapper_subclass()
    d = torch.zeros(3)
    d.copy_(W(torch.ones(3)))
    assert d.tolist() == [1.0, 1.0, 1.0]


def _torch_function_drops_type(hit):
    _orig_tf = torch.Tensor.__torch_function__.__func__

    def __torch_function__(cls, func, types, args=(), kwargs=None):
        ret = _orig_tf(cls, func, types, args, kwargs)
        first = args[0] if args else None
        if (
            cls is not torch.Tensor
            and isinstance(first, torch.Tensor)
            and isinstance(ret, cls)
            and hit(first)
        ):
            with torch._C.DisableTorchFunctionSubclass():
                return ret.as_subclass(torch.Tensor)
        return ret

    torch.Tensor.__torch_function__ = classmethod(__torch_function__)


def _torch_function_drops_type_witness(make):
    class S(torch.Tensor):
        pass

    s = make().as_subclass(S)
    assert type(s.view(s.shape)) is S


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="tf-subclass-lost-on-views",
        description="the default __torch_function__ returns plain Tensors for view, transpose and indexing results (other ops keep the subclass)",
        claims=(
            "subclasses.torch-function-type-preserved",
            "subclasses.views-share-storage-and-version",
        ),
        region="view, transpose and indexing of TF-subclass instances",
        family="subclass",
        patch=_patch_tf_subclass_lost_on_views,
        witness=_witness_tf_subclass_lost_on_views,
    ),
    Mutant(
        name="tf-first-operand-type-wins",
        description="for operands of a TF subclass and its own subclass, the result takes the first tensor operand's type instead of the lowest one",
        claims=("subclasses.lowest-subclass-wins",),
        region="ops whose first tensor operand is the parent class",
        family="relation",
        patch=_patch_tf_first_operand_type_wins,
        witness=_witness_tf_first_operand_type_wins,
    ),
    Mutant(
        name="tf-subclass-clone-not-aliased",
        description="clone() of a TF-subclass instance wraps the plain clone with _make_subclass (a detached non-view) instead of as_subclass",
        claims=("subclasses.results-are-alias-views",),
        region="clone of TF-subclass instances",
        family="subclass",
        patch=_patch_tf_subclass_clone_not_aliased,
        witness=_witness_tf_subclass_clone_not_aliased,
    ),
    Mutant(
        name="tf-subclass-view-copies-int",
        description="view ops of integral TF-subclass instances return copies (float, complex and bool views still alias)",
        claims=("subclasses.views-share-storage-and-version",),
        region="views of integral TF-subclass instances",
        family="dtype",
        patch=_patch_tf_subclass_view_copies_int,
        witness=_witness_tf_subclass_view_copies_int,
    ),
    Mutant(
        name="from-dlpack-keeps-subclass-int64",
        description="torch.from_dlpack of an int64 TF-subclass instance returns the subclass (other dtypes give plain tensors)",
        claims=("subclasses.type-dropped-at-boundaries",),
        region="int64 TF-subclass instances through from_dlpack",
        family="dtype",
        patch=wrap(
            "torch.from_dlpack",
            _from_dlpack_keeps_subclass_int64,
            also=("torch.utils.dlpack.from_dlpack",),
        ),
        witness=_witness_from_dlpack_keeps_subclass_int64,
    ),
    Mutant(
        name="deepcopy-subclass-falls-back-to-clone-f16",
        description="copy.deepcopy of a float16 TF-subclass instance silently returns clone() instead of refusing",
        claims=("subclasses.deepcopy-needs-new-empty",),
        region="float16 TF-subclass instances",
        family="dtype",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_subclass_falls_back_to_clone_f16),
        witness=_witness_deepcopy_subclass_falls_back_to_clone_f16,
    ),
    Mutant(
        name="parameter-subclass-loses-flag-when-frozen",
        description="nn.Parameter(x, requires_grad=False) of a subclass instance does not set the parameter flag (isinstance(p, Parameter) is False)",
        claims=("subclasses.parameter-of-subclass",),
        region="frozen Parameters of subclass instances",
        family="autograd",
        patch=_patch_parameter_subclass_loses_flag_when_frozen,
        witness=_witness_parameter_subclass_loses_flag_when_frozen,
    ),
    Mutant(
        name="wrapper-detach-copies-inner-f64",
        description="detach() of a float64 __torch_dispatch__ wrapper returns a clone (fresh inner tensor); plain tensors and other dtypes alias",
        claims=("subclasses.wrapper-type-and-inner-aliasing",),
        region="float64 wrapper subclasses",
        family="dtype",
        patch=wrap("torch.Tensor.detach", _wrapper_detach_copies_inner_f64, also=("torch.detach",)),
        witness=_witness_wrapper_detach_copies_inner_f64,
    ),
    Mutant(
        name="wrapper-view-inner-copies-f16",
        description="view ops called from Python (as __torch_dispatch__ does) return a copy for float16 tensors, so a wrapper's inner views stop aliasing",
        claims=(
            "subclasses.wrapper-type-and-inner-aliasing",
            "subclasses.dispatch-inner-views-share-version",
            "subclasses.dispatch-inner-views-unlinked",
        ),
        region="float16 view ops run inside __torch_dispatch__",
        family="dtype",
        patch=wrap("torch._ops.OpOverload.__call__", _wrapper_view_inner_copies_f16),
        witness=_witness_wrapper_view_inner_copies_f16,
    ),
    Mutant(
        name="wrapper-view-unshares-version-slices",
        description="indexing a __torch_dispatch__ wrapper returns a freshly built wrapper (not an autograd view: own version counter, no _base)",
        claims=("subclasses.wrapper-outer-views-share-version",),
        region="indexing (slicing) of wrapper subclasses",
        family="subclass",
        patch=wrap("torch.Tensor.__getitem__", _wrapper_view_unshares_version_slices),
        witness=_witness_wrapper_view_unshares_version_slices,
    ),
    Mutant(
        name="wrapper-grad-unwrapped-f64",
        description="Tensor.grad of a float64 wrapper leaf reads back the wrapper's inner plain tensor instead of the wrapper",
        claims=("subclasses.wrapper-autograd-at-outer-level",),
        region="float64 wrapper subclasses",
        family="dtype",
        patch=_patch_wrapper_grad_unwrapped_f64,
        witness=_witness_wrapper_grad_unwrapped_f64,
    ),
    Mutant(
        name="copy-from-wrapper-writes-zeros-f32",
        description="plain.copy_(wrapper) of a float32 wrapper source zero-fills the destination instead of copying the wrapper's values",
        claims=("subclasses.copy-across-subclass-boundary",),
        region="plain destinations with float32 wrapper sources",
        family="dtype",
        patch=wrap("torch.Tensor.copy_", _copy_from_wrapper_writes_zeros_f32),
        witness=_witness_copy_from_wrapper_writes_zeros_f32,
    ),
    # ---------------------------------------------- domain values (issue 29)
    *domain_mutants(
        prefix="torch-function-drops-type",
        claims=(
            "subclasses.torch-function-type-preserved",
            "subclasses.views-share-storage-and-version",
        ),
        what="the default Tensor.__torch_function__ returns plain Tensors (the subclass type dropped) for ops whose first argument is a subclass instance",
        patch=_torch_function_drops_type,
        witness=_torch_function_drops_type_witness,
        dims={
            "layout": LAYOUTS,
            "dtype_family": DTYPE_FAMILIES,
        },
    ),
)
