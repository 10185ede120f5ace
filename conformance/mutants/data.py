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
)
