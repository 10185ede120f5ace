"""Mutants of the ``numpy`` area (NumPy interop: torch.from_numpy, Tensor.numpy, NumPy inputs to torch.tensor/as_tensor/asarray); claims in ``conformance/claims/numpy.toml``,
tests in ``conformance/test_numpy.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from conformance.mutants._tensor_domain import (
    DTYPE_FAMILIES,
    LAYOUTS,
    domain_mutants,
    ndarray_kinds,
)
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, np, refused, torch, wrap


def _import_copy(kind, asarray):
    _orig_from_numpy, _orig_as_tensor = torch.from_numpy, torch.as_tensor

    def from_numpy(a):
        if isinstance(a, np.ndarray) and kind in ndarray_kinds(a):
            return _orig_from_numpy(a.copy())
        return _orig_from_numpy(a)

    def as_tensor(data, *args, **kwargs):
        if isinstance(data, np.ndarray) and kind in ndarray_kinds(data):
            data = data.copy()
        return _orig_as_tensor(data, *args, **kwargs)

    torch.from_numpy, torch.as_tensor = from_numpy, as_tensor
    if asarray:
        _orig_asarray = torch.asarray

        def asarray(obj, *args, **kwargs):
            if isinstance(obj, np.ndarray) and kind in ndarray_kinds(obj):
                obj = obj.copy()
            return _orig_asarray(obj, *args, **kwargs)

        torch.asarray = asarray


def _imports_share(make, asarray):
    a = make()
    for t in (torch.from_numpy(a), torch.as_tensor(a)) + ((torch.asarray(a),) if asarray else ()):
        assert t.data_ptr() == a.__array_interface__["data"][0]


def _import_copies(kind: str, arrays: str, make: Callable, asarray: bool = True) -> Mutant:
    """A mutant of the ndarray import path (torch.from_numpy and the sharing
    torch.as_tensor and - with ``asarray`` - torch.asarray, which build on it)
    that copies the arrays of one ``ndarray_kind`` instead of sharing their
    memory; ``make()`` builds the witness's array of that kind."""
    claims = ("numpy.from-numpy-shares-memory", "numpy.as-tensor-shares-memory")
    if asarray:
        claims += ("numpy.asarray-ndarray-shares-unless-converted",)
    return Mutant(
        name=f"ndarray-import-copies-{kind.replace('_', '-')}",
        description=f"torch.from_numpy, torch.as_tensor{' and torch.asarray' if asarray else ''} "
        f"(same dtype) copy {arrays} instead of sharing their memory",
        claims=claims,
        domain={"ndarray_kind": kind},
        region=f"{arrays} (ndarray_kind {kind})",
        family="layout",
        patch=functools.partial(_import_copy, kind, asarray),
        witness=functools.partial(_imports_share, make, asarray),
    )


def _numpy_forced(guard, result):
    _orig = torch.Tensor.numpy

    def numpy(self, *args, **kwargs):
        if kwargs.get("force", False) and guard(self):
            return result(self, _orig)
        return _orig(self, *args, **kwargs)

    torch.Tensor.numpy = numpy


def _numpy_force(
    name: str,
    domain: dict,
    region: str,
    what: str,
    guard: Callable,
    result: Callable,
    witness: Callable[[], object],
) -> Mutant:
    """A mutant of ``Tensor.numpy(force=True)`` wrong only where
    ``guard(self)`` holds: there it returns ``result(self, real_numpy)``."""
    return Mutant(
        name=name,
        description=f"t.numpy(force=True) {what}",
        claims=("numpy.numpy-force",),
        domain=domain,
        region=region,
        family="autograd" if "tensor_kind" in domain else "value",
        patch=functools.partial(_numpy_forced, guard, result),
        witness=witness,
    )


def _forced_copy(self, numpy):
    return numpy(self, force=True).copy()


def _forced_unconjugated(self, numpy):
    return numpy(self.detach().conj(), force=True)


def _forced_unnegated(self, numpy):
    return numpy(torch._neg_view(self.detach()), force=True)


def _misaligned():
    a = np.zeros(25, dtype=np.uint8)[1:].view(np.float64)
    assert not a.flags.aligned
    return a


def _witness_numpy_force_copies_plain():
    t = torch.arange(3.0)
    a = t.numpy(force=True)
    assert a.ctypes.data == t.data_ptr()


def _witness_numpy_force_copies_leaf():
    t = torch.arange(3.0, requires_grad=True)
    assert t.numpy(force=True).ctypes.data == t.data_ptr()


def _witness_numpy_force_copies_non_leaf():
    t = torch.arange(6.0, requires_grad=True)[1:]
    assert t.numpy(force=True).ctypes.data == t.data_ptr()


def _witness_numpy_force_copies_without_math_bits():
    t = torch.arange(3.0)
    assert t.numpy(force=True).ctypes.data == t.data_ptr()


