"""Mutants of the ``to`` area (Tensor.to, Tensor.cpu, Tensor.type and Tensor.contiguous); claims in ``conformance/claims/to.toml``,
tests in ``conformance/test_to.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, TENSOR_KINDS
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, torch, wrap


def _to_always_copies(orig, self, *args, **kwargs):
    kwargs["copy"] = True
    return orig(self, *args, **kwargs)


def _witness_to_always_copies():
    x = torch.ones(3)
    assert x.to(torch.float32) is x


def _to_kwarg_dtype_copies(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if out is self and not args and "dtype" in kwargs:
        return orig(self, *args, **{**kwargs, "copy": True})
    return out


def _witness_to_kwarg_dtype_copies():
    x = torch.ones(3)
    assert x.to(dtype=torch.float32) is x


def _to_dtype_change_detaches(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if out is not self and self.requires_grad and out.dtype != self.dtype:
        out = out.detach()
    return out


def _witness_to_dtype_change_detaches():
    x = torch.ones(3, requires_grad=True)
    assert x.to(torch.float64).grad_fn is not None


def _to_dtype_change_ignores_memory_format(orig, self, *args, **kwargs):
    dtype = kwargs.get("dtype")
    if dtype is None and args and isinstance(args[0], torch.dtype):
        dtype = args[0]
    fmt = kwargs.get("memory_format")
    if (
        dtype is not None
        and dtype != self.dtype
        and fmt is not None
        and fmt != torch.preserve_format
    ):
        kwargs = {**kwargs, "memory_format": torch.preserve_format}
    return orig(self, *args, **kwargs)


def _witness_to_dtype_change_ignores_memory_format():
    x = torch.arange(6.0).reshape(2, 3).t()
    assert x.to(torch.float64, memory_format=torch.contiguous_format).is_contiguous()


def _to_same_itemsize_reinterprets(orig, self, *args, **kwargs):
    dtype = kwargs.get("dtype")
    if dtype is None and args and isinstance(args[0], torch.dtype):
        dtype = args[0]
    if (
        dtype is not None
        and dtype != self.dtype
        and not self.requires_grad
        and dtype.itemsize == self.dtype.itemsize
        and self.dim() > 0
        and self.stride(-1) == 1
        and not kwargs.get("copy")
        and torch.bool not in (dtype, self.dtype)
    ):
        return self.view(dtype)
    return orig(self, *args, **kwargs)


def _witness_to_same_itemsize_reinterprets():
    x = torch.tensor([1, 2], dtype=torch.int32)
    assert x.to(torch.float32).tolist() == [1.0, 2.0]


def _cpu_copies_call(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    return out.clone() if out is self else out


def _witness_cpu_copies():
    x = torch.ones(3)
    assert x.cpu() is x


def _type_string_copies(orig, self, dtype=None, non_blocking=False, **kwargs):
    out = orig(self, dtype, non_blocking, **kwargs)
    if isinstance(dtype, str) and out is self:
        return self.clone()
    return out


def _witness_type_string_copies():
    x = torch.ones(3)
    assert x.type("torch.FloatTensor") is x


def _contiguous_always_copies(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    return out.clone() if out is self else out


def _witness_contiguous_always_copies():
    x = torch.ones(2, 3)
    assert x.contiguous() is x


def _patch_contiguous_dense_returns_self():
    _orig = torch.Tensor.contiguous

    def contiguous(self, memory_format=torch.contiguous_format):
        if memory_format == torch.contiguous_format and self.numel() > 0:
            pairs = sorted(
                (st, sz) for sz, st in zip(self.shape, self.stride(), strict=False) if sz != 1
            )
            expected = 1
            dense = True
            for st, sz in pairs:
                dense = dense and st == expected
                expected *= sz
            if dense:
                return self
        return _orig(self, memory_format=memory_format)

    torch.Tensor.contiguous = contiguous


def _witness_contiguous_dense_returns_self():
    x = torch.zeros(2, 3).t()
    assert x.contiguous().is_contiguous()


def _contiguous_copy_detaches(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if out is not self and self.requires_grad:
        out = out.detach()
    return out


def _witness_contiguous_copy_detaches():
    x = torch.ones(2, 3, requires_grad=True)
    assert x.t().contiguous().grad_fn is not None


def _to_copy_true_ignored_for_tensor_target(orig, self, *args, **kwargs):
    if args and isinstance(args[0], torch.Tensor) and kwargs.get("copy"):
        kwargs = {k: v for k, v in kwargs.items() if k != "copy"}
    return orig(self, *args, **kwargs)


def _witness_to_copy_true_ignored_for_tensor_target():
    x = torch.ones(3)
    assert x.to(torch.empty(0), copy=True) is not x


def _target_dtype(args, kwargs):
    """The dtype a call ``t.to(*args, **kwargs)`` asks for, or None."""
    if "dtype" in kwargs:
        return kwargs["dtype"]
    for a in args:
        if isinstance(a, torch.dtype):
            return a
        if isinstance(a, torch.Tensor):
            return a.dtype
    return None


def _to_bool_of_grad_raises(orig, self, *args, **kwargs):
    if self.requires_grad and _target_dtype(args, kwargs) == torch.bool:
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    return orig(self, *args, **kwargs)


def _witness_to_bool_of_grad_raises():
    x = torch.ones(3, requires_grad=True)
    with accepted(RuntimeError, "to(torch.bool) of a tensor requiring grad raised"):
        y = x.to(torch.bool)
    assert not y.requires_grad and y.is_leaf


def _to_dtype_change_drops_channels_last(orig, self, *args, **kwargs):
    dtype = _target_dtype(args, kwargs)
    if (
        dtype is not None
        and dtype != self.dtype
        and self.dim() == 4
        and kwargs.get("memory_format", torch.preserve_format) == torch.preserve_format
        and not self.is_contiguous()
        and self.is_contiguous(memory_format=torch.channels_last)
    ):
        kwargs = {**kwargs, "memory_format": torch.contiguous_format}
    return orig(self, *args, **kwargs)


def _witness_to_dtype_change_drops_channels_last():
    x = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    assert x.to(torch.float64).stride() == x.stride()


def _to_memory_format_copies_expanded(orig, self, *args, **kwargs):
    if (
        not args
        and set(kwargs) == {"memory_format"}
        and kwargs["memory_format"] == torch.contiguous_format
        and self.dim() < 4
        and any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride(), strict=False))
    ):
        return self.contiguous()
    return orig(self, *args, **kwargs)


def _witness_to_memory_format_copies_expanded():
    x = torch.arange(3.0).expand(2, 3)
    assert x.to(memory_format=torch.contiguous_format) is x


def _to_cuda_of_leaf_detaches(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if out.is_cuda and not self.is_cuda and self.is_leaf and self.requires_grad:
        with torch.no_grad():
            out = out.clone()
        out.requires_grad_(True)
    return out


def _witness_to_cuda_of_leaf_detaches():
    x = torch.ones(2, requires_grad=True)
    y = x.to("cuda")
    assert not y.is_leaf and y.grad_fn is not None


def _tensor_on_cuda_built_on_host(
    orig, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False
):
    if requires_grad and device is not None and torch.device(device).type == "cuda":
        host = orig(data, dtype=dtype, requires_grad=True)
        return host.to(device)
    return orig(
        data, dtype=dtype, device=device, requires_grad=requires_grad, pin_memory=pin_memory
    )


def _witness_tensor_on_cuda_built_on_host():
    t = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert t.is_leaf and t.grad_fn is None


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="to-always-copies",
        description="Tensor.to() copies even when dtype and device already match",
        claims=("to.same-dtype-device-returns-self",),
        patch=wrap("torch.Tensor.to", _to_always_copies),
        witness=_witness_to_always_copies,
    ),
    Mutant(
        name="to-kwarg-dtype-copies",
        description="x.to(dtype=x.dtype) (keyword form) copies; x.to(x.dtype) returns self",
        claims=("to.same-dtype-device-returns-self",),
        region="the keyword form to(dtype=x.dtype) only",
        family="convention",
        patch=wrap("torch.Tensor.to", _to_kwarg_dtype_copies),
        witness=_witness_to_kwarg_dtype_copies,
    ),
    Mutant(
        name="to-dtype-change-detaches",
        description="x.to(other floating dtype) of a tensor requiring grad returns a detached copy",
        claims=("to.dtype-change-in-graph",),
        region="dtype changes of tensors requiring grad",
        family="autograd",
        patch=wrap("torch.Tensor.to", _to_dtype_change_detaches),
        witness=_witness_to_dtype_change_detaches,
    ),
    Mutant(
        name="to-dtype-change-ignores-memory-format",
        description="x.to(dtype, memory_format=fmt) ignores fmt whenever the dtype also changes (keeps the input's strides, as preserve_format would)",
        claims=("to.memory-format-honoured",),
        region="memory_format given together with a dtype change",
        family="relation",
        patch=wrap("torch.Tensor.to", _to_dtype_change_ignores_memory_format),
        witness=_witness_to_dtype_change_ignores_memory_format,
    ),
    Mutant(
        name="to-same-itemsize-reinterprets",
        description="x.to(dtype) between dtypes of the same element size reinterprets the bits (a view) instead of converting",
        claims=("to.conversion-copies",),
        region="dtype changes between dtypes of one element size",
        family="relation",
        patch=wrap("torch.Tensor.to", _to_same_itemsize_reinterprets),
        witness=_witness_to_same_itemsize_reinterprets,
    ),
    Mutant(
        name="cpu-copies",
        description="Tensor.cpu() copies a tensor that is already in CPU memory",
        claims=("to.cpu-returns-self",),
        patch=wrap("torch.Tensor.cpu", _cpu_copies_call),
        witness=_witness_cpu_copies,
    ),
    Mutant(
        name="type-string-copies",
        description="x.type('torch.FloatTensor') (string form) copies when the type already matches; x.type(torch.float32) is fine",
        claims=("to.type-returns-self",),
        region="the string form x.type('torch.FloatTensor') with no change",
        family="convention",
        patch=wrap("torch.Tensor.type", _type_string_copies),
        witness=_witness_type_string_copies,
    ),
    Mutant(
        name="contiguous-always-copies",
        description="contiguous() copies even when the tensor is already contiguous",
        claims=("to.contiguous-returns-self",),
        patch=wrap("torch.Tensor.contiguous", _contiguous_always_copies),
        witness=_witness_contiguous_always_copies,
    ),
    Mutant(
        name="contiguous-dense-returns-self",
        description="contiguous() returns self for any dense input (permuted/transposed too), not only contiguous ones",
        claims=("to.contiguous-copies-otherwise",),
        region="dense non-contiguous (permuted, transposed) inputs",
        family="layout",
        patch=_patch_contiguous_dense_returns_self,
        witness=_witness_contiguous_dense_returns_self,
    ),
    Mutant(
        name="contiguous-copy-detaches",
        description="contiguous() of a non-contiguous tensor requiring grad returns a detached copy",
        claims=("to.contiguous-copy-in-graph",),
        region="non-contiguous inputs requiring grad",
        family="autograd",
        patch=wrap("torch.Tensor.contiguous", _contiguous_copy_detaches),
        witness=_witness_contiguous_copy_detaches,
    ),
    Mutant(
        name="to-copy-true-ignored-for-tensor-target",
        description="t.to(other_tensor, copy=True) ignores copy=True and returns t itself when other has t's dtype and device (the dtype and device forms copy)",
        claims=("to.copy-true-always-copies",),
        region="the to(other_tensor, copy=True) form",
        family="convention",
        patch=wrap("torch.Tensor.to", _to_copy_true_ignored_for_tensor_target),
        witness=_witness_to_copy_true_ignored_for_tensor_target,
    ),
    Mutant(
        name="to-bool-of-grad-raises",
        description="t.to(torch.bool) of a tensor requiring grad raises 'only floating point and complex tensors can require gradients' instead of returning a result that does not require grad",
        claims=("to.integer-dtype-drops-requires-grad",),
        region="bool targets of tensors requiring grad",
        family="dtype",
        patch=wrap("torch.Tensor.to", _to_bool_of_grad_raises),
        witness=_witness_to_bool_of_grad_raises,
    ),
    Mutant(
        name="to-dtype-change-drops-channels-last",
        description="t.to(other dtype) with the default preserve_format returns a row-major result for a channels_last input (permuted layouts are kept)",
        claims=("to.preserve-format-keeps-strides",),
        region="channels_last 4-D inputs",
        family="layout",
        patch=wrap("torch.Tensor.to", _to_dtype_change_drops_channels_last),
        witness=_witness_to_dtype_change_drops_channels_last,
    ),
    Mutant(
        name="to-memory-format-copies-expanded",
        description="t.to(memory_format=torch.contiguous_format) of an expanded (stride-0) tensor below rank 4 returns a contiguous copy instead of t itself",
        claims=("to.memory-format-alias-below-rank-4",),
        region="expanded inputs of rank below 4",
        family="layout",
        patch=wrap("torch.Tensor.to", _to_memory_format_copies_expanded),
        witness=_witness_to_memory_format_copies_expanded,
    ),
    Mutant(
        name="to-cuda-of-leaf-detaches",
        description="x.to('cuda') of a CPU leaf that requires grad returns a new leaf on the GPU "
        "(detached, requiring grad) instead of a non-leaf, so x.grad is never filled",
        claims=("to.cuda-move-is-non-leaf",),
        region="CPU leaves requiring grad moved to CUDA",
        family="autograd",
        devices=("cuda",),
        patch=wrap("torch.Tensor.to", _to_cuda_of_leaf_detaches),
        witness=_witness_to_cuda_of_leaf_detaches,
    ),
    Mutant(
        name="tensor-on-cuda-built-on-host",
        description="torch.tensor(data, device='cuda', requires_grad=True) builds the leaf on the "
        "host and returns its move to the GPU: a non-leaf with a grad_fn",
        claims=("to.created-on-cuda-is-leaf",),
        region="torch.tensor(..., device='cuda', requires_grad=True)",
        family="autograd",
        devices=("cuda",),
        patch=wrap("torch.tensor", _tensor_on_cuda_built_on_host),
        witness=_witness_tensor_on_cuda_built_on_host,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _to_copies(hit, orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    return out.clone() if out is self and hit(self) else out


def _to_copies_unneeded_check(t):
    assert t.to(t.dtype) is t and t.to(device=t.device) is t


# Issue 29: a to() that copies although nothing needs converting, at exactly
# one value of the domain to.same-dtype-device-returns-self declares (every
# tensor: each layout family, dtype family and tensor kind).
MUTANTS += domain_mutants(
    "to-copies-unneeded",
    claims={d: ("to.same-dtype-device-returns-self",)
            for d in ("layout", "dtype_family", "tensor_kind")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
        "tensor_kind": TENSOR_KINDS,
    },
    broken="t.to(t.dtype) returns a copy instead of t itself",
    patch=wrap("torch.Tensor.to", _to_copies),
    check=_to_copies_unneeded_check,
)  # fmt: skip


def _to_copies_unneeded_only_positional(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    return out.clone() if out is self and args else out


def _witness_to_copies_unneeded_only_positional():
    t = torch.arange(3.0)
    assert t.to(t.dtype) is t


def _to_copies_unneeded_only_keyword(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    hit = "dtype" in kwargs or "device" in kwargs
    return out.clone() if out is self and hit else out


def _witness_to_copies_unneeded_only_keyword():
    t = torch.arange(3.0)
    assert t.to(device=t.device, dtype=t.dtype) is t


MUTANTS += (
    Mutant(
        name="to-copies-unneeded-only-positional",
        description="t.to(dtype) / t.to(device) with positional arguments returns a copy when nothing needs converting; the keyword spelling still returns t",
        claims=("to.same-dtype-device-returns-self",),
        domain={"call_form": "method"},
        region="positional spellings t.to(dtype), t.to(device), t.to(other)",
        family="convention",
        patch=wrap("torch.Tensor.to", _to_copies_unneeded_only_positional),
        witness=_witness_to_copies_unneeded_only_positional,
    ),
    Mutant(
        name="to-copies-unneeded-only-keyword",
        description="t.to(device=..., dtype=...) with keyword arguments returns a copy when nothing needs converting; positional spellings still return t",
        claims=("to.same-dtype-device-returns-self",),
        domain={"call_form": "keyword"},
        region="the keyword spelling t.to(device=..., dtype=...)",
        family="convention",
        patch=wrap("torch.Tensor.to", _to_copies_unneeded_only_keyword),
        witness=_witness_to_copies_unneeded_only_keyword,
    ),
)


def _cpu_copies(hit, orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    return out.clone() if out is self and hit(self) else out


def _cpu_copies_check(t):
    assert t.cpu() is t


# Issue 29: a cpu() that copies a CPU tensor of exactly one tensor kind
# (to.cpu-returns-self speaks of every tensor).
MUTANTS += domain_mutants(
    "cpu-copies",
    claims={"tensor_kind": ("to.cpu-returns-self",)},
    values={"tensor_kind": TENSOR_KINDS},
    broken="t.cpu() of a CPU tensor returns a copy instead of t itself",
    patch=wrap("torch.Tensor.cpu", _cpu_copies),
    check=_cpu_copies_check,
)


def _to_copy_true_aliases_only_positional(orig, self, *args, **kwargs):
    if args and kwargs.get("copy") and not ("dtype" in kwargs or "device" in kwargs):
        kwargs = {**kwargs, "copy": False}
    return orig(self, *args, **kwargs)


def _witness_to_copy_true_aliases_only_positional():
    t = torch.arange(3.0)
    assert t.to(t.dtype, copy=True) is not t


def _to_copy_true_aliases_only_keyword(orig, self, *args, **kwargs):
    if kwargs.get("copy") and ("dtype" in kwargs or "device" in kwargs):
        kwargs = {**kwargs, "copy": False}
    return orig(self, *args, **kwargs)


def _witness_to_copy_true_aliases_only_keyword():
    t = torch.arange(3.0)
    assert t.to(device=t.device, dtype=t.dtype, copy=True) is not t


# Issue 29: to.copy-true-always-copies speaks of both spellings of to();
# each mutant drops copy=True (returning t itself) in one spelling only.
MUTANTS += (
    Mutant(
        name="to-copy-true-aliases-only-positional",
        description="t.to(dtype, copy=True) / t.to(device, copy=True) / t.to(other, copy=True) with positional arguments ignores copy=True and returns t itself when nothing needs converting; the keyword spelling still copies",
        claims=("to.copy-true-always-copies",),
        domain={"call_form": "method"},
        region="positional spellings t.to(dtype|device|other, copy=True)",
        family="convention",
        patch=wrap("torch.Tensor.to", _to_copy_true_aliases_only_positional),
        witness=_witness_to_copy_true_aliases_only_positional,
    ),
    Mutant(
        name="to-copy-true-aliases-only-keyword",
        description="t.to(device=..., dtype=..., copy=True) with keyword arguments ignores copy=True and returns t itself when nothing needs converting; positional spellings still copy",
        claims=("to.copy-true-always-copies",),
        domain={"call_form": "keyword"},
        region="the keyword spelling t.to(device=..., dtype=..., copy=True)",
        family="convention",
        patch=wrap("torch.Tensor.to", _to_copy_true_aliases_only_keyword),
        witness=_witness_to_copy_true_aliases_only_keyword,
    ),
)
