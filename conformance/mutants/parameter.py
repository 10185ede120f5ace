"""Mutants of the ``parameter`` area (torch.nn.Parameter aliasing and autograd); claims in ``conformance/claims/parameter.toml``,
tests in ``conformance/test_parameter.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="data-copies-parameter",
        description=".data of an nn.Parameter returns a copy (plain tensors are aliased)",
        claims=("parameter.derived-are-plain-tensors", "data.changes-not-tracked"),
        region="nn.Parameter inputs",
        family="subclass",
        source="""
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            return d.clone() if isinstance(self, torch.nn.Parameter) else d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        witness="""
        import torch
        p = torch.nn.Parameter(torch.ones(3))
        assert p.data.data_ptr() == p.data_ptr()
        """,
    ),
    Mutant(
        name="parameter-no-grad-default-false",
        description="nn.Parameter(t) created under no_grad defaults to requires_grad=False",
        claims=("parameter.requires-grad-under-no-grad",),
        region="Parameters created inside no_grad",
        family="mode",
        source="""
        import torch
        _orig = torch.nn.Parameter.__new__
        def __new__(cls, data=None, requires_grad=True):
            p = _orig(cls, data, requires_grad)
            if not torch.is_grad_enabled():
                p.requires_grad_(False)
            return p
        torch.nn.Parameter.__new__ = __new__
        """,
        witness="""
        import torch
        with torch.no_grad():
            p = torch.nn.Parameter(torch.ones(3))
        assert p.requires_grad
        """,
    ),
    Mutant(
        name="parameter-copies-noncontig",
        description="nn.Parameter(t) of a non-contiguous t copies it (a contiguous 'fast path') instead of aliasing",
        claims=("parameter.aliases-input",),
        region="non-contiguous inputs",
        family="layout",
        source="""
        import torch
        _orig = torch.nn.Parameter.__new__
        def __new__(cls, data=None, requires_grad=True):
            if isinstance(data, torch.Tensor) and not data.is_contiguous():
                data = data.clone(memory_format=torch.contiguous_format)
            return _orig(cls, data, requires_grad)
        torch.nn.Parameter.__new__ = __new__
        """,
        witness="""
        import torch
        t = torch.zeros(2, 3).t()
        assert torch.nn.Parameter(t).data_ptr() == t.data_ptr()
        """,
    ),
)