def _witness_numpy_force_ignores_conj():
    c = torch.tensor([1 + 2j])
    assert np.array_equal(c.conj().numpy(force=True), np.array([1 - 2j]))


def _witness_numpy_force_ignores_neg():
    c = torch.tensor([1 + 2j])
    v = c.conj().imag
    assert v.is_neg()
    assert np.array_equal(v.numpy(force=True), np.array([-2.0]))


def _from_numpy_copies_read_only(orig, a):
    if isinstance(a, np.ndarray) and not a.flags.writeable:
        return orig(a.copy())
    return orig(a)


def _witness_from_numpy_copies_read_only():
    import warnings

    a = np.arange(3.0)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = torch.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data


def _tensor_shares_ndarray_float32(orig, data, *args, **kwargs):
    if (
        isinstance(data, np.ndarray)
        and data.dtype == np.float32
        and not args
        and not kwargs
        and data.flags.c_contiguous
        and data.flags.writeable
    ):
        return torch.from_numpy(data)
    return orig(data, *args, **kwargs)


def _witness_tensor_shares_ndarray_float32():
    a = np.zeros(3, dtype=np.float32)
    t = torch.tensor(a)
    a[0] = 5
    assert t[0].item() == 0


def _from_numpy_copies(orig, a):
    return orig(a).clone()


def _witness_from_numpy_copies():
    a = np.zeros(3)
    t = torch.from_numpy(a)
    a[0] = 1
    assert t[0].item() == 1


def _from_numpy_copies_non_c_contiguous(orig, a):
    t = orig(a)
    return t if a.flags.c_contiguous else t.clone()


def _witness_from_numpy_copies_non_c_contiguous():
    a = np.zeros((2, 3)).T
    t = torch.from_numpy(a)
    a[0, 0] = 1
    assert t[0, 0].item() == 1


def _numpy_copies_call(orig, self, *args, **kwargs):
    return orig(self, *args, **kwargs).copy()


def _witness_numpy_copies():
    t = torch.zeros(3)
    a = t.numpy()
    t[0] = 1
    assert a[0] == 1


def _numpy_copies_integral(orig, self, *args, **kwargs):
    a = orig(self, *args, **kwargs)
    if not self.is_floating_point() and not self.is_complex() and self.dtype != torch.bool:
        a = a.copy()
    return a


def _witness_numpy_copies_integral():
    t = torch.zeros(3, dtype=torch.int32)
    a = t.numpy()
    t[0] = 1
    assert a[0] == 1


def _numpy_copies_noncontig(orig, self, *args, **kwargs):
    a = orig(self, *args, **kwargs)
    return a if self.is_contiguous() else a.copy()


def _witness_numpy_copies_noncontig():
    t = torch.zeros(2, 3).t()
    a = t.numpy()
    t[0, 0] = 1
    assert a[0, 0] == 1


def _numpy_no_grad_refuses(orig, self, *, force=False):
    if self.requires_grad and not force and not torch.is_grad_enabled():
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    return orig(self, force=force)


def _witness_numpy_no_grad_refuses():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        with accepted(RuntimeError, "numpy() under no_grad refused"):
            a = x.numpy()
    assert a.shape == (3,)


def _numpy_force_copies(orig, self, *, force=False):
    a = orig(self, force=force)
    return a.copy() if force else a


def _witness_numpy_force_copies():
    t = torch.zeros(3)
    a = t.numpy(force=True)
    t[0] = 1
    assert a[0] == 1


def _numpy_detaches_float_requires_grad(orig, self, *, force=False):
    if self.requires_grad and self.is_floating_point() and torch.is_grad_enabled():
        with torch.no_grad():
            return orig(self, force=force)
    return orig(self, force=force)


def _witness_numpy_detaches_float_requires_grad():
    t = torch.zeros(3, requires_grad=True)
    with refused(RuntimeError, "numpy() of a tensor that requires grad did not raise"):
        t.numpy()


def _tensor_dtype_ignored_strided_ndarray(orig, data, *args, dtype=None, **kwargs):
    if isinstance(data, np.ndarray) and dtype is not None and not data.flags.c_contiguous:
        dtype = None
    return orig(data, *args, dtype=dtype, **kwargs)


def _witness_tensor_dtype_ignored_strided_ndarray():
    a = np.arange(6, dtype=np.int32).reshape(2, 3).T
    assert torch.tensor(a, dtype=torch.float64).dtype == torch.float64


def _tensor_same_dtype_shares_ndarray(orig, data, *args, dtype=None, **kwargs):
    if (
        isinstance(data, np.ndarray)
        and dtype is not None
        and not args
        and not kwargs
        and data.dtype.isnative
        and data.flags.writeable
        and all(s >= 0 for s in data.strides)
    ):
        try:
            t = torch.from_numpy(data)
        except TypeError:
            t = None
        if t is not None and t.dtype == dtype:
            return t
    return orig(data, *args, dtype=dtype, **kwargs)


