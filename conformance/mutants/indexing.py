"""Mutants of the ``indexing`` area (Indexing (basic views, advanced copies, assignment) and torch.stack of indexed elements); claims in ``conformance/claims/indexing.toml``,
tests in ``conformance/test_indexing.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="getitem-step-copies",
        description="basic indexing with a stepped slice (x[::2]) returns a copy instead of a view",
        claims=("indexing.basic-indexing-is-view",),
        region="slices with a step > 1",
        family="layout",
        source="""
        # A TorchFunctionMode, not a Python __getitem__ on torch.Tensor: that
        # would also give tensors the sequence protocol (sq_item) and change
        # how torch.tensor() reads lists of 0-d tensors. (The mode is entered
        # for the main thread; other threads see real torch.)
        import torch
        from torch.overrides import TorchFunctionMode
        class _StepCopies(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                if getattr(func, "__name__", "") == "__getitem__":
                    index = args[1]
                    items = index if isinstance(index, tuple) else (index,)
                    if any(isinstance(i, slice) and i.step not in (None, 1) for i in items):
                        out = out.clone()
                return out
        _StepCopies().__enter__()
        """,
        witness="""
        import torch
        x = torch.zeros(6)
        v = x[::2]
        x[2] = 1
        assert v[1].item() == 1
        """,
    ),
    Mutant(
        name="setitem-advanced-noop",
        description="assignment through advanced indexing (x[[0, 2]] = v) writes into a temporary copy",
        claims=("indexing.assignment-is-in-place",),
        region="advanced (integer-list or mask) index assignment",
        family="convention",
        source="""
        import torch
        _orig = torch.Tensor.__setitem__
        def __setitem__(self, index, value):
            items = index if isinstance(index, tuple) else (index,)
            if any(isinstance(i, (list, torch.Tensor)) for i in items):
                return None
            return _orig(self, index, value)
        torch.Tensor.__setitem__ = __setitem__
        """,
        witness="""
        import torch
        x = torch.zeros(4)
        x[[0, 2]] = 1.0
        assert x.tolist() == [1.0, 0.0, 1.0, 0.0]
        """,
    ),
    Mutant(
        name="stack-loses-graph",
        description="torch.stack returns the right values but cuts the graph to its inputs",
        claims=(
            "indexing.stack-of-element-list-keeps-graph",
            "indexing.element-list-sees-optimizer-step",
        ),
        source="""
        import torch
        _orig = torch.stack
        def stack(tensors, *args, **kwargs):
            return _orig([t.detach() for t in tensors], *args, **kwargs)
        torch.stack = stack
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        assert torch.stack([x, x]).grad_fn is not None
        """,
    ),
    Mutant(
        name="stack-single-aliases",
        description="torch.stack([t]) of a single tensor returns t.unsqueeze(dim), a view sharing t's memory",
        claims=("indexing.stack-new-memory",),
        region="a list of one tensor",
        family="relation",
        source="""
        import torch
        _orig = torch.stack
        def stack(tensors, dim=0, **kwargs):
            tensors = list(tensors)
            if len(tensors) == 1 and not kwargs:
                return tensors[0].unsqueeze(dim)
            return _orig(tensors, dim, **kwargs)
        torch.stack = stack
        """,
        witness="""
        import torch
        x = torch.ones(3)
        assert torch.stack([x]).data_ptr() != x.data_ptr()
        """,
    ),
)
