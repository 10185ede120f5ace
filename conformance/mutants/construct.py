"""Mutants of the ``construct`` area (Tensor construction: torch.tensor, Tensor.new_tensor, torch.as_tensor, torch.asarray, torch.Tensor()); claims in ``conformance/claims/construct.toml``,
tests in ``conformance/test_construct.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="tensor-shares",
        description="torch.tensor(t) of a tensor returns an alias (detach) instead of a copy",
        claims=("construct.tensor-is-detach-clone",),
        source="""
        import torch
        _orig = torch.tensor
        def tensor(data, *args, **kwargs):
            out = _orig(data, *args, **kwargs)
            if isinstance(data, torch.Tensor) and out.dtype == data.dtype and out.device == data.device:
                alias = data.detach()
                if out.requires_grad:
                    alias.requires_grad_(True)
                return alias
            return out
        torch.tensor = tensor
        """,
        witness="""
        import torch
        x = torch.arange(3.0)
        assert torch.tensor(x).data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        name="new-tensor-shares-same-dtype",
        description="x.new_tensor(t) aliases t when t already has x's dtype and device",
        claims=("construct.new-tensor-is-detach-clone",),
        region="tensor data of the receiver's dtype and device",
        family="relation",
        source="""
        import torch
        _orig = torch.Tensor.new_tensor
        def new_tensor(self, data, *args, **kwargs):
            out = _orig(self, data, *args, **kwargs)
            if (isinstance(data, torch.Tensor) and data.dtype == out.dtype
                    and data.device == out.device):
                alias = data.detach()
                if out.requires_grad:
                    alias.requires_grad_(True)
                return alias
            return out
        torch.Tensor.new_tensor = new_tensor
        """,
        witness="""
        import torch
        x = torch.arange(3.0)
        assert torch.zeros(1).new_tensor(x).data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        name="as-tensor-copies",
        description="torch.as_tensor always copies (tensor and ndarray inputs)",
        claims=("construct.as-tensor-identity",),
        source="""
        import torch
        _orig = torch.as_tensor
        def as_tensor(data, *args, **kwargs):
            out = _orig(data, *args, **kwargs)
            return out.clone() if isinstance(out, torch.Tensor) else out
        torch.as_tensor = as_tensor
        """,
        witness="""
        import torch
        x = torch.arange(3.0)
        assert torch.as_tensor(x) is x
        """,
    ),
    Mutant(
        name="as-tensor-explicit-dtype-copies",
        description="torch.as_tensor(t, dtype=t.dtype) (explicit but unchanged dtype) copies; as_tensor(t) is fine",
        claims=("construct.as-tensor-identity",),
        region="as_tensor(t, dtype=t.dtype): explicit unchanged dtype",
        family="convention",
        source="""
        import torch
        _orig = torch.as_tensor
        def as_tensor(data, dtype=None, device=None):
            out = _orig(data, dtype=dtype, device=device)
            if isinstance(data, torch.Tensor) and dtype is not None and out is data:
                return data.clone()
            return out
        torch.as_tensor = as_tensor
        """,
        witness="""
        import torch
        x = torch.arange(3.0)
        assert torch.as_tensor(x, dtype=torch.float32) is x
        """,
    ),
    Mutant(
        name="as-tensor-convert-detaches",
        description="torch.as_tensor(t, dtype=other) of a tensor requiring grad cuts the graph",
        claims=("construct.as-tensor-converts-with-history",),
        region="dtype conversion of a tensor that requires grad",
        family="autograd",
        source="""
        import torch
        _orig = torch.as_tensor
        def as_tensor(data, dtype=None, device=None):
            out = _orig(data, dtype=dtype, device=device)
            if isinstance(data, torch.Tensor) and out is not data and data.requires_grad:
                out = out.detach()
            return out
        torch.as_tensor = as_tensor
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        assert torch.as_tensor(x, dtype=torch.float64).grad_fn is not None
        """,
    ),
    Mutant(
        name="asarray-copy-true-ignored",
        description="torch.asarray(t, copy=True) returns an alias of t when no dtype/device conversion is needed",
        claims=("construct.asarray-copy-true-never-shares",),
        region="copy=True with no dtype/device conversion",
        family="convention",
        source="""
        import torch
        _orig = torch.asarray
        def asarray(obj, *args, **kwargs):
            if (isinstance(obj, torch.Tensor) and kwargs.get("copy") is True
                    and kwargs.get("dtype") in (None, obj.dtype)
                    and kwargs.get("device") in (None, obj.device)):
                out = obj.detach()
                if kwargs.get("requires_grad", obj.requires_grad):
                    out.requires_grad_(True)
                return out
            return _orig(obj, *args, **kwargs)
        torch.asarray = asarray
        """,
        witness="""
        import torch
        x = torch.arange(3.0)
        assert torch.asarray(x, copy=True).data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        name="asarray-default-drops-grad",
        description="torch.asarray(t) with requires_grad unspecified returns a detached alias (the pre-#170897 default)",
        claims=("construct.asarray-returns-same-object",),
        region="tensors requiring grad, requires_grad left unspecified",
        family="autograd",
        source="""
        import torch
        _orig = torch.asarray
        def asarray(obj, *args, **kwargs):
            if isinstance(obj, torch.Tensor) and obj.requires_grad and "requires_grad" not in kwargs:
                kwargs["requires_grad"] = False
            return _orig(obj, *args, **kwargs)
        torch.asarray = asarray
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True) * 2
        assert torch.asarray(x).requires_grad
        """,
    ),
)