def _witness_tensor_same_dtype_shares_ndarray():
    a = np.zeros(3, dtype=np.int16)
    t = torch.tensor(a, dtype=torch.int16)
    a[0] = 5
    assert t[0].item() == 0


def _as_tensor_copies_float16(orig, data, *args, **kwargs):
    t = orig(data, *args, **kwargs)
    if isinstance(data, np.ndarray) and data.dtype == np.float16:
        t = t.clone()
    return t


def _witness_as_tensor_copies_float16():
    a = np.zeros(3, dtype=np.float16)
    t = torch.as_tensor(a)
    a[0] = 1
    assert t[0].item() == 1


def _as_tensor_converting_aliases(orig, data, dtype=None, device=None):
    if isinstance(data, np.ndarray) and dtype is not None:
        t = orig(data, device=device)
        if dtype != t.dtype and dtype.itemsize == t.element_size() and t.dim():
            return t.view(dtype)
    return orig(data, dtype=dtype, device=device)


def _witness_as_tensor_converting_aliases():
    a = np.ones(3, dtype=np.int32)
    t = torch.as_tensor(a, dtype=torch.float32)
    assert t.tolist() == [1.0, 1.0, 1.0]


def _from_numpy_accepts_dtype_keyword(orig, ndarray, *args, dtype=None):
    t = orig(ndarray, *args)
    return t if dtype is None else t.to(dtype)


def _witness_from_numpy_accepts_dtype_keyword():
    with refused(TypeError, "from_numpy accepted a dtype keyword"):
        torch.from_numpy(np.zeros(2), dtype=torch.float32)


def _from_numpy_empty_resizable(orig, ndarray):
    t = orig(ndarray)
    if t.numel() == 0:
        t = torch.empty(t.shape, dtype=t.dtype)
    return t


def _witness_from_numpy_empty_resizable():
    t = torch.from_numpy(np.zeros((0, 3)))
    with refused(RuntimeError, "from_numpy(empty array) could be resized", match="not resizable"):
        t.resize_(4)


def _tensor_accepts_negative_strides(orig, data, *args, **kwargs):
    if isinstance(data, np.ndarray) and any(s < 0 for s in data.strides):
        data = data.copy()
    return orig(data, *args, **kwargs)


def _witness_tensor_accepts_negative_strides():
    with refused(ValueError, "torch.tensor accepted negative strides"):
        torch.tensor(np.arange(3.0)[::-1])


def _warn_every_time():
    """torch.from_numpy warns on every read-only array (the in-process part
    of the mutant below, also what its fresh interpreters run)."""
    import warnings

    _orig_from_numpy = torch.from_numpy

    def from_numpy(ndarray):
        if ndarray.flags.writeable:
            return _orig_from_numpy(ndarray)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = _orig_from_numpy(ndarray)
        warnings.warn("The given NumPy array is not writable, and PyTorch does not "
                      "support non-writable tensors.", UserWarning, stacklevel=2)  # fmt: skip
        return t

    torch.from_numpy = from_numpy


def _patch_from_numpy_read_only_warns_every_time():
    import os
    import tempfile

    from conformance.mutants import ROOT

    _warn_every_time()
    # The claim is checked in a fresh interpreter: install the patch there too.
    _dir = os.path.join(tempfile.gettempdir(), f"torch-mutant-read-only-warns-{os.getuid()}")
    os.makedirs(_dir, exist_ok=True)
    _tmp = os.path.join(_dir, f"sitecustomize.py.{os.getpid()}")
    with open(_tmp, "w", encoding="utf-8") as _f:
        _f.write(
            "import sys\n"
            f"sys.path.insert(0, {str(ROOT)!r})\n"
            "try:\n"
            "    from conformance.mutants.numpy import _warn_every_time\n"
            "finally:\n"
            "    sys.path.pop(0)\n"
            "_warn_every_time()\n"
        )
    os.replace(_tmp, os.path.join(_dir, "sitecustomize.py"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_dir, os.environ.get("PYTHONPATH")]))


def _witness_from_numpy_read_only_warns_every_time():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            r = np.arange(3.0)
            r.flags.writeable = False
            torch.from_numpy(r)
    n = sum("not writable" in str(w.message) for w in caught)
    assert n <= 1, f"{n} read-only warnings in one process"


def _from_numpy_drops_int16(orig, ndarray):
    if ndarray.dtype == np.int16:
        raise TypeError(
            "can't convert np.ndarray of type numpy.int16. The only supported "
            "types are: float64, float32, float16, complex64, complex128, "
            "int64, int32, int8, uint64, uint32, uint16, uint8, and bool."
        )
    return orig(ndarray)


def _witness_from_numpy_drops_int16():
    try:
        t = torch.from_numpy(np.zeros(2, dtype=np.int16))
    except TypeError as e:
        raise AssertionError(f"from_numpy rejected int16: {e}") from None
    assert t.dtype == torch.int16


