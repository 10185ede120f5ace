"""Mutants of the ``construct`` area (Tensor construction: torch.tensor, Tensor.new_tensor, torch.as_tensor, torch.asarray, torch.Tensor()); claims in ``conformance/claims/construct.toml``,
tests in ``conformance/test_construct.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, TENSOR_KINDS
from conformance.mutants.base import Mutant
from conformance.mutants.patching import refused, torch, wrap


def _tensor_shares(orig, data, *args, **kwargs):
    out = orig(data, *args, **kwargs)
    if isinstance(data, torch.Tensor) and out.dtype == data.dtype and out.device == data.device:
        alias = data.detach()
        if out.requires_grad:
            alias.requires_grad_(True)
        return alias
    return out


def _witness_tensor_shares():
    x = torch.arange(3.0)
    assert torch.tensor(x).data_ptr() != x.data_ptr()


def _new_tensor_shares_same_dtype(orig, self, data, *args, **kwargs):
    out = orig(self, data, *args, **kwargs)
    if isinstance(data, torch.Tensor) and data.dtype == out.dtype and data.device == out.device:
        alias = data.detach()
        if out.requires_grad:
            alias.requires_grad_(True)
        return alias
    return out


def _witness_new_tensor_shares_same_dtype():
    x = torch.arange(3.0)
    assert torch.zeros(1).new_tensor(x).data_ptr() != x.data_ptr()


def _as_tensor_copies(orig, data, *args, **kwargs):
    out = orig(data, *args, **kwargs)
    return out.clone() if isinstance(out, torch.Tensor) else out


def _witness_as_tensor_copies():
    x = torch.arange(3.0)
    assert torch.as_tensor(x) is x


def _as_tensor_explicit_dtype_copies(orig, data, dtype=None, device=None):
    out = orig(data, dtype=dtype, device=device)
    if isinstance(data, torch.Tensor) and dtype is not None and out is data:
        return data.clone()
    return out


def _witness_as_tensor_explicit_dtype_copies():
    x = torch.arange(3.0)
    assert torch.as_tensor(x, dtype=torch.float32) is x


def _as_tensor_convert_detaches(orig, data, dtype=None, device=None):
    out = orig(data, dtype=dtype, device=device)
    if isinstance(data, torch.Tensor) and out is not data and data.requires_grad:
        out = out.detach()
    return out


def _witness_as_tensor_convert_detaches():
    x = torch.ones(3, requires_grad=True)
    assert torch.as_tensor(x, dtype=torch.float64).grad_fn is not None


def _asarray_copy_true_ignored(orig, obj, *args, **kwargs):
    if (
        isinstance(obj, torch.Tensor)
        and kwargs.get("copy") is True
        and kwargs.get("dtype") in (None, obj.dtype)
        and kwargs.get("device") in (None, obj.device)
    ):
        out = obj.detach()
        if kwargs.get("requires_grad", obj.requires_grad):
            out.requires_grad_(True)
        return out
    return orig(obj, *args, **kwargs)


def _witness_asarray_copy_true_ignored():
    x = torch.arange(3.0)
    assert torch.asarray(x, copy=True).data_ptr() != x.data_ptr()


def _asarray_default_drops_grad(orig, obj, *args, **kwargs):
    if isinstance(obj, torch.Tensor) and obj.requires_grad and "requires_grad" not in kwargs:
        kwargs["requires_grad"] = False
    return orig(obj, *args, **kwargs)


def _witness_asarray_default_drops_grad():
    x = torch.ones(3, requires_grad=True) * 2
    assert torch.asarray(x).requires_grad


def _tensor_requires_grad_keeps_history(orig, data, *args, **kwargs):
    out = orig(data, *args, **kwargs)
    if (
        isinstance(data, torch.Tensor)
        and data.requires_grad
        and not args
        and kwargs == {"requires_grad": True}
    ):
        return data.clone()
    return out


def _witness_tensor_requires_grad_keeps_history():
    import warnings

    x = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = torch.tensor(x, requires_grad=True)
    assert c.is_leaf and c.grad_fn is None


def _patch_copy_construct_silent_for_integers():
    import warnings

    _tensor = torch.tensor
    _new_tensor = torch.Tensor.new_tensor

    def _silent(data):
        return isinstance(data, torch.Tensor) and not (
            data.is_floating_point() or data.is_complex()
        )

    def tensor(data, *args, **kwargs):
        if _silent(data):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _tensor(data, *args, **kwargs)
        return _tensor(data, *args, **kwargs)

    def new_tensor(self, data, *args, **kwargs):
        if _silent(data):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _new_tensor(self, data, *args, **kwargs)
        return _new_tensor(self, data, *args, **kwargs)

    torch.tensor = tensor
    torch.Tensor.new_tensor = new_tensor


def _witness_copy_construct_silent_for_integers():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.tensor(torch.arange(3))
    assert any("To copy construct from a tensor" in str(w.message) for w in caught)


def _tensor_keyword_only_call_is_empty(orig, *args, **kwargs):
    if not args and "data" not in kwargs and kwargs:
        return torch.empty(
            0,
            dtype=kwargs.get("dtype"),
            device=kwargs.get("device"),
            requires_grad=bool(kwargs.get("requires_grad")),
        )
    return orig(*args, **kwargs)


def _witness_tensor_keyword_only_call_is_empty():
    with refused(TypeError, "torch.tensor(device='cpu') without data did not raise"):
        torch.tensor(device="cpu")


def _patch_tensor_class_call_ignores_float64_default():
    _new = torch._C.TensorBase.__new__

    def __new__(cls, *args, **kwargs):
        if (
            cls is torch.Tensor
            and not args
            and not kwargs
            and torch.get_default_dtype() == torch.float64
        ):
            return torch.empty(0, dtype=torch.float32)
        return _new(cls, *args, **kwargs)

    torch.Tensor.__new__ = staticmethod(__new__)


def _witness_tensor_class_call_ignores_float64_default():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        dtype = torch.Tensor().dtype
    finally:
        torch.set_default_dtype(old)
    assert dtype == torch.float64


def _new_tensor_list_infers_dtype(orig, self, data, *args, **kwargs):
    if isinstance(data, (list, tuple)) and not args and "dtype" not in kwargs:
        return torch.tensor(
            data,
            device=kwargs.get("device", self.device),
            requires_grad=kwargs.get("requires_grad", False),
        )
    return orig(self, data, *args, **kwargs)


def _witness_new_tensor_list_infers_dtype():
    assert torch.zeros(1, dtype=torch.float16).new_tensor([1, 2]).dtype == torch.float16


def _asarray_copies_non_contiguous(orig, obj, *args, **kwargs):
    if isinstance(obj, torch.Tensor) and not args and not kwargs and not obj.is_contiguous():
        return obj.contiguous()
    return orig(obj, *args, **kwargs)


def _witness_asarray_copies_non_contiguous():
    x = torch.zeros(2, 3).t()
    assert torch.asarray(x).data_ptr() == x.data_ptr()


def _asarray_copy_false_copies_sequences(orig, obj, *args, **kwargs):
    if isinstance(obj, (list, tuple)) and kwargs.get("copy") is False:
        kwargs = {k: v for k, v in kwargs.items() if k != "copy"}
    return orig(obj, *args, **kwargs)


def _witness_asarray_copy_false_copies_sequences():
    with refused(ValueError, "asarray(list, copy=False) did not raise"):
        torch.asarray([1.0, 2.0], copy=False)


def _asarray_default_clears_leaf_flag(orig, obj, *args, **kwargs):
    if (
        isinstance(obj, torch.Tensor)
        and obj.is_leaf
        and obj.requires_grad
        and kwargs.get("requires_grad") is None
    ):
        kwargs = {**kwargs, "requires_grad": False}
    return orig(obj, *args, **kwargs)


def _witness_asarray_default_clears_leaf_flag():
    import warnings

    x = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = torch.asarray(x)
    assert b.requires_grad and x.requires_grad


def _patch_asarray_default_warns_every_nonleaf_call():
    import warnings

    _orig = torch.asarray
    _MSG = (
        "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
        "instead of False. Pass requires_grad=False explicitly to get the old behavior "
        "and silence this warning."
    )

    def asarray(obj, *args, **kwargs):
        if (
            isinstance(obj, torch.Tensor)
            and obj.requires_grad
            and not obj.is_leaf
            and kwargs.get("requires_grad") is None
        ):
            warnings.warn(_MSG, UserWarning, stacklevel=2)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _orig(obj, *args, **kwargs)
        return _orig(obj, *args, **kwargs)

    torch.asarray = asarray


def _witness_asarray_default_warns_every_nonleaf_call():
    import warnings

    y = torch.ones(3, requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.asarray(y)
        torch.asarray(y)
    hits = [w for w in caught if "now defaults to obj.requires_grad" in str(w.message)]
    assert len(hits) <= 1, f"{len(hits)} notices for two calls"


def _asarray_requires_grad_true_reroots_non_leaf(orig, obj, *args, **kwargs):
    if isinstance(obj, torch.Tensor) and not obj.is_leaf and kwargs.get("requires_grad") is True:
        return obj.detach().requires_grad_(True)
    return orig(obj, *args, **kwargs)


def _witness_asarray_requires_grad_true_reroots_non_leaf():
    y = torch.ones(3, requires_grad=True) * 2
    assert torch.asarray(y, requires_grad=True).grad_fn is y.grad_fn


def _asarray_requires_grad_false_aliases_leaf(orig, obj, *args, **kwargs):
    if (
        isinstance(obj, torch.Tensor)
        and obj.is_leaf
        and obj.requires_grad
        and kwargs.get("requires_grad") is False
        and not args
        and set(kwargs) == {"requires_grad"}
    ):
        return obj.detach()
    return orig(obj, *args, **kwargs)


def _witness_asarray_requires_grad_false_aliases_leaf():
    x = torch.ones(3, requires_grad=True)
    b = torch.asarray(x, requires_grad=False)
    assert b is x and not x.requires_grad


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="tensor-shares",
        description="torch.tensor(t) of a tensor returns an alias (detach) instead of a copy",
        claims=("construct.tensor-is-detach-clone",),
        patch=wrap("torch.tensor", _tensor_shares),
        witness=_witness_tensor_shares,
    ),
    Mutant(
        name="new-tensor-shares-same-dtype",
        description="x.new_tensor(t) aliases t when t already has x's dtype and device",
        claims=("construct.new-tensor-is-detach-clone",),
        region="tensor data of the receiver's dtype and device",
        family="relation",
        patch=wrap("torch.Tensor.new_tensor", _new_tensor_shares_same_dtype),
        witness=_witness_new_tensor_shares_same_dtype,
    ),
    Mutant(
        name="as-tensor-copies",
        description="torch.as_tensor always copies (tensor and ndarray inputs)",
        claims=("construct.as-tensor-identity",),
        patch=wrap("torch.as_tensor", _as_tensor_copies),
        witness=_witness_as_tensor_copies,
    ),
    Mutant(
        name="as-tensor-explicit-dtype-copies",
        description="torch.as_tensor(t, dtype=t.dtype) (explicit but unchanged dtype) copies; as_tensor(t) is fine",
        claims=("construct.as-tensor-identity",),
        region="as_tensor(t, dtype=t.dtype): explicit unchanged dtype",
        family="convention",
        patch=wrap("torch.as_tensor", _as_tensor_explicit_dtype_copies),
        witness=_witness_as_tensor_explicit_dtype_copies,
    ),
    Mutant(
        name="as-tensor-convert-detaches",
        description="torch.as_tensor(t, dtype=other) of a tensor requiring grad cuts the graph",
        claims=("construct.as-tensor-converts-with-history",),
        region="dtype conversion of a tensor that requires grad",
        family="autograd",
        patch=wrap("torch.as_tensor", _as_tensor_convert_detaches),
        witness=_witness_as_tensor_convert_detaches,
    ),
    Mutant(
        name="asarray-copy-true-ignored",
        description="torch.asarray(t, copy=True) returns an alias of t when no dtype/device conversion is needed",
        claims=("construct.asarray-copy-true-never-shares",),
        region="copy=True with no dtype/device conversion",
        family="convention",
        patch=wrap("torch.asarray", _asarray_copy_true_ignored),
        witness=_witness_asarray_copy_true_ignored,
    ),
    Mutant(
        name="asarray-default-drops-grad",
        description="torch.asarray(t) with requires_grad unspecified returns a detached alias (the pre-#170897 default)",
        claims=("construct.asarray-returns-same-object",),
        region="tensors requiring grad, requires_grad left unspecified",
        family="autograd",
        patch=wrap("torch.asarray", _asarray_default_drops_grad),
        witness=_witness_asarray_default_drops_grad,
    ),
    Mutant(
        name="tensor-requires-grad-keeps-history",
        description="torch.tensor(t, requires_grad=True) of a tensor t that requires grad returns t.clone(): a non-leaf in t's graph whose gradient flows back into t",
        claims=("construct.tensor-requires-grad-is-detach-clone-requires-grad",),
        region="tensor data that itself requires grad",
        family="autograd",
        patch=wrap("torch.tensor", _tensor_requires_grad_keeps_history),
        witness=_witness_tensor_requires_grad_keeps_history,
    ),
    Mutant(
        name="copy-construct-silent-for-integers",
        description="torch.tensor(t) and self.new_tensor(t) no longer warn 'To copy construct from a tensor...' when t is of an integral or bool dtype",
        claims=("construct.copy-construct-warns",),
        region="tensor data of integral or bool dtype",
        family="dtype",
        patch=_patch_copy_construct_silent_for_integers,
        witness=_witness_copy_construct_silent_for_integers,
    ),
    Mutant(
        name="tensor-keyword-only-call-is-empty",
        description="torch.tensor(device=..., dtype=...) with keyword arguments but no data returns an empty tensor (like torch.Tensor()) instead of raising TypeError",
        claims=("construct.tensor-requires-data",),
        region="keyword-only calls without data",
        family="convention",
        patch=wrap("torch.tensor", _tensor_keyword_only_call_is_empty),
        witness=_witness_tensor_keyword_only_call_is_empty,
    ),
    Mutant(
        name="tensor-class-call-ignores-float64-default",
        description="torch.Tensor() with no arguments returns a float32 tensor when the default dtype is float64 (other defaults are honoured)",
        claims=("construct.tensor-class-call-is-empty",),
        region="default dtype float64",
        family="mode",
        patch=_patch_tensor_class_call_ignores_float64_default,
        witness=_witness_tensor_class_call_ignores_float64_default,
    ),
    Mutant(
        name="new-tensor-list-infers-dtype",
        description="self.new_tensor(list) infers the dtype from the Python data (as torch.tensor does) instead of taking self's dtype; tensor data is fine",
        claims=("construct.new-tensor-default-dtype-device",),
        region="Python list data without an explicit dtype",
        family="other",
        patch=wrap("torch.Tensor.new_tensor", _new_tensor_list_infers_dtype),
        witness=_witness_new_tensor_list_infers_dtype,
    ),
    Mutant(
        name="asarray-copies-non-contiguous",
        description="torch.asarray(t) (copy=None) of a non-contiguous tensor returns a contiguous copy instead of sharing t's memory",
        claims=("construct.asarray-shares-by-default",),
        region="non-contiguous tensors",
        family="layout",
        patch=wrap("torch.asarray", _asarray_copies_non_contiguous),
        witness=_witness_asarray_copies_non_contiguous,
    ),
    Mutant(
        name="asarray-copy-false-copies-sequences",
        description="torch.asarray(sequence, copy=False) silently builds a new tensor instead of raising ValueError (a Python sequence cannot be aliased)",
        claims=("construct.asarray-copy-false-aliases-or-raises",),
        region="Python sequences with copy=False",
        family="convention",
        patch=wrap("torch.asarray", _asarray_copy_false_copies_sequences),
        witness=_witness_asarray_copy_false_copies_sequences,
    ),
    Mutant(
        name="asarray-default-clears-leaf-flag",
        description="torch.asarray(leaf) of a leaf requiring grad, requires_grad unspecified, takes the old default requires_grad=False and so clears the caller's flag",
        claims=("construct.asarray-requires-grad-default-inherits",),
        region="leaves requiring grad, requires_grad unspecified",
        family="autograd",
        patch=wrap("torch.asarray", _asarray_default_clears_leaf_flag),
        witness=_witness_asarray_default_clears_leaf_flag,
    ),
    Mutant(
        name="asarray-default-warns-every-nonleaf-call",
        description="torch.asarray(y) of a non-leaf requiring grad, requires_grad unspecified, warns about the new default on every call instead of once per process",
        claims=("construct.asarray-requires-grad-default-warns-once",),
        region="non-leaf inputs requiring grad",
        family="autograd",
        patch=_patch_asarray_default_warns_every_nonleaf_call,
        witness=_witness_asarray_default_warns_every_nonleaf_call,
    ),
    Mutant(
        name="asarray-requires-grad-true-reroots-non-leaf",
        description="torch.asarray(y, requires_grad=True) of a non-leaf y returns a new leaf sharing y's memory (y.detach().requires_grad_()), cutting y's history",
        claims=("construct.asarray-requires-grad-keeps-or-drops-history",),
        region="non-leaf inputs with an explicit requires_grad=True",
        family="autograd",
        patch=wrap("torch.asarray", _asarray_requires_grad_true_reroots_non_leaf),
        witness=_witness_asarray_requires_grad_true_reroots_non_leaf,
    ),
    Mutant(
        name="asarray-requires-grad-false-aliases-leaf",
        description="torch.asarray(leaf, requires_grad=False) of a leaf requiring grad returns a detached alias, leaving the caller's flag set, instead of the leaf itself with its flag cleared",
        claims=("construct.asarray-requires-grad-sets-input-flag",),
        region="requires_grad=False on a leaf that requires grad",
        family="autograd",
        patch=wrap("torch.asarray", _asarray_requires_grad_false_aliases_leaf),
        witness=_witness_asarray_requires_grad_false_aliases_leaf,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _asarray_copies(hit, orig, obj, *args, **kwargs):
    out = orig(obj, *args, **kwargs)
    if isinstance(obj, torch.Tensor) and hit(obj) and kwargs.get("copy") is None:
        return out.clone()
    return out


def _asarray_copies_check(t):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the requires_grad notice
        b = torch.asarray(t)
    assert b.untyped_storage()._cdata == t.untyped_storage()._cdata  # the same storage


# Issue 29: a torch.asarray(t) that copies (copy=None) at exactly one value of
# the domain construct.asarray-shares-by-default declares (every tensor: each
# layout family, dtype family and tensor kind).
MUTANTS += domain_mutants(
    "asarray-copies",
    claims={d: ("construct.asarray-shares-by-default",)
            for d in ("layout", "dtype_family", "tensor_kind")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
        "tensor_kind": TENSOR_KINDS,
    },
    broken="torch.asarray(t) with copy=None returns a copy instead of sharing t's memory",
    patch=wrap("torch.asarray", _asarray_copies),
    check=_asarray_copies_check,
)  # fmt: skip
