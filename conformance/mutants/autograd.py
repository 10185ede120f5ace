"""Mutants of the ``autograd`` area (Leaves, requires_grad, .grad, retain_grad and backward errors); claims in ``conformance/claims/autograd.toml``,
tests in ``conformance/test_autograd.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="requires-grad-noop",
        description="requires_grad_() returns self without changing the flag",
        claims=("autograd.requires-grad-method", "autograd.leaf-table"),
        source="""
        import torch
        def requires_grad_(self, requires_grad=True):
            return self
        torch.Tensor.requires_grad_ = requires_grad_
        """,
        witness="""
        import torch
        x = torch.ones(3)
        assert x.requires_grad_().requires_grad
        """,
    ),
    Mutant(
        name="requires-grad-false-nonleaf-detaches",
        description="requires_grad_(False) on a non-leaf (non-view) silently detaches it in place instead of raising",
        claims=("autograd.requires-grad-nonleaf",),
        region="non-leaf non-view tensors",
        family="autograd",
        source="""
        import torch
        _orig = torch.Tensor.requires_grad_
        def requires_grad_(self, requires_grad=True):
            if not requires_grad and not self.is_leaf and not self._is_view():
                return self.detach_()
            return _orig(self, requires_grad)
        torch.Tensor.requires_grad_ = requires_grad_
        """,
        witness="""
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        try:
            y.requires_grad_(False)
        except RuntimeError:
            pass
        else:
            raise AssertionError("requires_grad_(False) on a non-leaf did not raise")
        """,
    ),
    Mutant(
        name="requires-grad-integer-silent",
        description="requires_grad_(True) on an integer/bool tensor silently does nothing instead of raising",
        claims=("autograd.requires-grad-integer-raises",),
        region="integer and bool tensors",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.requires_grad_
        def requires_grad_(self, requires_grad=True):
            if requires_grad and not (self.is_floating_point() or self.is_complex()):
                return self
            return _orig(self, requires_grad)
        torch.Tensor.requires_grad_ = requires_grad_
        """,
        witness="""
        import torch
        try:
            torch.zeros(3, dtype=torch.int64).requires_grad_()
        except RuntimeError:
            pass
        else:
            raise AssertionError("requires_grad_ on an integer tensor did not raise")
        """,
    ),
    Mutant(
        name="retain-grad-noop",
        description="retain_grad() does nothing: a non-leaf's .grad stays None after backward",
        claims=("autograd.retain-grad-populates",),
        source="""
        import torch
        def retain_grad(self):
            return None
        torch.Tensor.retain_grad = retain_grad
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.sum().backward()
        assert y.grad is not None
        """,
    ),
    Mutant(
        name="retain-grad-noop-views",
        description="retain_grad() on a non-leaf *view* does nothing (other non-leaves are fine)",
        claims=("autograd.retain-grad-populates", "autograd.retain-grad-requires-grad"),
        region="non-leaf views",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.retain_grad
        def retain_grad(self):
            if self._is_view():
                return None
            return _orig(self)
        torch.Tensor.retain_grad = retain_grad
        """,
        witness="""
        import torch
        x = torch.ones(4, requires_grad=True)
        y = x[1:]
        y.retain_grad()
        y.sum().backward()
        assert y.grad is not None
        """,
    ),
    Mutant(
        name="retain-grad-no-grad-silent",
        description="retain_grad() on a tensor that does not require grad returns silently instead of raising",
        claims=("autograd.retain-grad-requires-grad",),
        region="tensors that do not require grad",
        family="autograd",
        source="""
        import torch
        _orig = torch.Tensor.retain_grad
        def retain_grad(self):
            if not self.requires_grad:
                return None
            return _orig(self)
        torch.Tensor.retain_grad = retain_grad
        """,
        witness="""
        import torch
        try:
            torch.ones(3).retain_grad()
        except RuntimeError:
            pass
        else:
            raise AssertionError("retain_grad on a tensor not requiring grad did not raise")
        """,
    ),
    Mutant(
        name="grad-setter-reshapes",
        description="assigning .grad of another shape with the same numel silently reshapes it instead of raising",
        claims=("autograd.grad-setter-validates",),
        region="a .grad of another shape with the same numel",
        family="relation",
        source="""
        import torch
        _desc = torch._C.TensorBase.grad
        def _set(self, g):
            if isinstance(g, torch.Tensor) and g.shape != self.shape and g.numel() == self.numel():
                g = g.reshape(self.shape)
            _desc.__set__(self, g)
        torch.Tensor.grad = property(_desc.__get__, _set, _desc.__delete__)
        """,
        witness="""
        import torch
        x = torch.ones(2, 3, requires_grad=True)
        try:
            x.grad = torch.ones(3, 2)
        except RuntimeError:
            pass
        else:
            raise AssertionError("assigning a grad of the wrong shape did not raise")
        """,
    ),
    Mutant(
        name="nonleaf-grad-silent",
        description="reading .grad of a non-leaf does not warn",
        claims=("autograd.nonleaf-grad-warns",),
        region="non-leaf tensors",
        family="autograd",
        source="""
        import torch
        import warnings
        _desc = torch._C.TensorBase.grad
        def _get(self):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _desc.__get__(self)
        torch.Tensor.grad = property(_get, _desc.__set__, _desc.__delete__)
        """,
        witness="""
        import warnings
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y.grad
        assert any("not a leaf" in str(x.message) for x in w)
        """,
    ),
    Mutant(
        name="backward-retains-graph",
        description="backward() always keeps the graph, so a second backward silently succeeds",
        claims=("autograd.backward-twice-raises",),
        source="""
        import torch
        import torch.autograd
        _orig = torch.autograd.backward
        def backward(tensors, grad_tensors=None, retain_graph=None, *args, **kwargs):
            return _orig(tensors, grad_tensors, True, *args, **kwargs)
        torch.autograd.backward = backward
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        try:
            y.backward()
        except RuntimeError:
            pass
        else:
            raise AssertionError("a second backward did not raise")
        """,
    ),
    Mutant(
        name="backward-implicit-ones",
        description="backward() of a non-scalar output without a gradient silently uses ones",
        claims=("autograd.nonscalar-backward-needs-gradient",),
        region="non-scalar outputs without a gradient argument",
        family="relation",
        source="""
        import torch
        import torch.autograd
        _orig = torch.autograd.backward
        def backward(tensors, grad_tensors=None, *args, **kwargs):
            if (grad_tensors is None and isinstance(tensors, torch.Tensor)
                    and tensors.numel() != 1):
                grad_tensors = torch.ones_like(tensors)
            return _orig(tensors, grad_tensors, *args, **kwargs)
        torch.autograd.backward = backward
        """,
        witness="""
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        try:
            y.backward()
        except RuntimeError:
            pass
        else:
            raise AssertionError("backward of a non-scalar without gradient did not raise")
        """,
    ),
)