def _from_numpy_byteswaps_silently(orig, ndarray):
    if not ndarray.dtype.isnative:
        ndarray = ndarray.astype(ndarray.dtype.newbyteorder("="))
    return orig(ndarray)


def _witness_from_numpy_byteswaps_silently():
    with refused(ValueError, "from_numpy accepted a byte-swapped array"):
        torch.from_numpy(np.zeros(2, dtype=np.dtype("float64").newbyteorder()))


def _asarray_copies_non_c_contiguous(orig, obj, *args, copy=None, **kwargs):
    if isinstance(obj, np.ndarray) and obj.ndim and not obj.flags.c_contiguous and not copy:
        obj = np.ascontiguousarray(obj)
    return orig(obj, *args, copy=copy, **kwargs)


def _witness_asarray_copies_non_c_contiguous():
    a = np.zeros((2, 3)).T
    t = torch.asarray(a)
    a[0, 0] = 1
    assert t[0, 0].item() == 1


def _asarray_copy_false_converts(orig, obj, *args, dtype=None, copy=None, **kwargs):
    if isinstance(obj, np.ndarray) and obj.ndim and copy is False and dtype is not None:
        copy = None
    return orig(obj, *args, dtype=dtype, copy=copy, **kwargs)


def _witness_asarray_copy_false_converts():
    with refused(ValueError, "asarray(copy=False) converted instead of raising"):
        torch.asarray(np.zeros(3), dtype=torch.float32, copy=False)


def _asarray_zero_dim_float_copy_false_raises(orig, obj, *args, copy=None, **kwargs):
    if isinstance(obj, np.ndarray) and obj.ndim == 0 and obj.dtype.kind == "f" and copy is False:
        raise ValueError(
            "can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray."
        )
    return orig(obj, *args, copy=copy, **kwargs)


def _witness_asarray_zero_dim_float_copy_false_raises():
    try:
        t = torch.asarray(np.array(1.5), copy=False)
    except ValueError as e:
        raise AssertionError(f"asarray(0-d array, copy=False) raised: {e}") from None
    assert t.dim() == 0 and t.item() == 1.5


def _asarray_zero_dim_shares(orig, obj, *args, dtype=None, copy=None, **kwargs):
    if (
        isinstance(obj, np.ndarray)
        and obj.ndim == 0
        and obj.dtype.kind in "iu"
        and not copy
        and not args
        and not kwargs
    ):
        t = torch.from_numpy(obj)
        if dtype is None or dtype == t.dtype:
            return t
    return orig(obj, *args, dtype=dtype, copy=copy, **kwargs)


def _witness_asarray_zero_dim_shares():
    a = np.array(3, dtype=np.int32)
    t = torch.asarray(a)
    a[()] = 5
    assert t.item() == 3


def _asarray_integer_scalar_ignores_dtype(orig, obj, *args, dtype=None, **kwargs):
    if isinstance(obj, np.integer):
        dtype = None
    return orig(obj, *args, dtype=dtype, **kwargs)


def _witness_asarray_integer_scalar_ignores_dtype():
    assert torch.asarray(np.int16(3), dtype=torch.float64).dtype == torch.float64


def _asarray_float_scalar_copy_true_converts(orig, obj, *args, copy=None, **kwargs):
    if isinstance(obj, np.floating) and copy is True:
        copy = None
    return orig(obj, *args, copy=copy, **kwargs)


def _witness_asarray_float_scalar_copy_true_converts():
    with refused(ValueError, "asarray(np scalar, dtype=other, copy=True) converted"):
        torch.asarray(np.float32(1.5), dtype=torch.float64, copy=True)


def _numpy_resolves_neg_bit_float64(orig, self, *, force=False):
    if self.is_neg() and self.dtype == torch.float64 and not force:
        return orig(self.resolve_neg())
    return orig(self, force=force)


def _witness_numpy_resolves_neg_bit_float64():
    t = torch.zeros(2, dtype=torch.complex128).conj().imag
    with refused(
        RuntimeError, "numpy() accepted a tensor with the negative bit set", match="negative bit"
    ):
        t.numpy()


def _numpy_no_grad_copies_strided(orig, self, *, force=False):
    a = orig(self, force=force)
    if self.requires_grad and not torch.is_grad_enabled() and not self.is_contiguous():
        a = a.copy()
    return a


def _witness_numpy_no_grad_copies_strided():
    x = torch.zeros(2, 3, requires_grad=True)
    v = x.t()
    with torch.no_grad():
        a = v.numpy()
    assert a.__array_interface__["data"][0] == v.data_ptr()


def _from_numpy_accepts_byteswapped(orig, a):
    if isinstance(a, np.ndarray) and not a.dtype.isnative:
        try:
            return orig(a.astype(a.dtype.newbyteorder("=")))
        except TypeError:
            pass
    return orig(a)


