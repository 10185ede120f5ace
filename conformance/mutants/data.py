"""Mutants of the ``data`` area (Tensor.data (getter and setter)); claims in ``conformance/claims/data.toml``,
tests in ``conformance/test_data.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, TENSOR_KINDS
from conformance.mutants.autograd import mul_with_backward
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, refused, torch


def _patch_data_shares_version_counter():
    _desc = torch._C.TensorBase.data
    _detach = torch._C.TensorBase.detach
    torch.Tensor.data = property(lambda self: _detach(self), lambda self, v: _desc.__set__(self, v))


def _witness_data_shares_version_counter():
    x = torch.ones(3)
    x.data.add_(1)
    assert x._version == 0


def _patch_data_copies_views():
    _desc = torch._C.TensorBase.data

    def _get(self):
        d = _desc.__get__(self)
        return d.clone() if self._is_view() else d

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _witness_data_copies_views():
    x = torch.arange(6.0)[1:]
    assert x.data.data_ptr() == x.data_ptr()


def _patch_data_keeps_grad_nonleaf():
    _desc = torch._C.TensorBase.data

    def _get(self):
        d = _desc.__get__(self)
        if self.requires_grad and not self.is_leaf:
            d.requires_grad_(True)
        return d

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _witness_data_keeps_grad_nonleaf():
    y = torch.ones(3, requires_grad=True) * 2
    assert y.data.requires_grad is False


def _patch_data_of_noncontig_is_detach():
    _desc = torch._C.TensorBase.data
    _detach = torch._C.TensorBase.detach

    def _get(self):
        return _desc.__get__(self) if self.is_contiguous() else _detach(self)

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _witness_data_of_noncontig_is_detach():
    x = torch.zeros(2, 3).t()
    x.data.fill_(1)
    assert x._version == 0 and x.data._version == 0


def _save_snapshots(ctx, a, b, mul):
    ctx.a, ctx.b = a.detach().clone(), b.detach().clone()
    return mul(a, b)


def _grad_from_snapshots(ctx, g, mul):
    return mul(g, ctx.b), mul(g, ctx.a)


def _reduced_operands(a, b):
    return (
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and a.dtype in (torch.float16, torch.bfloat16)
        and b.dtype == a.dtype
        and a.shape == b.shape
        and torch.is_grad_enabled()
        and (a.requires_grad or b.requires_grad)
    )


def _witness_mul_saves_input_snapshot_reduced():
    x = torch.ones(2, dtype=torch.float16, requires_grad=True)
    z = (x * x).sum()
    x.data.mul_(3)
    z.backward()
    assert x.grad.tolist() == [6.0, 6.0]


def _patch_detach_of_leaf_view_untracked():
    _orig = torch.Tensor.detach
    _data = torch._C.TensorBase.data

    def detach(self):
        if self.is_leaf and self.requires_grad and self._is_view():
            return _data.__get__(self)
        return _orig(self)

    torch.Tensor.detach = detach
    torch.detach = detach


def _witness_detach_of_leaf_view_untracked():
    x = torch.ones(4)[1:].requires_grad_()
    x.detach().mul_(2)
    assert x._version == 1


def _patch_data_setter_makes_contiguous():
    _desc = torch._C.TensorBase.data

    def _set(self, value):
        if isinstance(value, torch.Tensor) and not value.is_contiguous():
            value = value.contiguous()
        _desc.__set__(self, value)

    torch.Tensor.data = property(_desc.__get__, _set)


def _witness_data_setter_makes_contiguous():
    x = torch.zeros(3)
    t = torch.zeros(2, 3).t()
    x.data = t
    assert x.stride() == t.stride() and x.data_ptr() == t.data_ptr()


def _patch_data_setter_dtype_change_bumps():
    _desc = torch._C.TensorBase.data

    def _set(self, value):
        changes = isinstance(value, torch.Tensor) and value.dtype != self.dtype
        _desc.__set__(self, value)
        if changes:
            torch.autograd.graph.increment_version(self)

    torch.Tensor.data = property(_desc.__get__, _set)


def _witness_data_setter_dtype_change_bumps():
    x = torch.zeros(3)
    x.data = torch.zeros(2, dtype=torch.int64)
    assert x._version == 0


def _patch_data_setter_coerces_sequences():
    _desc = torch._C.TensorBase.data

    def _set(self, value):
        if isinstance(value, (list, tuple)):
            value = torch.as_tensor(value, dtype=self.dtype, device=self.device)
        _desc.__set__(self, value)

    torch.Tensor.data = property(_desc.__get__, _set)


def _witness_data_setter_coerces_sequences():
    x = torch.zeros(3)
    with refused(TypeError, "assigning a list to .data did not raise"):
        x.data = [1.0, 2.0]


def _patch_data_alias_resize_refused():
    _desc = torch._C.TensorBase.data

    def _get(self):
        d = _desc.__get__(self)
        d.__dict__["_from_data"] = True
        return d

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
    _resize = torch.Tensor.resize_

    def resize_(self, *sizes, **kwargs):
        if self.__dict__.get("_from_data"):
            raise RuntimeError(
                "set_sizes_contiguous is not allowed on a Tensor created from .data or .detach()."
            )
        return _resize(self, *sizes, **kwargs)

    torch.Tensor.resize_ = resize_


def _witness_data_alias_resize_refused():
    x = torch.zeros(3)
    with accepted(RuntimeError, "resize_ on .data raised"):
        x.data.resize_(5)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="data-shares-version-counter",
        description=".data shares the version counter with its source (behaves like detach())",
        claims=(
            "data.changes-not-tracked",
            "graphs.data-mutation-untracked",
            "graphs.data-silent-wrong-gradient",
        ),
        patch=_patch_data_shares_version_counter,
        witness=_witness_data_shares_version_counter,
    ),
    Mutant(
        name="data-copies-views",
        description=".data of a view returns a copy instead of an alias",
        claims=("data.shares-storage",),
        region="views",
        family="layout",
        patch=_patch_data_copies_views,
        witness=_witness_data_copies_views,
    ),
    Mutant(
        name="data-keeps-grad-nonleaf",
        description=".data of a non-leaf that requires grad still requires grad",
        claims=("data.out-of-graph",),
        region="non-leaf inputs that require grad",
        family="autograd",
        patch=_patch_data_keeps_grad_nonleaf,
        witness=_witness_data_keeps_grad_nonleaf,
    ),
    Mutant(
        name="data-of-noncontig-is-detach",
        description=".data of a non-contiguous tensor returns detach(), which shares the tensor's version counter (so writes through it are tracked)",
        claims=("data.own-version-counter", "data.changes-not-tracked"),
        region="non-contiguous tensors",
        family="layout",
        patch=_patch_data_of_noncontig_is_detach,
        witness=_witness_data_of_noncontig_is_detach,
    ),
    Mutant(
        name="mul-saves-input-snapshot-reduced",
        description="a * b of float16/bfloat16 tensors saves snapshots (copies) of its inputs for backward, so a mutation through .data is not seen: the gradient is the one at the original values",
        claims=("data.silent-wrong-gradient",),
        region="float16 and bfloat16 operands of the same shape",
        family="dtype",
        patch=functools.partial(
            mul_with_backward, _save_snapshots, _grad_from_snapshots, _reduced_operands
        ),
        witness=_witness_mul_saves_input_snapshot_reduced,
    ),
    Mutant(
        name="detach-of-leaf-view-untracked",
        description="detach() of a leaf that is a view (of a tensor not requiring grad) returns an alias with a version counter of its own, so mutations through it go unreported",
        claims=("data.detach-reports-changes",),
        region="leaves that are views",
        family="layout",
        patch=_patch_detach_of_leaf_view_untracked,
        witness=_witness_detach_of_leaf_view_untracked,
    ),
    Mutant(
        name="data-setter-makes-contiguous",
        description="x.data = t with a non-contiguous t stores a contiguous copy of t instead of t's storage and strides",
        claims=("data.setter-rebinds",),
        region="non-contiguous new data",
        family="layout",
        patch=_patch_data_setter_makes_contiguous,
        witness=_witness_data_setter_makes_contiguous,
    ),
    Mutant(
        name="data-setter-dtype-change-bumps",
        description="x.data = t with t of another dtype bumps x's version counter (treated as an in-place write)",
        claims=("data.setter-keeps-version-counter",),
        region="assignments that change the dtype",
        family="relation",
        patch=_patch_data_setter_dtype_change_bumps,
        witness=_witness_data_setter_dtype_change_bumps,
    ),
    Mutant(
        name="data-setter-coerces-sequences",
        description="assigning a Python list or tuple to x.data converts it with torch.as_tensor (x's dtype and device) instead of raising TypeError",
        claims=("data.setter-rejects-non-tensor",),
        region="Python lists and tuples assigned to .data",
        family="other",
        patch=_patch_data_setter_coerces_sequences,
        witness=_witness_data_setter_coerces_sequences,
    ),
    Mutant(
        name="data-alias-resize-refused",
        description="resize_ on a tensor obtained from .data raises the pre-1.13 'not allowed on a Tensor created from .data or .detach()' error again",
        claims=("data.metadata-change-allowed",),
        region="resize_ on .data aliases",
        family="autograd",
        patch=_patch_data_alias_resize_refused,
        witness=_witness_data_alias_resize_refused,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _data_copies(hit):
    _desc = torch._C.TensorBase.data

    def _get(self):
        d = _desc.__get__(self)
        return d.clone() if hit(self) else d

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _data_copies_check(t):
    assert t.data.untyped_storage()._cdata == t.untyped_storage()._cdata  # the same storage


# Issue 29: a .data that copies at exactly one value of the domain
# data.shares-storage declares (every tensor: each layout family, dtype
# family and tensor kind).
MUTANTS += domain_mutants(
    "data-copies",
    claims={d: ("data.shares-storage",) for d in ("layout", "dtype_family", "tensor_kind")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
        "tensor_kind": TENSOR_KINDS,
    },
    broken=".data returns a copy in new storage instead of an alias",
    patch=_data_copies,
    check=_data_copies_check,
)  # fmt: skip
