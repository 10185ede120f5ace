"""Autograd mutants for the generated-graph properties (``claims/graphs.toml``).

Merge into :data:`tests.mutants.MUTANTS` (``MUTANTS.update(GRAPH_MUTANTS)``).
Each source patches torch at interpreter start-up, like the mutants there.
"""

from __future__ import annotations

#: name -> (description, source patched into torch at start-up)
GRAPH_MUTANTS: dict[str, tuple[str, str]] = {
    "data-shares-version-counter": (
        ".data returns detach(): it shares the version counter, so a write through "
        ".data to a saved tensor makes backward raise instead of giving a silently wrong gradient",
        """
        import torch
        _data = torch._C.TensorBase.data
        def _get(self):
            return self.detach()
        def _set(self, value):
            _data.__set__(self, value)
        torch.Tensor.data = property(_get, _set)
        """,
    ),
    "detach-own-version-counter": (
        "detach() returns the old .data alias: same storage, but its own version counter, "
        "so a write through it to a saved tensor goes unnoticed (silent instead of an error)",
        """
        import torch
        _data = torch._C.TensorBase.data.__get__
        def _detach(self):
            return _data(self)
        torch.Tensor.detach = _detach
        torch.detach = _detach
        """,
    ),
    "backward-overwrites-grad": (
        "backward() resets .grad of the leaves it reaches before running, so gradients "
        "are overwritten instead of accumulated",
        """
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
    ),
    "sigmoid-backward-reads-input": (
        "sigmoid's backward recomputes sigmoid from its input's current value "
        "instead of reading the output it saved",
        """
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
    ),
    "view-grad-fn-eager": (
        "in-place ops and retain_grad() ask for a view's grad_fn first, as if torch gave "
        "views whose root started to require grad their grad_fn eagerly: an in-place op on "
        "such a lazy view no longer raises the leaf error, retain_grad() on it takes",
        """
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
    ),
}
