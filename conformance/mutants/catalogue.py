"""The catalogue of semantic mutants (see :mod:`conformance.mutants`).

Each entry is a :class:`~conformance.mutants.Mutant`: what is broken, for
which inputs, the patch source run at interpreter start-up, and a witness
asserting the real behaviour. Sources keep the real implementation under a
private name and call it, so everything outside the broken case behaves
exactly like real torch. Partial mutants read like a fast path for a special
case that got that case wrong.
"""

from __future__ import annotations

from conformance.mutants import Mutant

A, P = "always", "partial"

CATALOGUE: tuple[Mutant, ...] = (
    # ------------------------------------------------------------------ detach
    Mutant(
        "detach-copies",
        "detach() returns a copy instead of an alias of the input's storage",
        A,
        ("detach.shares-storage", "detach", "views", "version"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            return _orig(self).clone()
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.arange(6.0)
        assert x.detach().data_ptr() == x.data_ptr()
        assert torch.detach(x).data_ptr() == x.data_ptr()
        """,
    ),
    Mutant(
        "detach-copies-noncontig-f64",
        "detach() copies, but only for non-contiguous float64 inputs",
        P,
        ("detach.shares-storage", "detach", "views", "version"),
        """
        import torch
        _orig = torch.Tensor.detach
        def _detach(self):
            out = _orig(self)
            if self.dtype == torch.float64 and not self.is_contiguous():
                out = out.clone()
            return out
        torch.Tensor.detach = _detach
        torch.detach = _detach
        """,
        """
        import torch
        x = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).t()
        assert x.detach().data_ptr() == x.data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "detach-copies-expanded",
        "detach() materialises expanded (stride-0) inputs instead of aliasing them",
        P,
        ("detach.shares-storage", "detach", "views"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride())):
                out = out.clone()
            return out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.arange(3.0).expand(2, 3)
        d = x.detach()
        assert d.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert d.stride() == x.stride()
        """,
        family="layout",
    ),
    Mutant(
        "detach-copies-zero-size",
        "detach() of a zero-size tensor returns a fresh empty tensor (new storage)",
        P,
        ("detach.shares-storage", "detach"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            if self.numel() == 0:
                out = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device)
            return out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.empty(0, 3)
        assert x.detach().untyped_storage() is x.untyped_storage()
        """,
        family="layout",
    ),
    Mutant(
        "detach-copies-0d",
        "detach() of a 0-d tensor copies the scalar",
        P,
        ("detach.shares-storage", "detach", "views", "version"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            return out.clone() if self.dim() == 0 else out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.tensor(3.0)
        assert x.detach().data_ptr() == x.data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "detach-copies-channels-last",
        "detach() copies channels_last (non-contiguous 4-D) inputs",
        P,
        ("detach.shares-storage", "detach", "views"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            if (self.dim() == 4 and not self.is_contiguous()
                    and self.is_contiguous(memory_format=torch.channels_last)):
                out = out.clone()
            return out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
        assert x.detach().data_ptr() == x.data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "detach-copies-bool",
        "detach() copies bool tensors (a dtype family)",
        P,
        ("detach.shares-storage", "detach", "views"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            return out.clone() if self.dtype == torch.bool else out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.tensor([True, False])
        assert x.detach().data_ptr() == x.data_ptr()
        """,
        family="dtype",
    ),
    Mutant(
        "detach-function-copies",
        "torch.detach(t) (function form only) copies; t.detach() is correct",
        P,
        ("detach.shares-storage", "detach", "views"),
        """
        import torch
        _orig = torch.detach
        def detach(input):
            return _orig(input).clone()
        torch.detach = detach
        """,
        """
        import torch
        x = torch.arange(4.0)
        assert torch.detach(x).data_ptr() == x.data_ptr()
        """,
        family="convention",
    ),
    Mutant(
        "detach-keeps-grad-nonleaf",
        "detach() of a non-leaf that requires grad returns a tensor that still requires grad",
        P,
        ("detach.is-leaf", "detach.never-requires-grad", "detach", "autograd"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            if self.requires_grad and not self.is_leaf:
                out.requires_grad_(True)
            return out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True) * 2
        assert x.detach().requires_grad is False
        """,
        family="autograd",
    ),
    Mutant(
        "detach-copies-parameter",
        "detach() of an nn.Parameter snapshots it (copy); plain tensors are aliased",
        P,
        ("detach.parameter-sees-optimizer-step", "detach", "parameter"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            out = _orig(self)
            return out.clone() if isinstance(self, torch.nn.Parameter) else out
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        p = torch.nn.Parameter(torch.ones(3))
        assert p.detach().data_ptr() == p.data_ptr()
        """,
        family="subclass",
    ),
    Mutant(
        "detach-own-version-counter",
        "detach() aliases the storage but gets its own version counter (like .data)",
        A,
        ("detach.inplace-error-when-saved", "detach", "version", "data"),
        """
        import torch
        _data = torch._C.TensorBase.data
        def detach(self):
            return _data.__get__(self)
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.ones(3)
        x.detach().add_(1)
        assert x._version == 1
        """,
    ),
    Mutant(
        "detach-returns-zeros",
        "detach() returns a tensor of zeros (same dtype, shape and device) instead of the input's values",
        A,
        ("detach.keeps-dtype-and-values", "detach"),
        """
        import torch
        _orig = torch.Tensor.detach
        def detach(self):
            return torch.zeros_like(_orig(self))
        torch.Tensor.detach = detach
        torch.detach = detach
        """,
        """
        import torch
        x = torch.arange(1.0, 4.0)
        assert x.detach().tolist() == [1.0, 2.0, 3.0]
        assert torch.detach(x).tolist() == [1.0, 2.0, 3.0]
        """,
    ),
    # --------------------------------------------------------------- detach_
    Mutant(
        "detach_-noop",
        "detach_() returns self without detaching it from the graph",
        A,
        ("views.detach_-makes-leaf", "views", "autograd"),
        """
        import torch
        def detach_(self):
            return self
        torch.Tensor.detach_ = detach_
        torch.detach_ = detach_
        """,
        """
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        y.detach_()
        assert y.requires_grad is False and y.grad_fn is None
        """,
    ),
    Mutant(
        "detach_-views-allowed",
        "detach_() on a view silently does nothing instead of raising",
        P,
        ("views.detach_-views-raise", "views"),
        """
        import torch
        _orig = torch.Tensor.detach_
        def detach_(self):
            if self._is_view():
                return self
            return _orig(self)
        torch.Tensor.detach_ = detach_
        torch.detach_ = detach_
        """,
        """
        import torch
        v = torch.ones(4)[1:]
        try:
            v.detach_()
        except RuntimeError:
            pass
        else:
            raise AssertionError("detach_ of a view did not raise")
        """,
        family="layout",
    ),
    # ------------------------------------------------------------------- clone
    Mutant(
        "clone-shares-storage",
        "clone() returns an alias (detach-like view) instead of a copy",
        A,
        ("clone.new-storage", "clone", "copy", "version"),
        """
        import torch
        _view_as = torch.Tensor.view_as
        def _clone(self, *args, **kwargs):
            return _view_as(self, self)
        torch.Tensor.clone = _clone
        torch.clone = _clone
        """,
        """
        import torch
        x = torch.arange(4.0)
        assert x.clone().data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        "clone-shares-expanded",
        "clone() of an expanded (stride-0) input returns an alias: 'it is read-only anyway'",
        P,
        ("clone.new-storage", "clone", "copy"),
        """
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride())):
                return self.view_as(self)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        """
        import torch
        x = torch.arange(3.0).expand(2, 3)
        assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "clone-shares-0d",
        "clone() of a 0-d tensor returns an alias",
        P,
        ("clone.new-storage", "clone", "copy"),
        """
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if self.dim() == 0:
                return self.view_as(self)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        """
        import torch
        x = torch.tensor(2.0)
        assert x.clone().data_ptr() != x.data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "clone-shares-bool",
        "clone() of a bool tensor returns an alias (a dtype family)",
        P,
        ("clone.new-storage", "clone", "copy"),
        """
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if self.dtype == torch.bool:
                return self.view_as(self)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        """
        import torch
        x = torch.tensor([True, False, True])
        assert x.clone().data_ptr() != x.data_ptr()
        """,
        family="dtype",
    ),
    Mutant(
        "clone-ignores-preserve-format",
        "clone() treats preserve_format as contiguous_format (drops permuted/channels_last strides)",
        A,
        ("clone.preserve-format-dense-keeps-strides", "clone"),
        """
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *, memory_format=torch.preserve_format):
            if memory_format == torch.preserve_format:
                memory_format = torch.contiguous_format
            return _orig(self, memory_format=memory_format)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        """
        import torch
        x = torch.zeros(2, 3).t()
        assert x.clone().stride() == x.stride()
        """,
    ),
    Mutant(
        "clone-channels-last-loses-format",
        "clone() with preserve_format returns contiguous output for channels_last inputs only",
        P,
        ("clone.preserve-format-dense-keeps-strides", "clone"),
        """
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
        """
        import torch
        x = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
        assert x.clone().stride() == x.stride()
        """,
        family="layout",
    ),
    Mutant(
        "clone-function-ignores-memory-format",
        "torch.clone(x, memory_format=...) (function form only) ignores the explicit format",
        P,
        ("clone.explicit-memory-format", "clone"),
        """
        import torch
        _orig = torch.clone
        def clone(input, *, memory_format=torch.preserve_format):
            return _orig(input)
        torch.clone = clone
        """,
        """
        import torch
        x = torch.zeros(2, 3).t()
        assert torch.clone(x, memory_format=torch.contiguous_format).is_contiguous()
        """,
        family="convention",
    ),
    Mutant(
        "clone-detaches-nonleaf-views",
        "clone() of a non-leaf view that requires grad returns a detached copy",
        P,
        ("clone.requires-grad-follows-input", "clone", "autograd"),
        """
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
        """
        import torch
        x = torch.ones(4, requires_grad=True)
        assert x[1:].clone().requires_grad
        """,
        family="autograd",
    ),
    Mutant(
        "clone-shares-version-counter",
        "clone() of a tensor that does not require grad copies the data but shares the input's version counter",
        P,
        ("clone.own-version-counter", "clone", "version", "copy"),
        """
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
        """
        import torch
        x = torch.ones(3)
        c = x.clone()
        c.add_(1)
        assert x._version == 0
        """,
        family="autograd",
    ),
    Mutant(
        "clone-flushes-negative-zero",
        "clone() of a floating tensor returns +0.0 where its input holds -0.0 "
        "(equal under ==, so only a bit-exact value check sees it)",
        P,
        ("clone.same-values-dtype-shape-device", "clone"),
        """
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
        """
        import torch
        x = torch.tensor([1.0, -0.0])
        assert torch.signbit(x.clone())[1].item()
        assert torch.signbit(torch.clone(x))[1].item()
        """,
        family="dtype",
    ),
    # -------------------------------------------------------------------- .data
    Mutant(
        "data-shares-version-counter",
        ".data shares the version counter with its source (behaves like detach())",
        A,
        ("data.changes-not-tracked", "data", "version"),
        """
        import torch
        _desc = torch._C.TensorBase.data
        _detach = torch._C.TensorBase.detach
        torch.Tensor.data = property(lambda self: _detach(self), lambda self, v: _desc.__set__(self, v))
        """,
        """
        import torch
        x = torch.ones(3)
        x.data.add_(1)
        assert x._version == 0
        """,
    ),
    Mutant(
        "data-copies-views",
        ".data of a view returns a copy instead of an alias",
        P,
        ("data.shares-storage", "data"),
        """
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            return d.clone() if self._is_view() else d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        """
        import torch
        x = torch.arange(6.0)[1:]
        assert x.data.data_ptr() == x.data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "data-keeps-grad-nonleaf",
        ".data of a non-leaf that requires grad still requires grad",
        P,
        ("data.out-of-graph", "data"),
        """
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            if self.requires_grad and not self.is_leaf:
                d.requires_grad_(True)
            return d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        """
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        assert y.data.requires_grad is False
        """,
        family="autograd",
    ),
    Mutant(
        "data-copies-parameter",
        ".data of an nn.Parameter returns a copy (plain tensors are aliased)",
        P,
        ("parameter.derived-are-plain-tensors", "data.changes-not-tracked", "parameter", "data"),
        """
        import torch
        _desc = torch._C.TensorBase.data
        def _get(self):
            d = _desc.__get__(self)
            return d.clone() if isinstance(self, torch.nn.Parameter) else d
        torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))
        """,
        """
        import torch
        p = torch.nn.Parameter(torch.ones(3))
        assert p.data.data_ptr() == p.data_ptr()
        """,
        family="subclass",
    ),
    # ------------------------------------------------------------------- copy_
    Mutant(
        "copy-loses-graph",
        "copy_() copies the values but not the autograd history of src",
        A,
        ("copy.differentiable-wrt-src", "copy", "autograd"),
        """
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if isinstance(src, torch.Tensor):
                src = src.detach()
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        y = torch.empty(3).copy_(x)
        assert y.requires_grad and y.grad_fn is not None
        """,
    ),
    Mutant(
        "copy-refuses-broadcast",
        "copy_() raises unless src has exactly dst's shape (no broadcasting)",
        P,
        ("copy.broadcasts-src", "copy"),
        """
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if isinstance(src, torch.Tensor) and src.shape != self.shape:
                raise RuntimeError(f"copy_: shape {tuple(src.shape)} != {tuple(self.shape)}")
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        """
        import torch
        try:
            y = torch.zeros(2, 3).copy_(torch.arange(3.0))
        except RuntimeError as e:
            raise AssertionError(f"copy_ refused a broadcastable src: {e}")
        assert torch.equal(y[1], torch.arange(3.0))
        """,
        family="relation",
    ),
    Mutant(
        "copy-non-blocking-skips",
        "copy_(src, non_blocking=True) on the same device returns before copying",
        P,
        ("copy.non-blocking-no-effect-same-device", "copy"),
        """
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, non_blocking=False):
            if non_blocking and isinstance(src, torch.Tensor) and src.device == self.device:
                return self
            return _orig(self, src, non_blocking)
        torch.Tensor.copy_ = copy_
        """,
        """
        import torch
        y = torch.zeros(3).copy_(torch.ones(3), non_blocking=True)
        assert torch.equal(y, torch.ones(3))
        """,
        family="convention",
    ),
    Mutant(
        "copy-into-view-of-leaf-allowed",
        "copy_() into a view of a leaf that requires grad silently writes instead of raising",
        P,
        ("copy.leaf-requiring-grad-raises", "copy", "autograd"),
        """
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
        """
        import torch
        x = torch.zeros(4, requires_grad=True)
        try:
            x[1:].copy_(torch.ones(3))
        except RuntimeError:
            pass
        else:
            raise AssertionError("copy_ into a view of a leaf requiring grad did not raise")
        """,
        family="autograd",
    ),
    Mutant(
        "copy-overlap-silent",
        "copy_() into a self-overlapping (expanded) destination silently does nothing",
        P,
        ("copy.internal-overlap-raises", "copy.not-broadcastable-raises", "copy", "views"),
        """
        import torch
        _orig = torch.Tensor.copy_
        def copy_(self, src, *args, **kwargs):
            if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride())):
                return self
            return _orig(self, src, *args, **kwargs)
        torch.Tensor.copy_ = copy_
        """,
        """
        import torch
        d = torch.zeros(3).expand(2, 3)
        try:
            d.copy_(torch.ones(2, 3))
        except RuntimeError:
            pass
        else:
            raise AssertionError("copy_ into an expanded tensor did not raise")
        """,
        family="layout",
    ),
    Mutant(
        "copy-convert-rebinds-storage",
        "copy_() from a src of another dtype converts into fresh memory and rebinds dst to it "
        "(dst's base and other views never see the values)",
        P,
        ("copy.converts-dtype", "copy"),
        """
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
        """
        import torch
        base = torch.zeros(4, 3)
        base[1:].copy_(torch.ones(3, 3, dtype=torch.int64))
        assert base.sum().item() == 9
        """,
        family="relation",
    ),
    # --------------------------------------------------- tensor / new_tensor
    Mutant(
        "tensor-shares",
        "torch.tensor(t) of a tensor returns an alias (detach) instead of a copy",
        A,
        ("construct.tensor-is-detach-clone", "construct", "indexing"),
        """
        import torch
        _orig = torch.tensor
        def tensor(data, *args, **kwargs):
            out = _orig(data, *args, **kwargs)
            if isinstance(data, torch.Tensor) and out.dtype == data.dtype and out.device == data.device:
                alias = data.detach()
                if out.requires_grad:
                    alias.requires_grad_(True)
                return alias
            return out
        torch.tensor = tensor
        """,
        """
        import torch
        x = torch.arange(3.0)
        assert torch.tensor(x).data_ptr() != x.data_ptr()
        """,
    ),
    Mutant(
        "tensor-shares-ndarray-float32",
        "torch.tensor(a) of a C-contiguous float32 ndarray shares its memory (from_numpy fast path)",
        P,
        ("numpy.tensor-copies-ndarray", "numpy", "construct"),
        """
        import torch
        import numpy as np
        _orig = torch.tensor
        def tensor(data, *args, **kwargs):
            if (isinstance(data, np.ndarray) and data.dtype == np.float32 and not args
                    and not kwargs and data.flags.c_contiguous and data.flags.writeable):
                return torch.from_numpy(data)
            return _orig(data, *args, **kwargs)
        torch.tensor = tensor
        """,
        """
        import numpy as np
        import torch
        a = np.zeros(3, dtype=np.float32)
        t = torch.tensor(a)
        a[0] = 5
        assert t[0].item() == 0
        """,
        family="dtype",
    ),
    Mutant(
        "tensor-no-grad-drops-requires-grad",
        "torch.tensor(..., requires_grad=True) under no_grad returns a tensor that does not require grad",
        P,
        ("gradmode.no-grad-factories-unaffected", "gradmode", "construct"),
        """
        import torch
        _orig = torch.tensor
        def tensor(data, *args, **kwargs):
            out = _orig(data, *args, **kwargs)
            if out.requires_grad and not torch.is_grad_enabled():
                out.requires_grad_(False)
            return out
        torch.tensor = tensor
        """,
        """
        import torch
        with torch.no_grad():
            t = torch.tensor([1.0], requires_grad=True)
        assert t.requires_grad
        """,
        family="mode",
    ),
    Mutant(
        "new-tensor-shares-same-dtype",
        "x.new_tensor(t) aliases t when t already has x's dtype and device",
        P,
        ("construct.new-tensor-is-detach-clone", "construct"),
        """
        import torch
        _orig = torch.Tensor.new_tensor
        def new_tensor(self, data, *args, **kwargs):
            out = _orig(self, data, *args, **kwargs)
            if (isinstance(data, torch.Tensor) and data.dtype == out.dtype
                    and data.device == out.device):
                alias = data.detach()
                if out.requires_grad:
                    alias.requires_grad_(True)
                return alias
            return out
        torch.Tensor.new_tensor = new_tensor
        """,
        """
        import torch
        x = torch.arange(3.0)
        assert torch.zeros(1).new_tensor(x).data_ptr() != x.data_ptr()
        """,
        family="relation",
    ),
    # --------------------------------------------------------------- as_tensor
    Mutant(
        "as-tensor-copies",
        "torch.as_tensor always copies (tensor and ndarray inputs)",
        A,
        ("construct.as-tensor-identity", "construct", "numpy"),
        """
        import torch
        _orig = torch.as_tensor
        def as_tensor(data, *args, **kwargs):
            out = _orig(data, *args, **kwargs)
            return out.clone() if isinstance(out, torch.Tensor) else out
        torch.as_tensor = as_tensor
        """,
        """
        import torch
        x = torch.arange(3.0)
        assert torch.as_tensor(x) is x
        """,
    ),
    Mutant(
        "as-tensor-explicit-dtype-copies",
        "torch.as_tensor(t, dtype=t.dtype) (explicit but unchanged dtype) copies; as_tensor(t) is fine",
        P,
        ("construct.as-tensor-identity", "construct"),
        """
        import torch
        _orig = torch.as_tensor
        def as_tensor(data, dtype=None, device=None):
            out = _orig(data, dtype=dtype, device=device)
            if isinstance(data, torch.Tensor) and dtype is not None and out is data:
                return data.clone()
            return out
        torch.as_tensor = as_tensor
        """,
        """
        import torch
        x = torch.arange(3.0)
        assert torch.as_tensor(x, dtype=torch.float32) is x
        """,
        family="convention",
    ),
    Mutant(
        "as-tensor-convert-detaches",
        "torch.as_tensor(t, dtype=other) of a tensor requiring grad cuts the graph",
        P,
        ("construct.as-tensor-converts-with-history", "construct"),
        """
        import torch
        _orig = torch.as_tensor
        def as_tensor(data, dtype=None, device=None):
            out = _orig(data, dtype=dtype, device=device)
            if isinstance(data, torch.Tensor) and out is not data and data.requires_grad:
                out = out.detach()
            return out
        torch.as_tensor = as_tensor
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        assert torch.as_tensor(x, dtype=torch.float64).grad_fn is not None
        """,
        family="autograd",
    ),
    # ----------------------------------------------------------------- asarray
    Mutant(
        "asarray-copy-true-ignored",
        "torch.asarray(t, copy=True) returns an alias of t when no dtype/device conversion is needed",
        P,
        ("construct.asarray-copy-true-never-shares", "construct"),
        """
        import torch
        _orig = torch.asarray
        def asarray(obj, *args, **kwargs):
            if (isinstance(obj, torch.Tensor) and kwargs.get("copy") is True
                    and kwargs.get("dtype") in (None, obj.dtype)
                    and kwargs.get("device") in (None, obj.device)):
                out = obj.detach()
                if kwargs.get("requires_grad", obj.requires_grad):
                    out.requires_grad_(True)
                return out
            return _orig(obj, *args, **kwargs)
        torch.asarray = asarray
        """,
        """
        import torch
        x = torch.arange(3.0)
        assert torch.asarray(x, copy=True).data_ptr() != x.data_ptr()
        """,
        family="convention",
    ),
    Mutant(
        "asarray-default-drops-grad",
        "torch.asarray(t) with requires_grad unspecified returns a detached alias (the pre-#170897 default)",
        P,
        ("construct.asarray-returns-same-object", "construct"),
        """
        import torch
        _orig = torch.asarray
        def asarray(obj, *args, **kwargs):
            if isinstance(obj, torch.Tensor) and obj.requires_grad and "requires_grad" not in kwargs:
                kwargs["requires_grad"] = False
            return _orig(obj, *args, **kwargs)
        torch.asarray = asarray
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True) * 2
        assert torch.asarray(x).requires_grad
        """,
        family="autograd",
    ),
    # ------------------------------------------------------ from_numpy / numpy
    Mutant(
        "from-numpy-copies",
        "torch.from_numpy copies the array instead of sharing its memory",
        A,
        ("numpy.from-numpy-shares-memory", "numpy"),
        """
        import torch
        _orig = torch.from_numpy
        def from_numpy(a):
            return _orig(a).clone()
        torch.from_numpy = from_numpy
        """,
        """
        import numpy as np
        import torch
        a = np.zeros(3)
        t = torch.from_numpy(a)
        a[0] = 1
        assert t[0].item() == 1
        """,
    ),
    Mutant(
        "from-numpy-copies-non-c-contiguous",
        "torch.from_numpy copies arrays that are not C-contiguous (Fortran order, strided)",
        P,
        ("numpy.from-numpy-shares-memory", "numpy"),
        """
        import torch
        _orig = torch.from_numpy
        def from_numpy(a):
            t = _orig(a)
            return t if a.flags.c_contiguous else t.clone()
        torch.from_numpy = from_numpy
        """,
        """
        import numpy as np
        import torch
        a = np.zeros((2, 3)).T
        t = torch.from_numpy(a)
        a[0, 0] = 1
        assert t[0, 0].item() == 1
        """,
        family="layout",
    ),
    Mutant(
        "numpy-copies",
        "Tensor.numpy() returns a copy instead of a view of the tensor's memory",
        A,
        ("numpy.numpy-shares-storage", "numpy"),
        """
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *args, **kwargs):
            return _orig(self, *args, **kwargs).copy()
        torch.Tensor.numpy = numpy
        """,
        """
        import torch
        t = torch.zeros(3)
        a = t.numpy()
        t[0] = 1
        assert a[0] == 1
        """,
    ),
    Mutant(
        "numpy-copies-integral",
        "Tensor.numpy() copies integer tensors (a dtype family)",
        P,
        ("numpy.numpy-shares-storage", "numpy"),
        """
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *args, **kwargs):
            a = _orig(self, *args, **kwargs)
            if not self.is_floating_point() and not self.is_complex() and self.dtype != torch.bool:
                a = a.copy()
            return a
        torch.Tensor.numpy = numpy
        """,
        """
        import torch
        t = torch.zeros(3, dtype=torch.int32)
        a = t.numpy()
        t[0] = 1
        assert a[0] == 1
        """,
        family="dtype",
    ),
    Mutant(
        "numpy-copies-noncontig",
        "Tensor.numpy() copies non-contiguous tensors instead of returning a strided view",
        P,
        ("numpy.numpy-shares-storage", "numpy"),
        """
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *args, **kwargs):
            a = _orig(self, *args, **kwargs)
            return a if self.is_contiguous() else a.copy()
        torch.Tensor.numpy = numpy
        """,
        """
        import torch
        t = torch.zeros(2, 3).t()
        a = t.numpy()
        t[0, 0] = 1
        assert a[0, 0] == 1
        """,
        family="layout",
    ),
    Mutant(
        "numpy-no-grad-refuses",
        "Tensor.numpy() refuses a tensor that requires grad even under no_grad",
        P,
        ("numpy.numpy-refuses-grad-under-no-grad", "numpy"),
        """
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *, force=False):
            if self.requires_grad and not force and not torch.is_grad_enabled():
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                                   "Use tensor.detach().numpy() instead.")
            return _orig(self, force=force)
        torch.Tensor.numpy = numpy
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        with torch.no_grad():
            try:
                a = x.numpy()
            except RuntimeError as e:
                raise AssertionError(f"numpy() under no_grad refused: {e}")
        assert a.shape == (3,)
        """,
        family="mode",
    ),
    Mutant(
        "numpy-force-copies",
        "Tensor.numpy(force=True) copies even a plain CPU tensor it could share",
        P,
        ("numpy.numpy-force", "numpy"),
        """
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *, force=False):
            a = _orig(self, force=force)
            return a.copy() if force else a
        torch.Tensor.numpy = numpy
        """,
        """
        import torch
        t = torch.zeros(3)
        a = t.numpy(force=True)
        t[0] = 1
        assert a[0] == 1
        """,
        family="convention",
    ),
    Mutant(
        "numpy-detaches-float-requires-grad",
        "Tensor.numpy() on a real floating tensor that requires grad silently detaches "
        "instead of raising (complex and other dtypes still refuse)",
        P,
        ("numpy.numpy-refuses-grad-conj-dtype", "numpy"),
        """
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *, force=False):
            if self.requires_grad and self.is_floating_point() and torch.is_grad_enabled():
                with torch.no_grad():
                    return _orig(self, force=force)
            return _orig(self, force=force)
        torch.Tensor.numpy = numpy
        """,
        """
        import torch
        t = torch.zeros(3, requires_grad=True)
        try:
            t.numpy()
        except RuntimeError:
            pass
        else:
            raise AssertionError("numpy() of a tensor that requires grad did not raise")
        """,
        family="dtype",
    ),
    # -------------------------------------------------------------------- to()
    Mutant(
        "to-always-copies",
        "Tensor.to() copies even when dtype and device already match",
        A,
        ("to.same-dtype-device-returns-self", "to", "construct"),
        """
        import torch
        _orig = torch.Tensor.to
        def to(self, *args, **kwargs):
            kwargs["copy"] = True
            return _orig(self, *args, **kwargs)
        torch.Tensor.to = to
        """,
        """
        import torch
        x = torch.ones(3)
        assert x.to(torch.float32) is x
        """,
    ),
    Mutant(
        "to-kwarg-dtype-copies",
        "x.to(dtype=x.dtype) (keyword form) copies; x.to(x.dtype) returns self",
        P,
        ("to.same-dtype-device-returns-self", "to"),
        """
        import torch
        _orig = torch.Tensor.to
        def to(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            if out is self and not args and "dtype" in kwargs:
                return _orig(self, *args, **{**kwargs, "copy": True})
            return out
        torch.Tensor.to = to
        """,
        """
        import torch
        x = torch.ones(3)
        assert x.to(dtype=torch.float32) is x
        """,
        family="convention",
    ),
    Mutant(
        "to-dtype-change-detaches",
        "x.to(other floating dtype) of a tensor requiring grad returns a detached copy",
        P,
        ("to.dtype-change-in-graph", "to", "autograd", "construct"),
        """
        import torch
        _orig = torch.Tensor.to
        def to(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            if out is not self and self.requires_grad and out.dtype != self.dtype:
                out = out.detach()
            return out
        torch.Tensor.to = to
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        assert x.to(torch.float64).grad_fn is not None
        """,
        family="autograd",
    ),
    Mutant(
        "to-dtype-change-ignores-memory-format",
        "x.to(dtype, memory_format=fmt) ignores fmt whenever the dtype also changes "
        "(keeps the input's strides, as preserve_format would)",
        P,
        ("to.memory-format-honoured", "to"),
        """
        import torch
        _orig = torch.Tensor.to
        def to(self, *args, **kwargs):
            dtype = kwargs.get("dtype")
            if dtype is None and args and isinstance(args[0], torch.dtype):
                dtype = args[0]
            fmt = kwargs.get("memory_format")
            if (dtype is not None and dtype != self.dtype and fmt is not None
                    and fmt != torch.preserve_format):
                kwargs = {**kwargs, "memory_format": torch.preserve_format}
            return _orig(self, *args, **kwargs)
        torch.Tensor.to = to
        """,
        """
        import torch
        x = torch.arange(6.0).reshape(2, 3).t()
        assert x.to(torch.float64, memory_format=torch.contiguous_format).is_contiguous()
        """,
        family="relation",
    ),
    Mutant(
        "to-same-itemsize-reinterprets",
        "x.to(dtype) between dtypes of the same element size reinterprets the bits (a view) instead of converting",
        P,
        ("to.conversion-copies", "to", "construct", "autograd"),
        """
        import torch
        _orig = torch.Tensor.to
        def to(self, *args, **kwargs):
            dtype = kwargs.get("dtype")
            if dtype is None and args and isinstance(args[0], torch.dtype):
                dtype = args[0]
            if (dtype is not None and dtype != self.dtype and not self.requires_grad
                    and dtype.itemsize == self.dtype.itemsize and self.dim() > 0
                    and self.stride(-1) == 1 and not kwargs.get("copy")
                    and torch.bool not in (dtype, self.dtype)):
                return self.view(dtype)
            return _orig(self, *args, **kwargs)
        torch.Tensor.to = to
        """,
        """
        import torch
        x = torch.tensor([1, 2], dtype=torch.int32)
        assert x.to(torch.float32).tolist() == [1.0, 2.0]
        """,
        family="relation",
    ),
    Mutant(
        "cpu-copies",
        "Tensor.cpu() copies a tensor that is already in CPU memory",
        A,
        ("to.cpu-returns-self", "to"),
        """
        import torch
        _orig = torch.Tensor.cpu
        def cpu(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            return out.clone() if out is self else out
        torch.Tensor.cpu = cpu
        """,
        """
        import torch
        x = torch.ones(3)
        assert x.cpu() is x
        """,
    ),
    Mutant(
        "type-string-copies",
        "x.type('torch.FloatTensor') (string form) copies when the type already matches; x.type(torch.float32) is fine",
        P,
        ("to.type-returns-self", "to"),
        """
        import torch
        _orig = torch.Tensor.type
        def type(self, dtype=None, non_blocking=False, **kwargs):
            out = _orig(self, dtype, non_blocking, **kwargs)
            if isinstance(dtype, str) and out is self:
                return self.clone()
            return out
        torch.Tensor.type = type
        """,
        """
        import torch
        x = torch.ones(3)
        assert x.type("torch.FloatTensor") is x
        """,
        family="convention",
    ),
    # -------------------------------------------------------------- contiguous
    Mutant(
        "contiguous-always-copies",
        "contiguous() copies even when the tensor is already contiguous",
        A,
        ("to.contiguous-returns-self", "to", "views"),
        """
        import torch
        _orig = torch.Tensor.contiguous
        def contiguous(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            return out.clone() if out is self else out
        torch.Tensor.contiguous = contiguous
        """,
        """
        import torch
        x = torch.ones(2, 3)
        assert x.contiguous() is x
        """,
    ),
    Mutant(
        "contiguous-dense-returns-self",
        "contiguous() returns self for any dense input (permuted/transposed too), not only contiguous ones",
        P,
        ("to.contiguous-copies-otherwise", "to", "views"),
        """
        import torch
        _orig = torch.Tensor.contiguous
        def contiguous(self, memory_format=torch.contiguous_format):
            if memory_format == torch.contiguous_format and self.numel() > 0:
                pairs = sorted((st, sz) for sz, st in zip(self.shape, self.stride()) if sz != 1)
                expected = 1
                dense = True
                for st, sz in pairs:
                    dense = dense and st == expected
                    expected *= sz
                if dense:
                    return self
            return _orig(self, memory_format=memory_format)
        torch.Tensor.contiguous = contiguous
        """,
        """
        import torch
        x = torch.zeros(2, 3).t()
        assert x.contiguous().is_contiguous()
        """,
        family="layout",
    ),
    Mutant(
        "contiguous-copy-detaches",
        "contiguous() of a non-contiguous tensor requiring grad returns a detached copy",
        P,
        ("to.contiguous-copy-in-graph", "to", "autograd"),
        """
        import torch
        _orig = torch.Tensor.contiguous
        def contiguous(self, *args, **kwargs):
            out = _orig(self, *args, **kwargs)
            if out is not self and self.requires_grad:
                out = out.detach()
            return out
        torch.Tensor.contiguous = contiguous
        """,
        """
        import torch
        x = torch.ones(2, 3, requires_grad=True)
        assert x.t().contiguous().grad_fn is not None
        """,
        family="autograd",
    ),
    # ------------------------------------------------ requires_grad / grad API
    Mutant(
        "requires-grad-noop",
        "requires_grad_() returns self without changing the flag",
        A,
        ("autograd.requires-grad-method", "autograd.leaf-table", "autograd", "clone"),
        """
        import torch
        def requires_grad_(self, requires_grad=True):
            return self
        torch.Tensor.requires_grad_ = requires_grad_
        """,
        """
        import torch
        x = torch.ones(3)
        assert x.requires_grad_().requires_grad
        """,
    ),
    Mutant(
        "requires-grad-false-nonleaf-detaches",
        "requires_grad_(False) on a non-leaf (non-view) silently detaches it in place instead of raising",
        P,
        ("autograd.requires-grad-nonleaf", "autograd"),
        """
        import torch
        _orig = torch.Tensor.requires_grad_
        def requires_grad_(self, requires_grad=True):
            if not requires_grad and not self.is_leaf and not self._is_view():
                return self.detach_()
            return _orig(self, requires_grad)
        torch.Tensor.requires_grad_ = requires_grad_
        """,
        """
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        try:
            y.requires_grad_(False)
        except RuntimeError:
            pass
        else:
            raise AssertionError("requires_grad_(False) on a non-leaf did not raise")
        """,
        family="autograd",
    ),
    Mutant(
        "requires-grad-integer-silent",
        "requires_grad_(True) on an integer/bool tensor silently does nothing instead of raising",
        P,
        ("autograd.requires-grad-integer-raises", "autograd"),
        """
        import torch
        _orig = torch.Tensor.requires_grad_
        def requires_grad_(self, requires_grad=True):
            if requires_grad and not (self.is_floating_point() or self.is_complex()):
                return self
            return _orig(self, requires_grad)
        torch.Tensor.requires_grad_ = requires_grad_
        """,
        """
        import torch
        try:
            torch.zeros(3, dtype=torch.int64).requires_grad_()
        except RuntimeError:
            pass
        else:
            raise AssertionError("requires_grad_ on an integer tensor did not raise")
        """,
        family="dtype",
    ),
    Mutant(
        "retain-grad-noop",
        "retain_grad() does nothing: a non-leaf's .grad stays None after backward",
        A,
        ("autograd.retain-grad-populates", "autograd"),
        """
        import torch
        def retain_grad(self):
            return None
        torch.Tensor.retain_grad = retain_grad
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.sum().backward()
        assert y.grad is not None
        """,
    ),
    Mutant(
        "retain-grad-noop-views",
        "retain_grad() on a non-leaf *view* does nothing (other non-leaves are fine)",
        P,
        ("autograd.retain-grad-populates", "autograd.retain-grad-requires-grad", "autograd"),
        """
        import torch
        _orig = torch.Tensor.retain_grad
        def retain_grad(self):
            if self._is_view():
                return None
            return _orig(self)
        torch.Tensor.retain_grad = retain_grad
        """,
        """
        import torch
        x = torch.ones(4, requires_grad=True)
        y = x[1:]
        y.retain_grad()
        y.sum().backward()
        assert y.grad is not None
        """,
        family="layout",
    ),
    Mutant(
        "retain-grad-no-grad-silent",
        "retain_grad() on a tensor that does not require grad returns silently instead of raising",
        P,
        ("autograd.retain-grad-requires-grad", "autograd"),
        """
        import torch
        _orig = torch.Tensor.retain_grad
        def retain_grad(self):
            if not self.requires_grad:
                return None
            return _orig(self)
        torch.Tensor.retain_grad = retain_grad
        """,
        """
        import torch
        try:
            torch.ones(3).retain_grad()
        except RuntimeError:
            pass
        else:
            raise AssertionError("retain_grad on a tensor not requiring grad did not raise")
        """,
        family="autograd",
    ),
    Mutant(
        "grad-setter-reshapes",
        "assigning .grad of another shape with the same numel silently reshapes it instead of raising",
        P,
        ("autograd.grad-setter-validates", "autograd"),
        """
        import torch
        _desc = torch._C.TensorBase.grad
        def _set(self, g):
            if isinstance(g, torch.Tensor) and g.shape != self.shape and g.numel() == self.numel():
                g = g.reshape(self.shape)
            _desc.__set__(self, g)
        torch.Tensor.grad = property(_desc.__get__, _set, _desc.__delete__)
        """,
        """
        import torch
        x = torch.ones(2, 3, requires_grad=True)
        try:
            x.grad = torch.ones(3, 2)
        except RuntimeError:
            pass
        else:
            raise AssertionError("assigning a grad of the wrong shape did not raise")
        """,
        family="relation",
    ),
    Mutant(
        "nonleaf-grad-silent",
        "reading .grad of a non-leaf does not warn",
        P,
        ("autograd.nonleaf-grad-warns", "autograd"),
        """
        import torch
        import warnings
        _desc = torch._C.TensorBase.grad
        def _get(self):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _desc.__get__(self)
        torch.Tensor.grad = property(_get, _desc.__set__, _desc.__delete__)
        """,
        """
        import warnings
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y.grad
        assert any("not a leaf" in str(x.message) for x in w)
        """,
        family="autograd",
    ),
    Mutant(
        "backward-retains-graph",
        "backward() always keeps the graph, so a second backward silently succeeds",
        A,
        ("autograd.backward-twice-raises", "autograd"),
        """
        import torch
        import torch.autograd
        _orig = torch.autograd.backward
        def backward(tensors, grad_tensors=None, retain_graph=None, *args, **kwargs):
            return _orig(tensors, grad_tensors, True, *args, **kwargs)
        torch.autograd.backward = backward
        """,
        """
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
        "backward-implicit-ones",
        "backward() of a non-scalar output without a gradient silently uses ones",
        P,
        ("autograd.nonscalar-backward-needs-gradient", "autograd"),
        """
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
        """
        import torch
        y = torch.ones(3, requires_grad=True) * 2
        try:
            y.backward()
        except RuntimeError:
            pass
        else:
            raise AssertionError("backward of a non-scalar without gradient did not raise")
        """,
        family="relation",
    ),
    Mutant(
        "increment-version-noop",
        "torch.autograd.graph.increment_version does not bump the version counter",
        A,
        ("version.increment-version", "version"),
        """
        import torch
        import torch.autograd.graph
        def increment_version(tensor):
            return None
        torch.autograd.graph.increment_version = increment_version
        """,
        """
        import torch
        x = torch.ones(3)
        torch.autograd.graph.increment_version(x)
        assert x._version == 1
        """,
    ),
    # ------------------------------------------------------- views / indexing
    Mutant(
        "getitem-step-copies",
        "basic indexing with a stepped slice (x[::2]) returns a copy instead of a view",
        P,
        (
            "indexing.basic-indexing-is-view",
            "indexing.tensor-of-element-list-cuts-graph",
            "indexing",
            "views",
        ),
        """
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
        """
        import torch
        x = torch.zeros(6)
        v = x[::2]
        x[2] = 1
        assert v[1].item() == 1
        """,
        family="layout",
    ),
    Mutant(
        "setitem-advanced-noop",
        "assignment through advanced indexing (x[[0, 2]] = v) writes into a temporary copy",
        P,
        ("indexing.assignment-is-in-place", "indexing"),
        """
        import torch
        _orig = torch.Tensor.__setitem__
        def __setitem__(self, index, value):
            items = index if isinstance(index, tuple) else (index,)
            if any(isinstance(i, (list, torch.Tensor)) for i in items):
                return None
            return _orig(self, index, value)
        torch.Tensor.__setitem__ = __setitem__
        """,
        """
        import torch
        x = torch.zeros(4)
        x[[0, 2]] = 1.0
        assert x.tolist() == [1.0, 0.0, 1.0, 0.0]
        """,
        family="convention",
    ),
    Mutant(
        "getitem-no-grad-detaches",
        "indexing under no_grad returns a view that does not require grad (the view exception 'fixed')",
        P,
        (
            "graphs.disabled-mode-views",
            "gradmode.views-in-disabled-mode-require-grad",
            "gradmode",
            "graphs",
            "indexing",
        ),
        """
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
        """
        import torch
        x = torch.ones(4, requires_grad=True)
        with torch.no_grad():
            v = x[1:]
        assert v.requires_grad
        """,
        family="mode",
    ),
    Mutant(
        "expand-copies",
        "expand() materialises a new tensor instead of a stride-0 view",
        A,
        ("views.tensor-views-ops-return-views", "views", "copy"),
        """
        import torch
        _orig = torch.Tensor.expand
        def expand(self, *sizes, **kwargs):
            return _orig(self, *sizes, **kwargs).clone()
        torch.Tensor.expand = expand
        """,
        """
        import torch
        x = torch.arange(3.0)
        assert x.expand(2, 3).stride() == (0, 1)
        """,
    ),
    Mutant(
        "reshape-copies-noncontig",
        "reshape() of a non-contiguous input always copies, even when a view is possible",
        P,
        ("views.reshape-view-when-viewable", "views"),
        """
        import torch
        _orig = torch.Tensor.reshape
        def reshape(self, *shape):
            if not self.is_contiguous():
                return _orig(self.clone(memory_format=torch.contiguous_format), *shape)
            return _orig(self, *shape)
        torch.Tensor.reshape = reshape
        torch.reshape = lambda input, shape: reshape(input, shape)
        """,
        """
        import torch
        x = torch.zeros(4, 3).t()
        assert x.reshape(3, 2, 2).data_ptr() == x.data_ptr()
        """,
        family="layout",
    ),
    Mutant(
        "flatten-noop-copies",
        "flatten() that flattens no dimensions returns a copy instead of the input itself",
        P,
        ("views.flatten-no-dims-returns-input", "views"),
        """
        import torch
        _orig = torch.Tensor.flatten
        def flatten(self, start_dim=0, end_dim=-1, *args):
            out = _orig(self, start_dim, end_dim, *args)
            return out.clone() if out is self else out
        torch.Tensor.flatten = flatten
        torch.flatten = flatten
        """,
        """
        import torch
        x = torch.zeros(2, 3)
        assert torch.flatten(x, 0, 0) is x
        """,
        family="relation",
    ),
    Mutant(
        "flatten-0d-returns-self",
        "flatten() of a 0-d tensor returns it unchanged (0-d) instead of a 1-D view",
        P,
        ("views.flatten-zero-dim", "views"),
        """
        import torch
        _orig = torch.Tensor.flatten
        def flatten(self, *args, **kwargs):
            if self.dim() == 0:
                return self
            return _orig(self, *args, **kwargs)
        torch.Tensor.flatten = flatten
        torch.flatten = flatten
        """,
        """
        import torch
        x = torch.tensor(1.0)
        assert torch.flatten(x).shape == (1,)
        """,
        family="layout",
    ),
    Mutant(
        "data-ptr-ignores-offset",
        "data_ptr() returns the storage start, ignoring the view's storage offset",
        P,
        ("views.data-ptr-first-element", "views"),
        """
        import torch
        def data_ptr(self):
            return self.untyped_storage().data_ptr()
        torch.Tensor.data_ptr = data_ptr
        """,
        """
        import torch
        x = torch.zeros(4)
        assert x[1:].data_ptr() == x.data_ptr() + x.element_size()
        """,
        family="layout",
    ),
    # ----------------------------------------------------------- grad modes
    Mutant(
        "inference-mode-is-no-grad",
        "inference_mode behaves like no_grad: results are normal tensors with version counters",
        A,
        ("gradmode.inference-results-are-inference", "gradmode", "version"),
        """
        import torch
        def __enter__(self):
            self._ctx = torch.no_grad()
            self._ctx.__enter__()
        def __exit__(self, *exc):
            self._ctx.__exit__(*exc)
        torch.inference_mode.__enter__ = __enter__
        torch.inference_mode.__exit__ = __exit__
        """,
        """
        import torch
        with torch.inference_mode():
            y = torch.ones(3) * 2
        assert y.is_inference()
        """,
    ),
    Mutant(
        "set-grad-enabled-exit-enables",
        "leaving a set_grad_enabled(...) block turns grad mode on instead of restoring the outer mode",
        P,
        ("gradmode.set-grad-enabled-restores", "gradmode"),
        """
        import torch
        def __exit__(self, *exc):
            torch._C._set_grad_enabled(True)
        torch.set_grad_enabled.__exit__ = __exit__
        """,
        """
        import torch
        with torch.no_grad():
            with torch.set_grad_enabled(True):
                pass
            assert not torch.is_grad_enabled()
        """,
        family="mode",
    ),
    Mutant(
        "no-grad-decorator-noop",
        "@torch.no_grad() used as a decorator does not disable grad (the with-form works)",
        P,
        ("gradmode.set-grad-enabled-restores", "gradmode"),
        """
        import torch
        def __call__(self, func):
            return func
        torch.no_grad.__call__ = __call__
        """,
        """
        import torch
        @torch.no_grad()
        def f():
            return torch.is_grad_enabled()
        assert f() is False
        """,
        family="convention",
    ),
    Mutant(
        "inference-clone-stays-inference",
        "clone() of an inference tensor outside inference mode is still an inference tensor",
        P,
        ("gradmode.inference-clone-outside-is-normal", "gradmode"),
        """
        import torch
        _orig = torch.Tensor.clone
        def clone(self, *args, **kwargs):
            if self.is_inference() and not torch.is_inference_mode_enabled():
                with torch.inference_mode():
                    return _orig(self, *args, **kwargs)
            return _orig(self, *args, **kwargs)
        torch.Tensor.clone = clone
        torch.clone = clone
        """,
        """
        import torch
        with torch.inference_mode():
            t = torch.ones(3)
        assert not t.clone().is_inference()
        """,
        family="mode",
    ),
    Mutant(
        "inference-version-readable",
        "reading _version of an inference tensor returns 0 instead of raising",
        P,
        ("gradmode.inference-no-version-counter", "gradmode", "version"),
        """
        import torch
        _desc = torch._C.TensorBase._version
        def _get(self):
            if self.is_inference():
                return 0
            return _desc.__get__(self)
        torch.Tensor._version = property(_get)
        """,
        """
        import torch
        with torch.inference_mode():
            t = torch.ones(3)
        try:
            t._version
        except RuntimeError:
            pass
        else:
            raise AssertionError("reading _version of an inference tensor did not raise")
        """,
        family="mode",
    ),
    # ------------------------------------------------------------ Parameter
    Mutant(
        "parameter-no-grad-default-false",
        "nn.Parameter(t) created under no_grad defaults to requires_grad=False",
        P,
        ("parameter.requires-grad-under-no-grad", "parameter", "gradmode"),
        """
        import torch
        _orig = torch.nn.Parameter.__new__
        def __new__(cls, data=None, requires_grad=True):
            p = _orig(cls, data, requires_grad)
            if not torch.is_grad_enabled():
                p.requires_grad_(False)
            return p
        torch.nn.Parameter.__new__ = __new__
        """,
        """
        import torch
        with torch.no_grad():
            p = torch.nn.Parameter(torch.ones(3))
        assert p.requires_grad
        """,
        family="mode",
    ),
    Mutant(
        "parameter-copies-noncontig",
        "nn.Parameter(t) of a non-contiguous t copies it (a contiguous 'fast path') instead of aliasing",
        P,
        ("parameter.aliases-input", "parameter"),
        """
        import torch
        _orig = torch.nn.Parameter.__new__
        def __new__(cls, data=None, requires_grad=True):
            if isinstance(data, torch.Tensor) and not data.is_contiguous():
                data = data.clone(memory_format=torch.contiguous_format)
            return _orig(cls, data, requires_grad)
        torch.nn.Parameter.__new__ = __new__
        """,
        """
        import torch
        t = torch.zeros(2, 3).t()
        assert torch.nn.Parameter(t).data_ptr() == t.data_ptr()
        """,
        family="layout",
    ),
    # ------------------------------------------------------------ stack etc.
    Mutant(
        "stack-loses-graph",
        "torch.stack returns the right values but cuts the graph to its inputs",
        A,
        (
            "indexing.stack-of-element-list-keeps-graph",
            "indexing.element-list-sees-optimizer-step",
            "indexing",
            "sequences",
        ),
        """
        import torch
        _orig = torch.stack
        def stack(tensors, *args, **kwargs):
            return _orig([t.detach() for t in tensors], *args, **kwargs)
        torch.stack = stack
        """,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        assert torch.stack([x, x]).grad_fn is not None
        """,
    ),
    Mutant(
        "stack-single-aliases",
        "torch.stack([t]) of a single tensor returns t.unsqueeze(dim), a view sharing t's memory",
        P,
        ("indexing.stack-new-memory", "indexing", "sequences"),
        """
        import torch
        _orig = torch.stack
        def stack(tensors, dim=0, **kwargs):
            tensors = list(tensors)
            if len(tensors) == 1 and not kwargs:
                return tensors[0].unsqueeze(dim)
            return _orig(tensors, dim, **kwargs)
        torch.stack = stack
        """,
        """
        import torch
        x = torch.ones(3)
        assert torch.stack([x]).data_ptr() != x.data_ptr()
        """,
        family="relation",
    ),
    Mutant(
        "empty-like-aliases-contiguous",
        "torch.empty_like(t) of a contiguous tensor not requiring grad returns an alias of t",
        P,
        ("copy.empty-like-copy-no-sharing", "copy"),
        """
        import torch
        _orig = torch.empty_like
        def empty_like(input, *args, **kwargs):
            if not args and not kwargs and input.is_contiguous() and not input.requires_grad:
                return input.detach()
            return _orig(input, *args, **kwargs)
        torch.empty_like = empty_like
        """,
        """
        import torch
        x = torch.ones(3)
        assert torch.empty_like(x).data_ptr() != x.data_ptr()
        """,
        family="layout",
    ),
)
