"""Mutants of the ``gradmode`` area (no_grad, inference_mode and set_grad_enabled); claims in ``conformance/claims/gradmode.toml``,
tests in ``conformance/test_gradmode.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="tensor-no-grad-drops-requires-grad",
        description="torch.tensor(..., requires_grad=True) under no_grad returns a tensor that does not require grad",
        claims=("gradmode.no-grad-factories-unaffected",),
        region="requires_grad=True inside no_grad",
        family="mode",
        source="""
        import torch
        _orig = torch.tensor
        def tensor(data, *args, **kwargs):
            out = _orig(data, *args, **kwargs)
            if out.requires_grad and not torch.is_grad_enabled():
                out.requires_grad_(False)
            return out
        torch.tensor = tensor
        """,
        witness="""
        import torch
        with torch.no_grad():
            t = torch.tensor([1.0], requires_grad=True)
        assert t.requires_grad
        """,
    ),
    Mutant(
        name="inference-mode-is-no-grad",
        description="inference_mode behaves like no_grad: results are normal tensors with version counters",
        claims=("gradmode.inference-results-are-inference",),
        source="""
        import torch
        def __enter__(self):
            self._ctx = torch.no_grad()
            self._ctx.__enter__()
        def __exit__(self, *exc):
            self._ctx.__exit__(*exc)
        torch.inference_mode.__enter__ = __enter__
        torch.inference_mode.__exit__ = __exit__
        """,
        witness="""
        import torch
        with torch.inference_mode():
            y = torch.ones(3) * 2
        assert y.is_inference()
        """,
    ),
    Mutant(
        name="set-grad-enabled-exit-enables",
        description="leaving a set_grad_enabled(...) block turns grad mode on instead of restoring the outer mode",
        claims=("gradmode.set-grad-enabled-restores",),
        region="set_grad_enabled blocks inside no_grad",
        family="mode",
        source="""
        import torch
        def __exit__(self, *exc):
            torch._C._set_grad_enabled(True)
        torch.set_grad_enabled.__exit__ = __exit__
        """,
        witness="""
        import torch
        with torch.no_grad():
            with torch.set_grad_enabled(True):
                pass
            assert not torch.is_grad_enabled()
        """,
    ),
    Mutant(
        name="no-grad-decorator-noop",
        description="@torch.no_grad() used as a decorator does not disable grad (the with-form works)",
        claims=("gradmode.set-grad-enabled-restores",),
        region="the decorator form @torch.no_grad() only",
        family="convention",
        source="""
        import torch
        def __call__(self, func):
            return func
        torch.no_grad.__call__ = __call__
        """,
        witness="""
        import torch
        @torch.no_grad()
        def f():
            return torch.is_grad_enabled()
        assert f() is False
        """,
    ),
    Mutant(
        name="inference-clone-stays-inference",
        description="clone() of an inference tensor outside inference mode is still an inference tensor",
        claims=("gradmode.inference-clone-outside-is-normal",),
        region="inference tensors cloned outside inference mode",
        family="mode",
        source="""
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
        witness="""
        import torch
        with torch.inference_mode():
            t = torch.ones(3)
        assert not t.clone().is_inference()
        """,
    ),
    Mutant(
        name="inference-version-readable",
        description="reading _version of an inference tensor returns 0 instead of raising",
        claims=("gradmode.inference-no-version-counter",),
        region="inference tensors",
        family="mode",
        source="""
        import torch
        _desc = torch._C.TensorBase._version
        def _get(self):
            if self.is_inference():
                return 0
            return _desc.__get__(self)
        torch.Tensor._version = property(_get)
        """,
        witness="""
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
    ),
)