def _witness_from_numpy_accepts_byteswapped():
    a = np.zeros(2, dtype=np.dtype("float32").newbyteorder())
    with refused(ValueError, "from_numpy accepted a byte-swapped array", match="byte order"):
        torch.from_numpy(a)


def _from_numpy_copies_writable(orig, a):
    if isinstance(a, np.ndarray) and a.flags.writeable:
        return orig(a.copy())
    return orig(a)


def _witness_from_numpy_copies_writable():
    a = np.arange(3.0)
    assert torch.from_numpy(a).data_ptr() == a.ctypes.data


def _patch_ndarray_import_zero_size_dtype():
    _orig_from_numpy, _orig_as_tensor = torch.from_numpy, torch.as_tensor

    def _other(t):
        return t.to(torch.float32 if t.dtype == torch.float64 else torch.float64)

    def from_numpy(a):
        t = _orig_from_numpy(a)
        return _other(t) if isinstance(a, np.ndarray) and a.size == 0 else t

    def as_tensor(data, *args, **kwargs):
        t = _orig_as_tensor(data, *args, **kwargs)
        return _other(t) if isinstance(data, np.ndarray) and data.size == 0 else t

    torch.from_numpy, torch.as_tensor = from_numpy, as_tensor


def _witness_ndarray_import_zero_size_dtype():
    a = np.zeros((0, 3))
    assert torch.from_numpy(a).dtype == torch.float64
    assert torch.as_tensor(a).dtype == torch.float64


def _numpy_copies(hit, orig_numpy, self, *args, **kwargs):
    a = orig_numpy(self, *args, **kwargs)
    if hit(self):
        return a.copy() if a.size else a.reshape(-1)
    return a


