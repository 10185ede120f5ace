"""Mutants of the ``copy`` area (Tensor.copy_, empty_like(z).copy_(z), clone().detach() and detach().clone()); claims in ``conformance/claims/copy.toml``,
tests in ``conformance/test_copy.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="copy-loses-graph",
        description="copy_() copies the values but not the autograd history of src",
        claims=("copy.differentiable-wrt-src",),
        source="""
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if isinstance(src, torch.Tensor):
                src = src.detach()
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        y = torch.empty(3).copy_(x)
        assert y.requires_grad and y.grad_fn is not None
        """,
    ),
    Mutant(
        name="copy-refuses-broadcast",
        description="copy_() raises unless src has exactly dst's shape (no broadcasting)",
        claims=("copy.broadcasts-src",),
        region="src of another shape that broadcasts to dst",
        family="relation",
        source="""
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if isinstance(src, torch.Tensor) and src.shape != self.shape:
                raise RuntimeError(f"copy_: shape {tuple(src.shape)} != {tuple(self.shape)}")
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        witness="""
        import torch
        try:
            y = torch.zeros(2, 3).copy_(torch.arange(3.0))
        except RuntimeError as e:
            raise AssertionError(f"copy_ refused a broadcastable src: {e}")
        assert torch.equal(y[1], torch.arange(3.0))
        """,
    ),
    Mutant(
        name="copy-non-blocking-skips",
        description="copy_(src, non_blocking=True) on the same device returns before copying",
        claims=("copy.non-blocking-no-effect-same-device",),
        region="non_blocking=True on one device",
        family="convention",
        source="""
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, non_blocking=False):
            if non_blocking and isinstance(src, torch.Tensor) and src.device == self.device:
                return self
            return _orig(self, src, non_blocking)
        torch.Tensor.copy_ = copy_
        """,
        witness="""
        import torch
        y = torch.zeros(3).copy_(torch.ones(3), non_blocking=True)
        assert torch.equal(y, torch.ones(3))
        """,
    ),
    Mutant(
        name="copy-into-view-of-leaf-allowed",
        description="copy_() into a view of a leaf that requires grad silently writes instead of raising",
        claims=("copy.leaf-requiring-grad-raises",),
        region="destinations that are views of a leaf requiring grad",
        family="autograd",
        source="""
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            base = self._base
            if (torch.is_grad_enabled() and base is not None and base.is_leaf
                    and base.requires_grad):
                with torch.no_grad():
                    return _orig(self, src, *args, **kwargs)
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        witness="""
        import torch
        x = torch.zeros(4, requires_grad=True)
        try:
            x[1:].copy_(torch.ones(3))
        except RuntimeError:
            pass
        else:
            raise AssertionError("copy_ into a view of a leaf requiring grad did not raise")
        """,
    ),
    Mutant(
        name="copy-overlap-silent",
        description="copy_() into a self-overlapping (expanded) destination silently does nothing",
        claims=("copy.internal-overlap-raises", "copy.not-broadcastable-raises"),
        region="self-overlapping (expanded) destinations",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride())):
                return self
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        witness="""
        import torch
        d = torch.zeros(3).expand(2, 3)
        try:
            d.copy_(torch.ones(2, 3))
        except RuntimeError:
            pass
        else:
            raise AssertionError("copy_ into an expanded tensor did not raise")
        """,
    ),
    Mutant(
        name="copy-convert-rebinds-storage",
        description="copy_() from a src of another dtype converts into fresh memory and rebinds dst to it (dst's base and other views never see the values)",
        claims=("copy.converts-dtype",),
        region="src of another dtype than dst",
        family="relation",
        source="""
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if (isinstance(src, torch.Tensor) and src.dtype != self.dtype
                    and not self.requires_grad and not src.requires_grad
                    and not self.is_inference() and not torch.is_inference_mode_enabled()):
                new = torch.empty_like(self)
                _orig(new, src, *args, **kwargs)
                with torch.no_grad():
                    self.set_(new.untyped_storage(), new.storage_offset(), new.size(), new.stride())
                return self
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        witness="""
        import torch
        base = torch.zeros(4, 3)
        base[1:].copy_(torch.ones(3, 3, dtype=torch.int64))
        assert base.sum().item() == 9
        """,
    ),
    Mutant(
        name="empty-like-aliases-contiguous",
        description="torch.empty_like(t) of a contiguous tensor not requiring grad returns an alias of t",
        claims=("copy.empty-like-copy-no-sharing",),
        region="contiguous inputs that do not require grad",
        family="layout",
        source="""
        import torch
        _orig = torch.empty_like
        def empty_like(input, *args, **kwargs):
            if not args and not kwargs and input.is_contiguous() and not input.requires_grad:
                return input.detach()
            return _orig(input, *args, **kwargs)
        torch.empty_like = empty_like
        """,
        witness="""
        import torch
        x = torch.ones(3)
        assert torch.empty_like(x).data_ptr() != x.data_ptr()
        """,
    ),
)
