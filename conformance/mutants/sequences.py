"""Mutants of the ``sequences`` area (Copy-operation sequences (reference model)); claims in ``conformance/claims/sequences.toml``,
tests in ``conformance/test_copy_sequences.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="seq-contiguous-always-copies",
        description="Tensor.contiguous() returns a copy even when the tensor is already contiguous",
        claims=("sequences.contiguous-self-or-copy",),
        source="""
        import torch
        _clone = torch.Tensor.clone
        def _contiguous(self, memory_format=torch.contiguous_format):
            return _clone(self, memory_format=memory_format)
        torch.Tensor.contiguous = _contiguous
        """,
        witness="""
        import torch
        x = torch.arange(6.0)
        assert x.contiguous() is x
        """,
    ),
    Mutant(
        name="seq-to-copies-when-unchanged",
        description="Tensor.to() copies even when dtype and device already match (as if copy=True)",
        claims=("sequences.to-self-or-copy",),
        source="""
        import torch
        _to = torch.Tensor.to
        def _to_copy(self, *args, **kwargs):
            kwargs["copy"] = True
            return _to(self, *args, **kwargs)
        torch.Tensor.to = _to_copy
        """,
        witness="""
        import torch
        x = torch.arange(6.0)
        assert x.to(torch.float32) is x
        """,
    ),
    Mutant(
        name="seq-transpose-copies-3d",
        description="transpose() returns a copy (dense, same strides, new memory) for 3-D inputs only",
        claims=("sequences.views-alias-base",),
        region="3-D inputs",
        family="layout",
        source="""
        import torch
        _transpose = torch.Tensor.transpose
        def _transpose_3d(self, dim0, dim1):
            out = _transpose(self, dim0, dim1)
            return out.clone() if self.dim() == 3 else out
        torch.Tensor.transpose = _transpose_3d
        torch.transpose = _transpose_3d
        """,
        witness="""
        import torch
        x = torch.zeros(2, 3, 4)
        t = x.transpose(0, 2)
        assert t.data_ptr() == x.data_ptr() and t._base is x
        """,
    ),
    Mutant(
        name="seq-expand-materialises",
        description="expand() returns a materialised copy instead of a stride-0 view",
        claims=("sequences.expand-geometry",),
        source="""
        import torch
        _expand = torch.Tensor.expand
        def _expand_copy(self, *sizes):
            return _expand(self, *sizes).clone(memory_format=torch.contiguous_format)
        torch.Tensor.expand = _expand_copy
        """,
        witness="""
        import torch
        x = torch.zeros(1, 3)
        assert x.expand(4, 3).stride() == (0, 1)
        """,
    ),
    Mutant(
        name="seq-copy-into-view-loses-graph",
        description="copy_ runs without autograd (no graph, no leaf check) when the destination is a view",
        claims=("sequences.leaf-inplace-raises", "sequences.copy-in-place"),
        region="destinations that are views",
        family="autograd",
        source="""
        import torch
        _copy = torch.Tensor.copy_
        def _copy_(self, src, non_blocking=False):
            if self._is_view():
                with torch.no_grad():
                    return _copy(self, src, non_blocking)
            return _copy(self, src, non_blocking)
        torch.Tensor.copy_ = _copy_
        """,
        witness="""
        import torch
        base = torch.zeros(3)
        src = torch.ones(2, requires_grad=True)
        base[:2].copy_(src)
        assert base.requires_grad and base.grad_fn is not None
        """,
    ),
)
