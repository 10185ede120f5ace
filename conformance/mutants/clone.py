"""Mutants of the ``clone`` area (torch.clone and Tensor.clone); claims in ``conformance/claims/clone.toml``,
tests in ``conformance/test_clone.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="clone-shares-storage",
        description="clone() returns an alias (detach-like view) instead of a copy",
        claims=("clone.new-storage",),
        source="""
        import torch
        _view_as = torch.Tensor.view_as
        def _clone(self, *args, **kwargs):
            return _view_as(self, self)
        torch.Tensor.clone = _clone
        torch.clone = _clone
        """,
        witness="""
        import torch
        x = torch.arange(4.0)
        assert x.clone().data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        name="clone-shares-expanded",
        description="clone() of an expanded (stride-0) input returns an alias: 'it is read-only anyway'",
        claims=("clone.new-storage",),
        region="expanded (stride-0) inputs",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride())):
                return self.view_as(self)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.arange(3.0).expand(2, 3)
        assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        """,
    ),
    Mutant(
        name="clone-shares-0d",
        description="clone() of a 0-d tensor returns an alias",
        claims=("clone.new-storage",),
        region="0-d inputs",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if self.dim() == 0:
                return self.view_as(self)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.tensor(2.0)
        assert x.clone().data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        name="clone-shares-bool",
        description="clone() of a bool tensor returns an alias (a dtype family)",
        claims=("clone.new-storage",),
        region="bool inputs",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if self.dtype == torch.bool:
                return self.view_as(self)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.tensor([True, False, True])
        assert x.clone().data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        name="clone-ignores-preserve-format",
        description="clone() treats preserve_format as contiguous_format (drops permuted/channels_last strides)",
        claims=("clone.preserve-format-dense-keeps-strides",),
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *, memory_format=torch.preserve_format):
            if memory_format == torch.preserve_format:
                memory_format = torch.contiguous_format
            return _orig(self, memory_format=memory_format)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.zeros(2, 3).t()
        assert x.clone().stride() == x.stride()
        """,
    ),
    Mutant(
        name="clone-channels-last-loses-format",
        description="clone() with preserve_format returns contiguous output for channels_last inputs only",
        claims=("clone.preserve-format-dense-keeps-strides",),
        region="channels_last inputs with preserve_format",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *, memory_format=torch.preserve_format):
            if (memory_format == torch.preserve_format and self.dim() == 4
                    and not self.is_contiguous()
                    and self.is_contiguous(memory_format=torch.channels_last)):
                memory_format = torch.contiguous_format
            return _orig(self, memory_format=memory_format)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
        assert x.clone().stride() == x.stride()
        """,
    ),
    Mutant(
        name="clone-function-ignores-memory-format",
        description="torch.clone(x, memory_format=...) (function form only) ignores the explicit format",
        claims=("clone.explicit-memory-format",),
        region="the function form torch.clone(t, memory_format=...) only",
        family="convention",
        source="""
        import torch
        _orig = torch.clone
        def clone(input, *, memory_format=torch.preserve_format):
            return _orig(input)
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.zeros(2, 3).t()
        assert torch.clone(x, memory_format=torch.contiguous_format).is_contiguous()
        """,
    ),
    Mutant(
        name="clone-detaches-nonleaf-views",
        description="clone() of a non-leaf view that requires grad returns a detached copy",
        claims=("clone.requires-grad-follows-input",),
        region="non-leaf views that require grad",
        family="autograd",
        source="""
        import torch
        _orig = torch.Tensor.clone
        _detach = torch.Tensor.detach
        def clone(self, *args, **kwargs):
            if self.requires_grad and self._is_view() and not self.is_leaf:
                return _orig(_detach(self), *args, **kwargs)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.ones(4, requires_grad=True)
        assert x[1:].clone().requires_grad
        """,
    ),
    Mutant(
        name="clone-shares-version-counter",
        description="clone() of a tensor that does not require grad copies the data but shares the input's version counter",
        claims=("clone.own-version-counter",),
        region="inputs that do not require grad",
        family="autograd",
        source="""
        import torch
        _orig = torch.Tensor.clone
        _detach = torch.Tensor.detach
        def clone(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            if (self.requires_grad or self.is_inference()
                    or torch.is_inference_mode_enabled()):
                return out
            alias = _detach(self)
            with torch.no_grad():
                alias.set_(out.untyped_storage(), out.storage_offset(), out.size(), out.stride())
            return alias
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.ones(3)
        c = x.clone()
        c.add_(1)
        assert x._version == 0
        """,
    ),
    Mutant(
        name="clone-flushes-negative-zero",
        description="clone() of a floating tensor returns +0.0 where its input holds -0.0 (equal under ==, so only a bit-exact value check sees it)",
        claims=("clone.same-values-dtype-shape-device",),
        region="floating inputs holding -0.0",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            if self.dtype.is_floating_point and out.numel():
                d = out.data  # an untracked alias: no version bump, no autograd record
                d.masked_fill_((d == 0) & torch.signbit(d), 0.0)
            return out
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.tensor([1.0, -0.0])
        assert torch.signbit(x.clone())[1].item()
        assert torch.signbit(torch.clone(x))[1].item()
        """,
    ),
    Mutant(
        name="clone-backward-conjugates-complex",
        description="the backward of clone() of a complex tensor returns the conjugate of the incoming gradient instead of the gradient itself",
        claims=("clone.gradient-flows-to-input",),
        region="complex inputs that require grad",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.clone
        class _ConjClone(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, memory_format):
                return _orig(x, memory_format=memory_format)
            @staticmethod
            def backward(ctx, grad):
                return grad.conj(), None
        def clone(self, *, memory_format=torch.preserve_format):
            if self.is_complex() and self.requires_grad and torch.is_grad_enabled():
                return _ConjClone.apply(self, memory_format)
            return _orig(self, memory_format=memory_format)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.zeros(2, dtype=torch.complex64, requires_grad=True)
        g = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
        (gx,) = torch.autograd.grad(x.clone(), x, grad_outputs=g)
        assert torch.equal(gx.resolve_conj(), g)
        """,
    ),
    Mutant(
        name="clone-retains-grad-of-leaf-views",
        description="clone() of a leaf view requiring grad (a strided or offset leaf) calls retain_grad() on the clone: backward populates the clone's own .grad and reading it no longer warns",
        claims=("clone.own-grad-stays-none",),
        region="leaf inputs requiring grad that are views of a larger base",
        family="autograd",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            if self.is_leaf and self.requires_grad and self._is_view() and out.requires_grad:
                out.retain_grad()
            return out
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.zeros(4)[1:].requires_grad_()
        c = x.clone()
        c.sum().backward()
        assert c.grad is None
        """,
    ),
    Mutant(
        name="clone-inference-fast-path-half",
        description="clone() of a half-precision tensor that does not require grad runs under inference_mode (it 'needs no autograd'): the clone is an inference tensor, so clone().requires_grad_() raises",
        claims=("clone.requires-grad-on-clone-is-new-leaf",),
        region="float16/bfloat16 inputs that do not require grad",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if (self.dtype in (torch.float16, torch.bfloat16) and not self.requires_grad
                    and not self.is_inference()):
                with torch.inference_mode():
                    return _orig(self, *args, **kwargs)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.ones(3, dtype=torch.float16)
        try:
            c = x.clone().requires_grad_()
        except RuntimeError as e:
            raise AssertionError(f"x.clone().requires_grad_() raised: {e}")
        assert c.is_leaf and c.requires_grad
        """,
    ),
    Mutant(
        name="clone-stepped-keeps-gaps",
        description="clone() of a stepped (non-dense, non-overlapping) input allocates the input's exact strides, gaps included, so the clone is neither contiguous nor dense",
        claims=(
            "clone.preserve-format-non-dense-keeps-stride-order",
            "clone.preserve-format-non-dense-contiguous",
        ),
        region="stepped (non-dense, non-overlapping) inputs with preserve_format",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def _stepped(t):
            if t.numel() == 0 or any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride())):
                return False
            expected = 1
            for sz, st in sorted(((sz, st) for sz, st in zip(t.shape, t.stride()) if sz != 1),
                                 key=lambda p: p[1]):
                if st != expected:
                    return True
                expected *= sz
            return False
        def clone(self, *, memory_format=torch.preserve_format):
            if memory_format == torch.preserve_format and _stepped(self):
                out = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype,
                                          device=self.device)
                return out.copy_(self)
            return _orig(self, memory_format=memory_format)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        x = torch.arange(8.0).reshape(2, 4)[:, ::2]
        assert x.clone().is_contiguous()
        """,
    ),
    Mutant(
        name="clone-channels-last-accepts-rank-3",
        description="clone(memory_format=torch.channels_last) of a 3-D tensor returns a contiguous clone instead of raising 'required rank 4 tensor'",
        claims=("clone.channels-last-needs-rank-4",),
        region="3-D inputs",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *, memory_format=torch.preserve_format):
            if memory_format == torch.channels_last and self.dim() == 3:
                memory_format = torch.contiguous_format
            return _orig(self, memory_format=memory_format)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        witness="""
        import torch
        try:
            torch.zeros(2, 3, 4).clone(memory_format=torch.channels_last)
        except RuntimeError:
            pass
        else:
            raise AssertionError("clone(memory_format=channels_last) of a 3-D tensor did not raise")
        """,
    ),
)