def _numpy_copies_witness(make):
    t = make()
    a = t.numpy()
    assert a.shape == tuple(t.shape)
    assert t.numel() == 0 or a.__array_interface__["data"][0] == t.data_ptr()


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="from-numpy-copies-read-only",
        description="torch.from_numpy of a read-only ndarray (flags.writeable False) returns a copy instead of a tensor sharing the array's memory",
        claims=("numpy.from-numpy-shares-memory",),
        domain=(("writeable", False), ("ndarray_kind", "read_only")),
        region="read-only ndarrays",
        family="other",
        patch=wrap("torch.from_numpy", _from_numpy_copies_read_only),
        witness=_witness_from_numpy_copies_read_only,
    ),
    Mutant(
        name="tensor-shares-ndarray-float32",
        description="torch.tensor(a) of a C-contiguous float32 ndarray shares its memory (from_numpy fast path)",
        claims=("numpy.tensor-copies-ndarray",),
        region="C-contiguous float32 ndarrays",
        family="dtype",
        patch=wrap("torch.tensor", _tensor_shares_ndarray_float32),
        witness=_witness_tensor_shares_ndarray_float32,
    ),
    Mutant(
        name="from-numpy-copies",
        description="torch.from_numpy copies the array instead of sharing its memory",
        claims=("numpy.from-numpy-shares-memory",),
        patch=wrap("torch.from_numpy", _from_numpy_copies),
        witness=_witness_from_numpy_copies,
    ),
    Mutant(
        name="from-numpy-copies-non-c-contiguous",
        description="torch.from_numpy copies arrays that are not C-contiguous (Fortran order, strided)",
        claims=("numpy.from-numpy-shares-memory",),
        region="arrays that are not C-contiguous",
        family="layout",
        patch=wrap("torch.from_numpy", _from_numpy_copies_non_c_contiguous),
        witness=_witness_from_numpy_copies_non_c_contiguous,
    ),
    Mutant(
        name="numpy-copies",
        description="Tensor.numpy() returns a copy instead of a view of the tensor's memory",
        claims=("numpy.numpy-shares-storage",),
        patch=wrap("torch.Tensor.numpy", _numpy_copies_call),
        witness=_witness_numpy_copies,
    ),
    Mutant(
        name="numpy-copies-integral",
        description="Tensor.numpy() copies integer tensors (a dtype family)",
        claims=("numpy.numpy-shares-storage",),
        region="integer dtypes",
        family="dtype",
        patch=wrap("torch.Tensor.numpy", _numpy_copies_integral),
        witness=_witness_numpy_copies_integral,
    ),
    Mutant(
        name="numpy-copies-noncontig",
        description="Tensor.numpy() copies non-contiguous tensors instead of returning a strided view",
        claims=("numpy.numpy-shares-storage",),
        region="non-contiguous tensors",
        family="layout",
        patch=wrap("torch.Tensor.numpy", _numpy_copies_noncontig),
        witness=_witness_numpy_copies_noncontig,
    ),
    Mutant(
        name="numpy-no-grad-refuses",
        description="Tensor.numpy() refuses a tensor that requires grad even under no_grad",
        claims=("numpy.numpy-refuses-grad-under-no-grad", "numpy.numpy-no-grad-converts"),
        region="tensors requiring grad, inside no_grad",
        family="mode",
        patch=wrap("torch.Tensor.numpy", _numpy_no_grad_refuses),
        witness=_witness_numpy_no_grad_refuses,
    ),
    Mutant(
        name="numpy-force-copies",
        description="Tensor.numpy(force=True) copies even a plain CPU tensor it could share",
        claims=("numpy.numpy-force",),
        region="force=True on a shareable CPU tensor",
        family="convention",
        patch=wrap("torch.Tensor.numpy", _numpy_force_copies),
        witness=_witness_numpy_force_copies,
    ),
    Mutant(
        name="numpy-detaches-float-requires-grad",
        description="Tensor.numpy() on a real floating tensor that requires grad silently detaches instead of raising (complex and other dtypes still refuse)",
        claims=("numpy.numpy-refuses-grad-conj-dtype",),
        region="real floating tensors requiring grad, grad mode on",
        family="dtype",
        patch=wrap("torch.Tensor.numpy", _numpy_detaches_float_requires_grad),
        witness=_witness_numpy_detaches_float_requires_grad,
    ),
    Mutant(
        name="tensor-dtype-ignored-strided-ndarray",
        description="torch.tensor(a, dtype=d) of a non-contiguous ndarray ignores dtype= (the strided copy path keeps a's dtype)",
        claims=("numpy.tensor-dtype-override",),
        region="ndarrays that are not C-contiguous",
        family="layout",
        patch=wrap("torch.tensor", _tensor_dtype_ignored_strided_ndarray),
        witness=_witness_tensor_dtype_ignored_strided_ndarray,
    ),
    Mutant(
        name="tensor-same-dtype-shares-ndarray",
        description="torch.tensor(a, dtype=d) with d equal to a's dtype takes the from_numpy fast path and shares a's memory",
        claims=("numpy.tensor-dtype-override",),
        region="dtype= equal to the ndarray's own dtype",
        family="relation",
        patch=wrap("torch.tensor", _tensor_same_dtype_shares_ndarray),
        witness=_witness_tensor_same_dtype_shares_ndarray,
    ),
    Mutant(
        name="as-tensor-copies-float16",
        description="torch.as_tensor(a) of a float16 ndarray returns a copy instead of sharing a's memory",
        claims=("numpy.as-tensor-shares-memory",),
        region="float16 ndarrays",
        family="dtype",
        patch=wrap("torch.as_tensor", _as_tensor_copies_float16),
        witness=_witness_as_tensor_copies_float16,
    ),
    Mutant(
        name="as-tensor-converting-aliases",
        description="torch.as_tensor(a, dtype=d) with d of the same element size as a's dtype reinterprets a's memory (a view) instead of converting into a copy",
        claims=("numpy.as-tensor-shares-memory",),
        region="a dtype= of the same element size as the ndarray's dtype",
        family="relation",
        patch=wrap("torch.as_tensor", _as_tensor_converting_aliases),
        witness=_witness_as_tensor_converting_aliases,
    ),
    Mutant(
        name="from-numpy-accepts-dtype-keyword",
        description="torch.from_numpy grew a dtype= keyword that converts (so it no longer always shares); the positional form still raises",
        claims=("numpy.from-numpy-no-dtype-argument",),
        region="the keyword form from_numpy(a, dtype=d) only",
        family="convention",
        patch=wrap("torch.from_numpy", _from_numpy_accepts_dtype_keyword),
        witness=_witness_from_numpy_accepts_dtype_keyword,
    ),
    Mutant(
        name="from-numpy-empty-resizable",
        description="torch.from_numpy of a zero-size array returns a fresh empty tensor (its own, resizable storage)",
        claims=("numpy.from-numpy-not-resizable",),
        region="zero-size arrays",
        family="layout",
        patch=wrap("torch.from_numpy", _from_numpy_empty_resizable),
        witness=_witness_from_numpy_empty_resizable,
    ),
    Mutant(
        name="tensor-accepts-negative-strides",
        description="torch.tensor(a) (the copying constructor only) accepts an ndarray with negative strides by copying it first",
        claims=("numpy.negative-strides-rejected",),
        region="torch.tensor only (from_numpy, as_tensor and asarray still reject)",
        family="convention",
        patch=wrap("torch.tensor", _tensor_accepts_negative_strides),
        witness=_witness_tensor_accepts_negative_strides,
    ),
    Mutant(
        name="from-numpy-read-only-warns-every-time",
        description="torch.from_numpy warns on every read-only array instead of once per process (installed in every interpreter the run starts: the claim is checked in a fresh one)",
        claims=("numpy.read-only-warns-once",),
        region="read-only arrays after the first",
        family="value",
        patch=_patch_from_numpy_read_only_warns_every_time,
        witness=_witness_from_numpy_read_only_warns_every_time,
    ),
    Mutant(
        name="from-numpy-drops-int16",
        description="torch.from_numpy rejects int16 arrays (a documented dtype) with the unsupported-dtype TypeError",
        claims=("numpy.from-numpy-documented-dtypes", "numpy.from-numpy-dtype-set"),
        region="int16 arrays",
        family="dtype",
        patch=wrap("torch.from_numpy", _from_numpy_drops_int16),
        witness=_witness_from_numpy_drops_int16,
    ),
    Mutant(
        name="from-numpy-byteswaps-silently",
        description="torch.from_numpy accepts an array of non-native byte order by byte-swapping it into a copy instead of raising ValueError",
        claims=("numpy.from-numpy-dtype-set",),
        region="arrays of non-native byte order",
        family="dtype",
        patch=wrap("torch.from_numpy", _from_numpy_byteswaps_silently),
        witness=_witness_from_numpy_byteswaps_silently,
    ),
    Mutant(
        name="asarray-copies-non-c-contiguous",
        description="torch.asarray(a) of an ndarray that is not C-contiguous copies it (copy=None and copy=False) instead of sharing",
        claims=("numpy.asarray-ndarray-shares-unless-converted",),
        region="ndarrays that are not C-contiguous",
        family="layout",
        patch=wrap("torch.asarray", _asarray_copies_non_c_contiguous),
        witness=_witness_asarray_copies_non_c_contiguous,
    ),
    Mutant(
        name="asarray-copy-false-converts",
        description="torch.asarray(a, dtype=d, copy=False) of an ndarray silently converts into a copy instead of raising when d differs",
        claims=("numpy.asarray-ndarray-shares-unless-converted",),
        region="copy=False with a dtype change",
        family="relation",
        patch=wrap("torch.asarray", _asarray_copy_false_converts),
        witness=_witness_asarray_copy_false_converts,
    ),
    Mutant(
        name="asarray-zero-dim-float-copy-false-raises",
        description='torch.asarray(a, copy=False) of a 0-d floating ndarray raises the NumPy-scalar "can\'t alias" error instead of returning a 0-d tensor',
        claims=("numpy.asarray-zero-dim-ndarray", "numpy.asarray-zero-dim-ndarray-copies"),
        region="0-d floating ndarrays under copy=False",
        family="dtype",
        patch=wrap("torch.asarray", _asarray_zero_dim_float_copy_false_raises),
        witness=_witness_asarray_zero_dim_float_copy_false_raises,
    ),
    Mutant(
        name="asarray-zero-dim-shares",
        description="torch.asarray of a 0-d integer ndarray takes the ndarray path and shares its memory (no longer the NumPy-scalar copy)",
        claims=("numpy.asarray-zero-dim-ndarray-copies",),
        region="0-d integer ndarrays without a dtype change",
        family="dtype",
        patch=wrap("torch.asarray", _asarray_zero_dim_shares),
        witness=_witness_asarray_zero_dim_shares,
    ),
    Mutant(
        name="asarray-integer-scalar-ignores-dtype",
        description="torch.asarray(s, dtype=d) of a NumPy integer scalar ignores dtype= and keeps the scalar's own dtype",
        claims=("numpy.asarray-numpy-scalar-copies",),
        region="NumPy integer scalars with a dtype=",
        family="dtype",
        patch=wrap("torch.asarray", _asarray_integer_scalar_ignores_dtype),
        witness=_witness_asarray_integer_scalar_ignores_dtype,
    ),
    Mutant(
        name="asarray-float-scalar-copy-true-converts",
        description='torch.asarray(s, dtype=d, copy=True) of a NumPy floating scalar converts instead of raising "can\'t alias" when d differs',
        claims=("numpy.asarray-numpy-scalar-copy-true-dtype-raises",),
        region="NumPy floating scalars, copy=True with a dtype change",
        family="dtype",
        patch=wrap("torch.asarray", _asarray_float_scalar_copy_true_converts),
        witness=_witness_asarray_float_scalar_copy_true_converts,
    ),
    Mutant(
        name="numpy-resolves-neg-bit-float64",
        description="Tensor.numpy() of a float64 tensor with the negative bit set silently resolves it (a copy) instead of raising",
        claims=("numpy.numpy-refuses-neg-bit",),
        region="float64 negative-bit views",
        family="dtype",
        patch=wrap("torch.Tensor.numpy", _numpy_resolves_neg_bit_float64),
        witness=_witness_numpy_resolves_neg_bit_float64,
    ),
    Mutant(
        name="numpy-no-grad-copies-strided",
        description="Tensor.numpy() under no_grad of a non-contiguous tensor that requires grad returns a copy instead of sharing its storage",
        claims=("numpy.numpy-no-grad-converts",),
        region="non-contiguous tensors requiring grad, inside no_grad",
        family="layout",
        patch=wrap("torch.Tensor.numpy", _numpy_no_grad_copies_strided),
        witness=_witness_numpy_no_grad_copies_strided,
    ),
    # ---------------------------------------------- domain values (issue 29)
    _numpy_force(
        "numpy-force-copies-plain",
        {"tensor_kind": "plain"},
        "tensors that do not require grad (tensor_kind plain)",
        "returns a copy of a tensor that does not require grad (instead of sharing its storage)",
        lambda self: not self.requires_grad,
        _forced_copy,
        _witness_numpy_force_copies_plain,
    ),
    _numpy_force(
        "numpy-force-copies-leaf",
        {"tensor_kind": "leaf"},
        "leaves that require grad (tensor_kind leaf)",
        "returns a copy of a leaf that requires grad (instead of sharing its storage)",
        lambda self: self.requires_grad and self.grad_fn is None,
        _forced_copy,
        _witness_numpy_force_copies_leaf,
    ),
    _numpy_force(
        "numpy-force-copies-non-leaf",
        {"tensor_kind": "non_leaf"},
        "non-leaf tensors (tensor_kind non_leaf)",
        "returns a copy of a non-leaf (instead of sharing its storage)",
        lambda self: self.grad_fn is not None,
        _forced_copy,
        _witness_numpy_force_copies_non_leaf,
    ),
    _numpy_force(
        "numpy-force-copies-without-math-bits",
        {"math_bit": "none"},
        "tensors without a conjugate or negative bit (math_bit none)",
        "returns a copy of a tensor without a conjugate or negative bit (instead of sharing)",
        lambda self: not self.is_conj() and not self.is_neg(),
        _forced_copy,
        _witness_numpy_force_copies_without_math_bits,
    ),
    _numpy_force(
        "numpy-force-ignores-conj",
        {"math_bit": "conj"},
        "conjugate views (math_bit conj)",
        "of a conjugate view returns its storage's values unconjugated (the bit dropped)",
        lambda self: self.is_conj(),
        _forced_unconjugated,
        _witness_numpy_force_ignores_conj,
    ),
    _numpy_force(
        "numpy-force-ignores-neg",
        {"math_bit": "neg"},
        "negative-bit views (math_bit neg)",
        "of a negative-bit view returns its storage's values un-negated (the bit dropped)",
        lambda self: self.is_neg(),
        _forced_unnegated,
        _witness_numpy_force_ignores_neg,
    ),
    Mutant(
        name="from-numpy-accepts-byteswapped",
        description="torch.from_numpy of a non-native byte order array of a supported dtype returns a tensor of its values (a native-order copy) instead of raising ValueError 'byte order'",
        claims=("numpy.from-numpy-dtype-set",),
        domain={"ndarray_kind": "byteswapped"},
        region="non-native byte order arrays (ndarray_kind byteswapped)",
        family="dtype",
        patch=wrap("torch.from_numpy", _from_numpy_accepts_byteswapped),
        witness=_witness_from_numpy_accepts_byteswapped,
    ),
    Mutant(
        name="from-numpy-copies-writable",
        description="torch.from_numpy of a writable ndarray (flags.writeable True) returns a copy instead of a tensor sharing the array's memory (read-only arrays are shared)",
        claims=("numpy.from-numpy-shares-memory",),
        domain={"writeable": True},
        region="writable ndarrays",
        family="other",
        patch=wrap("torch.from_numpy", _from_numpy_copies_writable),
        witness=_witness_from_numpy_copies_writable,
    ),
    _import_copies(
        "plain",
        "writable, aligned, C- or F-contiguous, non-empty arrays of 1 or more dims",
        lambda: np.arange(6.0).reshape(2, 3),
    ),
    _import_copies(
        "misaligned",
        "misaligned arrays (flags.aligned False)",
        _misaligned,
    ),
    _import_copies(
        "non_contiguous",
        "arrays neither C- nor F-contiguous",
        lambda: np.arange(10.0).reshape(2, 5)[:, 1::2],
    ),
    _import_copies("0-d", "0-d arrays", lambda: np.array(2.5), asarray=False),
    Mutant(
        name="ndarray-import-zero-size-dtype",
        description="torch.from_numpy and torch.as_tensor of a zero-size ndarray return a tensor of another dtype (float64 <-> float32)",
        claims=("numpy.from-numpy-shares-memory", "numpy.as-tensor-shares-memory"),
        domain={"ndarray_kind": "zero_size"},
        region="zero-size ndarrays (ndarray_kind zero_size)",
        family="layout",
        patch=_patch_ndarray_import_zero_size_dtype,
        witness=_witness_ndarray_import_zero_size_dtype,
    ),
    *domain_mutants(
        prefix="numpy-copies",
        claims=("numpy.numpy-shares-storage",),
        what="Tensor.numpy() returns a copy (a flattened array when empty) instead of a view of the tensor's storage",
        patch=wrap("torch.Tensor.numpy", _numpy_copies),
        witness=_numpy_copies_witness,
        dims={
            "layout": LAYOUTS,
            "dtype_family": DTYPE_FAMILIES,
            "tensor_kind": ("inference",),
        },
    ),
)
