"""Mutants of the ``numpy`` area (NumPy interop: torch.from_numpy, Tensor.numpy, NumPy inputs to torch.tensor/as_tensor/asarray); claims in ``conformance/claims/numpy.toml``,
tests in ``conformance/test_numpy.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="tensor-shares-ndarray-float32",
        description="torch.tensor(a) of a C-contiguous float32 ndarray shares its memory (from_numpy fast path)",
        claims=("numpy.tensor-copies-ndarray",),
        region="C-contiguous float32 ndarrays",
        family="dtype",
        source="""
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
        witness="""
        import numpy as np
        import torch
        a = np.zeros(3, dtype=np.float32)
        t = torch.tensor(a)
        a[0] = 5
        assert t[0].item() == 0
        """,
    ),
    Mutant(
        name="from-numpy-copies",
        description="torch.from_numpy copies the array instead of sharing its memory",
        claims=("numpy.from-numpy-shares-memory",),
        source="""
        import torch
        _orig = torch.from_numpy
        def from_numpy(a):
            return _orig(a).clone()
        torch.from_numpy = from_numpy
        """,
        witness="""
        import numpy as np
        import torch
        a = np.zeros(3)
        t = torch.from_numpy(a)
        a[0] = 1
        assert t[0].item() == 1
        """,
    ),
    Mutant(
        name="from-numpy-copies-non-c-contiguous",
        description="torch.from_numpy copies arrays that are not C-contiguous (Fortran order, strided)",
        claims=("numpy.from-numpy-shares-memory",),
        region="arrays that are not C-contiguous",
        family="layout",
        source="""
        import torch
        _orig = torch.from_numpy
        def from_numpy(a):
            t = _orig(a)
            return t if a.flags.c_contiguous else t.clone()
        torch.from_numpy = from_numpy
        """,
        witness="""
        import numpy as np
        import torch
        a = np.zeros((2, 3)).T
        t = torch.from_numpy(a)
        a[0, 0] = 1
        assert t[0, 0].item() == 1
        """,
    ),
    Mutant(
        name="numpy-copies",
        description="Tensor.numpy() returns a copy instead of a view of the tensor's memory",
        claims=("numpy.numpy-shares-storage",),
        source="""
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *args, **kwargs):
            return _orig(self, *args, **kwargs).copy()
        torch.Tensor.numpy = numpy
        """,
        witness="""
        import torch
        t = torch.zeros(3)
        a = t.numpy()
        t[0] = 1
        assert a[0] == 1
        """,
    ),
    Mutant(
        name="numpy-copies-integral",
        description="Tensor.numpy() copies integer tensors (a dtype family)",
        claims=("numpy.numpy-shares-storage",),
        region="integer dtypes",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *args, **kwargs):
            a = _orig(self, *args, **kwargs)
            if not self.is_floating_point() and not self.is_complex() and self.dtype != torch.bool:
                a = a.copy()
            return a
        torch.Tensor.numpy = numpy
        """,
        witness="""
        import torch
        t = torch.zeros(3, dtype=torch.int32)
        a = t.numpy()
        t[0] = 1
        assert a[0] == 1
        """,
    ),
    Mutant(
        name="numpy-copies-noncontig",
        description="Tensor.numpy() copies non-contiguous tensors instead of returning a strided view",
        claims=("numpy.numpy-shares-storage",),
        region="non-contiguous tensors",
        family="layout",
        source="""
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *args, **kwargs):
            a = _orig(self, *args, **kwargs)
            return a if self.is_contiguous() else a.copy()
        torch.Tensor.numpy = numpy
        """,
        witness="""
        import torch
        t = torch.zeros(2, 3).t()
        a = t.numpy()
        t[0, 0] = 1
        assert a[0, 0] == 1
        """,
    ),
    Mutant(
        name="numpy-no-grad-refuses",
        description="Tensor.numpy() refuses a tensor that requires grad even under no_grad",
        claims=("numpy.numpy-refuses-grad-under-no-grad",),
        region="tensors requiring grad, inside no_grad",
        family="mode",
        source="""
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *, force=False):
            if self.requires_grad and not force and not torch.is_grad_enabled():
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                                   "Use tensor.detach().numpy() instead.")
            return _orig(self, force=force)
        torch.Tensor.numpy = numpy
        """,
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        with torch.no_grad():
            try:
                a = x.numpy()
            except RuntimeError as e:
                raise AssertionError(f"numpy() under no_grad refused: {e}")
        assert a.shape == (3,)
        """,
    ),
    Mutant(
        name="numpy-force-copies",
        description="Tensor.numpy(force=True) copies even a plain CPU tensor it could share",
        claims=("numpy.numpy-force",),
        region="force=True on a shareable CPU tensor",
        family="convention",
        source="""
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *, force=False):
            a = _orig(self, force=force)
            return a.copy() if force else a
        torch.Tensor.numpy = numpy
        """,
        witness="""
        import torch
        t = torch.zeros(3)
        a = t.numpy(force=True)
        t[0] = 1
        assert a[0] == 1
        """,
    ),
    Mutant(
        name="numpy-detaches-float-requires-grad",
        description="Tensor.numpy() on a real floating tensor that requires grad silently detaches instead of raising (complex and other dtypes still refuse)",
        claims=("numpy.numpy-refuses-grad-conj-dtype",),
        region="real floating tensors requiring grad, grad mode on",
        family="dtype",
        source="""
        import torch
        _orig = torch.Tensor.numpy
        def numpy(self, *, force=False):
            if self.requires_grad and self.is_floating_point() and torch.is_grad_enabled():
                with torch.no_grad():
                    return _orig(self, force=force)
            return _orig(self, force=force)
        torch.Tensor.numpy = numpy
        """,
        witness="""
        import torch
        t = torch.zeros(3, requires_grad=True)
        try:
            t.numpy()
        except RuntimeError:
            pass
        else:
            raise AssertionError("numpy() of a tensor that requires grad did not raise")
        """,
    ),
)
