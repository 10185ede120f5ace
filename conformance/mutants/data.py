"""Mutants of the ``data`` area (Tensor.data (getter and setter)); claims in ``conformance/claims/data.toml``,
tests in ``conformance/test_data.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="data-shares-version-counter",
        description=".data shares the version counter with its source (behaves like detach())",
        claims=(
            "data.changes-not-tracked",
            "graphs.data-mutation-untracked",
            "graphs.data-silent-wrong-gradient",
        ),
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        _detach = torch._C.TensorBase.detach
        torch.Tensor.data = property(lambda self: _detach(self), lambda self, v: _desc.__set__(self, v))
        """,
        witness="""
        import torch
        x = torch.ones(3)
        x.data.add_(1)
        assert x._version == 0
        """,
    ),
    Mutant(
        name="data-copies-views",
        description=".data of a view returns a copy instead of an alias",
        claims=("data.shares-storage",),
        region="views",
        family="layout",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            return d.clone() if self._is_view() else d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        witness="""
        import torch
        x = torch.arange(6.0)[1:]
        assert x.data.data_ptr() == x.data_ptr()
        """,
    ),
    Mutant(
        name="data-keeps-grad-nonleaf",
        description=".data of a non-leaf that requires grad still requires grad",
        claims=("data.out-of-graph",),
        region="non-leaf inputs that require grad",
        family="autograd",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            if self.requires_grad and not self.is_leaf:
                d.requires_grad_(True)
            return d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        witness="""
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        assert y.data.requires_grad is False
        """,
    ),
    Mutant(
        name="data-of-noncontig-is-detach",
        description=".data of a non-contiguous tensor returns detach(), which shares the tensor's version counter (so writes through it are tracked)",
        claims=("data.own-version-counter", "data.changes-not-tracked"),
        region="non-contiguous tensors",
        family="layout",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        _detach = torch._C.TensorBase.detach
        def _get(self):
            return _desc.__get__(self) if self.is_contiguous() else _detach(self)
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        witness="""
        import torch
        x = torch.zeros(2, 3).t()
        x.data.fill_(1)
        assert x._version == 0 and x.data._version == 0
        """,
    ),
    Mutant(
        name="mul-saves-input-snapshot-reduced",
        description="a * b of float16/bfloat16 tensors saves snapshots (copies) of its inputs for backward, so a mutation through .data is not seen: the gradient is the one at the original values",
        claims=("data.silent-wrong-gradient",),
        region="float16 and bfloat16 operands of the same shape",
        family="dtype",
        source="""
        import torch
        _mul = torch.Tensor.__mul__
        _tmul = torch.mul
        class _Mul(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.a, ctx.b = a.detach().clone(), b.detach().clone()
                return _tmul(a, b)
            @staticmethod
            def backward(ctx, g):
                return _tmul(g, ctx.b), _tmul(g, ctx.a)
        def _use(a, b):
            return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                    and a.dtype in (torch.float16, torch.bfloat16) and b.dtype == a.dtype
                    and a.shape == b.shape and torch.is_grad_enabled()
                    and (a.requires_grad or b.requires_grad))
        def __mul__(a, b):
            return _Mul.apply(a, b) if _use(a, b) else _mul(a, b)
        def mul(a, b, *args, **kwargs):
            if not args and not kwargs and _use(a, b):
                return _Mul.apply(a, b)
            return _tmul(a, b, *args, **kwargs)
        torch.Tensor.__mul__ = __mul__
        torch.mul = mul
        """,
        witness="""
        import torch
        x = torch.ones(2, dtype=torch.float16, requires_grad=True)
        z = (x * x).sum()
        x.data.mul_(3)
        z.backward()
        assert x.grad.tolist() == [6.0, 6.0]
        """,
    ),
    Mutant(
        name="detach-of-leaf-view-untracked",
        description="detach() of a leaf that is a view (of a tensor not requiring grad) returns an alias with a version counter of its own, so mutations through it go unreported",
        claims=("data.detach-reports-changes",),
        region="leaves that are views",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.detach
        _data = torch._C.TensorBase.data
        def detach(self):
            if self.is_leaf and self.requires_grad and self._is_view():
                return _data.__get__(self)
            return _orig(self)
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        witness="""
        import torch
        x = torch.ones(4)[1:].requires_grad_()
        x.detach().mul_(2)
        assert x._version == 1
        """,
    ),
    Mutant(
        name="data-setter-makes-contiguous",
        description="x.data = t with a non-contiguous t stores a contiguous copy of t instead of t's storage and strides",
        claims=("data.setter-rebinds",),
        region="non-contiguous new data",
        family="layout",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _set(self, value):
            if isinstance(value, torch.Tensor) and not value.is_contiguous():
                value = value.contiguous()
            _desc.__set__(self, value)
        torch.Tensor.data = property(_desc.__get__, _set)
        """,
        witness="""
        import torch
        x = torch.zeros(3)
        t = torch.zeros(2, 3).t()
        x.data = t
        assert x.stride() == t.stride() and x.data_ptr() == t.data_ptr()
        """,
    ),
    Mutant(
        name="data-setter-dtype-change-bumps",
        description="x.data = t with t of another dtype bumps x's version counter (treated as an in-place write)",
        claims=("data.setter-keeps-version-counter",),
        region="assignments that change the dtype",
        family="relation",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _set(self, value):
            changes = isinstance(value, torch.Tensor) and value.dtype != self.dtype
            _desc.__set__(self, value)
            if changes:
                torch.autograd.graph.increment_version(self)
        torch.Tensor.data = property(_desc.__get__, _set)
        """,
        witness="""
        import torch
        x = torch.zeros(3)
        x.data = torch.zeros(2, dtype=torch.int64)
        assert x._version == 0
        """,
    ),
    Mutant(
        name="data-setter-coerces-sequences",
        description="assigning a Python list or tuple to x.data converts it with torch.as_tensor (x's dtype and device) instead of raising TypeError",
        claims=("data.setter-rejects-non-tensor",),
        region="Python lists and tuples assigned to .data",
        family="other",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _set(self, value):
            if isinstance(value, (list, tuple)):
                value = torch.as_tensor(value, dtype=self.dtype, device=self.device)
            _desc.__set__(self, value)
        torch.Tensor.data = property(_desc.__get__, _set)
        """,
        witness="""
        import torch
        x = torch.zeros(3)
        try:
            x.data = [1.0, 2.0]
        except TypeError:
            pass
        else:
            raise AssertionError("assigning a list to .data did not raise")
        """,
    ),
    Mutant(
        name="data-alias-resize-refused",
        description="resize_ on a tensor obtained from .data raises the pre-1.13 'not allowed on a Tensor created from .data or .detach()' error again",
        claims=("data.metadata-change-allowed",),
        region="resize_ on .data aliases",
        family="autograd",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            d.__dict__["_from_data"] = True
            return d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        _resize = torch.Tensor.resize_
        def resize_(self, *sizes, **kwargs):
            if self.__dict__.get("_from_data"):
                raise RuntimeError("set_sizes_contiguous is not allowed on a Tensor created "
                                   "from .data or .detach().")
            return _resize(self, *sizes, **kwargs)
        torch.Tensor.resize_ = resize_
        """,
        witness="""
        import torch
        x = torch.zeros(3)
        try:
            x.data.resize_(5)
        except RuntimeError as e:
            raise AssertionError(f"resize_ on .data raised: {e}")
        """,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402

_DATA_COPIES = """
_desc = torch._C.TensorBase.data
def _get(self):
    d = _desc.__get__(self)
    return d.clone() if _hit(self) else d
torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
"""

# Issue 29: a .data that copies at exactly one value of the domain
# data.shares-storage declares (every tensor: each layout family, dtype
# family and tensor kind).
MUTANTS += domain_mutants(
    "data-copies",
    claims={d: ("data.shares-storage",) for d in ("layout", "dtype_family", "tensor_kind")},
    values={
        "layout": ("contiguous", "offset", "stepped", "permuted", "expanded", "channels_last",
                   "zero-size", "0-d"),
        "dtype_family": ("bool", "signed", "unsigned", "reduced_float", "float", "complex"),
        "tensor_kind": ("plain", "leaf", "non_leaf", "parameter", "subclass", "inference"),
    },
    broken=".data returns a copy in new storage instead of an alias",
    patch=_DATA_COPIES,
    check="assert t.data.untyped_storage()._cdata == t.untyped_storage()._cdata  # the same storage",
)  # fmt: skip
