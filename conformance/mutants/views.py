"""Mutants of the ``views`` area (View ops, reshape/flatten/expand/view(dtype), storage identity and detach_); claims in ``conformance/claims/views.toml``,
tests in ``conformance/test_views.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="detach_-noop",
        description="detach_() returns self without detaching it from the graph",
        claims=("views.detach_-makes-leaf",),
        source="""
        import torch
        def detach_(self):
            return self
        torch.Tensor.detach_ = detach_
        torch.detach_ = detach_
        """,
        witness="""
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        y.detach_()
        assert y.requires_grad is False and y.grad_fn is None
        """,
    ),
    Mutant(
        name="detach_-views-allowed",
        description="detach_() on a view silently does nothing instead of raising",
        claims=("views.detach_-views-raise",),
        region="views (detach_ on a non-view is correct)",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.detach_
        def detach_(self):
            if self._is_view():
                return self
            return _orig(self)
        torch.Tensor.detach_ = detach_
        torch.detach_ = detach_
        """,
        witness="""
        import torch
        v = torch.ones(4)[1:]
        try:
            v.detach_()
        except RuntimeError:
            pass
        else:
            raise AssertionError("detach_ of a view did not raise")
        """,
    ),
    Mutant(
        name="expand-copies",
        description="expand() materialises a new tensor instead of a stride-0 view",
        claims=("views.tensor-views-ops-return-views",),
        source="""
        import torch
        _orig = torch.Tensor.expand
        def expand(self, *sizes, **kwargs):
            return _orig(self, *sizes, **kwargs).clone()
        torch.Tensor.expand = expand
        """,
        witness="""
        import torch
        x = torch.arange(3.0)
        assert x.expand(2, 3).stride() == (0, 1)
        """,
    ),
    Mutant(
        name="reshape-copies-noncontig",
        description="reshape() of a non-contiguous input always copies, even when a view is possible",
        claims=("views.reshape-view-when-viewable",),
        region="non-contiguous inputs a view could serve",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.reshape
        def reshape(self, *shape):
            if not self.is_contiguous():
                return _orig(self.clone(memory_format=torch.contiguous_format), *shape)
            return _orig(self, *shape)
        torch.Tensor.reshape = reshape
        torch.reshape = lambda input, shape: reshape(input, shape)
        """,
        witness="""
        import torch
        x = torch.zeros(4, 3).t()
        assert x.reshape(3, 2, 2).data_ptr() == x.data_ptr()
        """,
    ),
    Mutant(
        name="flatten-noop-copies",
        description="flatten() that flattens no dimensions returns a copy instead of the input itself",
        claims=("views.flatten-no-dims-returns-input",),
        region="flatten over no dimension (ndim <= 1 or start_dim == end_dim)",
        family="relation",
        source="""
        import torch
        _orig = torch.Tensor.flatten
        def flatten(self, start_dim=0, end_dim=-1, *args):
            out = _orig(self, start_dim, end_dim, *args)
            return out.clone() if out is self else out
        torch.Tensor.flatten = flatten
        torch.flatten = flatten
        """,
        witness="""
        import torch
        x = torch.zeros(2, 3)
        assert torch.flatten(x, 0, 0) is x
        """,
    ),
    Mutant(
        name="flatten-0d-returns-self",
        description="flatten() of a 0-d tensor returns it unchanged (0-d) instead of a 1-D view",
        claims=("views.flatten-zero-dim",),
        region="0-d inputs",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.flatten
        def flatten(self, *args, **kwargs):
            if self.dim() == 0:
                return self
            return _orig(self, *args, **kwargs)
        torch.Tensor.flatten = flatten
        torch.flatten = flatten
        """,
        witness="""
        import torch
        x = torch.tensor(1.0)
        assert torch.flatten(x).shape == (1,)
        """,
    ),
    Mutant(
        name="data-ptr-ignores-offset",
        description="data_ptr() returns the storage start, ignoring the view's storage offset",
        claims=("views.data-ptr-first-element",),
        region="views with a storage offset",
        family="layout",
        source="""
        import torch
        def data_ptr(self):
            return self.untyped_storage().data_ptr()
        torch.Tensor.data_ptr = data_ptr
        """,
        witness="""
        import torch
        x = torch.zeros(4)
        assert x[1:].data_ptr() == x.data_ptr() + x.element_size()
        """,
    ),
)
