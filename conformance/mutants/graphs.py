"""Mutants of the ``graphs`` area (Autograd graphs); claims in ``conformance/claims/graphs.toml``,
tests in ``conformance/test_graphs.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="getitem-no-grad-detaches",
        description="indexing under no_grad returns a view that does not require grad (the view exception 'fixed')",
        claims=("graphs.disabled-mode-views", "gradmode.views-in-disabled-mode-require-grad"),
        region="indexing inside no_grad",
        family="mode",
        source="""
        # A TorchFunctionMode (see getitem-step-copies); main thread only.
        import torch
        from torch.overrides import TorchFunctionMode
        class _NoGradIndexDetaches(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                if (getattr(func, "__name__", "") == "__getitem__" and args[0].requires_grad
                        and not torch.is_grad_enabled() and isinstance(out, torch.Tensor)):
                    out = out.detach()
                return out
        _NoGradIndexDetaches().__enter__()
        """,
        witness="""
        import torch
        x = torch.ones(4, requires_grad=True)
        with torch.no_grad():
            v = x[1:]
        assert v.requires_grad
        """,
    ),
    Mutant(
        name="backward-overwrites-grad",
        description="backward() resets .grad of the leaves it reaches before running, so gradients are overwritten instead of accumulated",
        claims=("graphs.retain-graph-accumulates",),
        source="""
        import torch
        _backward = torch.Tensor.backward
        def backward(self, *args, **kwargs):
            stack = [self.grad_fn] if self.grad_fn is not None else []
            seen = set()
            while stack:
                fn = stack.pop()
                if fn is None or id(fn) in seen:
                    continue
                seen.add(id(fn))
                variable = getattr(fn, "variable", None)
                if variable is not None:
                    variable.grad = None
                stack.extend(f for f, _ in fn.next_functions)
            return _backward(self, *args, **kwargs)
        torch.Tensor.backward = backward
        """,
        witness="""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        assert x.grad.tolist() == [5.0, 5.0], x.grad
        """,
    ),
    Mutant(
        name="sigmoid-backward-reads-input",
        description="sigmoid's backward recomputes sigmoid from its input's current value instead of reading the output it saved",
        claims=("graphs.data-silent-wrong-gradient",),
        source="""
        import torch
        _sigmoid = torch.sigmoid
        class _Sigmoid(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.x = x  # a plain reference: no saved-tensor version check
                return _sigmoid(x)
            @staticmethod
            def backward(ctx, grad):
                s = _sigmoid(ctx.x)
                return grad * (s * (1 - s)).conj()
        def sigmoid(input, *, out=None):
            return _Sigmoid.apply(input)
        torch.sigmoid = sigmoid
        torch.Tensor.sigmoid = sigmoid
        """,
        witness="""
        import torch
        x = torch.tensor([0.5, -1.0], requires_grad=True)
        y = torch.sigmoid(x)
        want = (y * (1 - y)).detach()
        x.data.mul_(3.0)
        y.sum().backward()
        assert torch.equal(x.grad, want), (x.grad, want)
        """,
    ),
    Mutant(
        name="view-grad-fn-eager",
        description="in-place ops and retain_grad() ask for a view's grad_fn first, as if torch gave views whose root started to require grad their grad_fn eagerly: an in-place op on such a lazy view no longer raises the leaf error, retain_grad() on it takes",
        claims=("graphs.lazy-view-grad-fn",),
        region="lazy views (grad-mode views whose root started to require grad later)",
        family="autograd",
        source="""
        import torch
        def _eager(name):
            method = getattr(torch.Tensor, name)
            def f(self, *args, **kwargs):
                try:
                    self.grad_fn
                except RuntimeError:
                    pass
                return method(self, *args, **kwargs)
            setattr(torch.Tensor, name, f)
        for _name in ("mul_", "add_", "copy_", "retain_grad"):
            _eager(_name)
        """,
        witness="""
        import torch
        base = torch.zeros(3)
        v = base[:2]
        w = torch.ones((), requires_grad=True)
        base.mul_(w)  # base now requires grad; v is a lazy view (no grad_fn yet)
        try:
            v.add_(1.0)
        except RuntimeError as e:
            assert "leaf Variable that requires grad" in str(e)
        else:
            raise AssertionError("in-place op on a lazy view did not raise the leaf error")
        """,
    ),
)
