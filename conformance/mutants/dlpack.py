"""Mutants of the ``dlpack`` area (torch.from_dlpack, to_dlpack, Tensor.__dlpack__);
claims in ``conformance/claims/dlpack.toml``, tests in ``conformance/test_dlpack.py``.

``torch.from_dlpack`` is ``torch.utils.dlpack.from_dlpack``: mutants of the importer patch
both names. ``Tensor.__dlpack__`` is what ``torch.from_dlpack(t)`` and ``np.from_dlpack(t)``
call, so one patch reaches every export path but the legacy ``to_dlpack`` (a C function,
patched on its own where needed).

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
    other_dtype,
)
from conformance.mutants.base import Mutant
from conformance.mutants.patching import np, refused, torch, wrap


def _from_dlpack_copies(kind):
    import torch.utils.dlpack as _U

    _orig = _U.from_dlpack

    def from_dlpack(ext_tensor, *a, **k):
        if isinstance(ext_tensor, np.ndarray) and kind in ndarray_kinds(ext_tensor):
            if ext_tensor.size == 0:
                return _orig(ext_tensor, *a, **k).reshape(-1)
            return _orig(ext_tensor.copy(), *a, **k)
        return _orig(ext_tensor, *a, **k)

    _U.from_dlpack = from_dlpack
    torch.from_dlpack = from_dlpack


def _from_dlpack_shares(make):
    a = make()
    d = torch.from_dlpack(a)
    assert tuple(d.shape) == a.shape
    assert a.size == 0 or d.data_ptr() == a.__array_interface__["data"][0]


def _ndarray_import_copies(kind: str, arrays: str, make: Callable) -> Mutant:
    """A mutant of ``torch.from_dlpack`` that, for an ndarray of one
    ``ndarray_kind``, imports a copy of it (a flattened import when it is
    empty) instead of sharing its memory; ``make()`` builds the witness's
    array of that kind."""
    return Mutant(
        name=f"dlpack-ndarray-import-copies-{kind.replace('_', '-')}",
        description=f"torch.from_dlpack of {arrays} (ndarray objects or their capsules are "
        "told apart by the object only) imports a copy, or a flattened tensor when empty, "
        "instead of sharing the array's memory",
        claims=("dlpack.from-dlpack-shares-memory",),
        domain={"ndarray_kind": kind},
        region=f"{arrays} passed as the object (ndarray_kind {kind})",
        family="layout",
        patch=functools.partial(_from_dlpack_copies, kind),
        witness=functools.partial(_from_dlpack_shares, make),
    )


def _misaligned():
    a = np.zeros(25, dtype=np.uint8)[1:].view(np.float64)
    assert not a.flags.aligned
    return a


def _dlpack_from_copies_noncontig_capsule(orig, ext_tensor, *a, **k):
    out = orig(ext_tensor, *a, **k)
    if not hasattr(ext_tensor, "__dlpack__") and not out.is_contiguous():
        out = out.clone()
    return out


def _witness_dlpack_from_copies_noncontig_capsule():
    t = torch.arange(6.0).reshape(2, 3).t()
    assert torch.from_dlpack(t.__dlpack__()).data_ptr() == t.data_ptr()


def _dlpack_from_ndarray_copies_int16(orig, ext_tensor, *a, **k):
    out = orig(ext_tensor, *a, **k)
    if type(ext_tensor).__module__ == "numpy" and out.dtype == torch.int16:
        out = out.clone()
    return out


def _witness_dlpack_from_ndarray_copies_int16():
    a = np.arange(4, dtype=np.int16)
    assert torch.from_dlpack(a).data_ptr() == a.ctypes.data


def _dlpack_normalises_size1_strides(orig, ext_tensor, *a, **k):
    out = orig(ext_tensor, *a, **k)
    if 1 in out.shape:
        st = [1 if n == 1 else s for n, s in zip(out.shape, out.stride(), strict=False)]
        out = out.as_strided(out.shape, st, out.storage_offset())
    return out


def _witness_dlpack_normalises_size1_strides():
    t = torch.empty_strided((1, 3), (7, 1))
    assert torch.from_dlpack(t).stride() == (7, 1)


def _patch_dlpack_export_storage_base_with_byte_offset():
    import ctypes

    class _Dev(ctypes.Structure):
        _fields_ = [("t", ctypes.c_int32), ("i", ctypes.c_int32)]

    class _DT(ctypes.Structure):
        _fields_ = [("c", ctypes.c_uint8), ("b", ctypes.c_uint8), ("l", ctypes.c_uint16)]

    class _T(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.c_void_p),
            ("dev", _Dev),
            ("ndim", ctypes.c_int32),
            ("dtype", _DT),
            ("shape", ctypes.c_void_p),
            ("strides", ctypes.c_void_p),
            ("byte_offset", ctypes.c_uint64),
        ]

    class _M(ctypes.Structure):
        _fields_ = [("t", _T), ("ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    class _MV(ctypes.Structure):
        _fields_ = [
            ("major", ctypes.c_uint32),
            ("minor", ctypes.c_uint32),
            ("ctx", ctypes.c_void_p),
            ("deleter", ctypes.c_void_p),
            ("flags", ctypes.c_uint64),
            ("t", _T),
        ]

    _api = ctypes.pythonapi
    _api.PyCapsule_GetName.restype = ctypes.c_char_p
    _api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    _api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    _api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    _orig = torch.Tensor.__dlpack__

    def __dlpack__(self, **kw):
        cap = _orig(self, **kw)
        if self.storage_offset() and self.dtype.is_floating_point and self.numel():
            name = _api.PyCapsule_GetName(cap)
            p = _api.PyCapsule_GetPointer(cap, name)
            dl = (_MV if name == b"dltensor_versioned" else _M).from_address(p).t
            dl.data = self.untyped_storage().data_ptr()
            dl.byte_offset = self.storage_offset() * self.element_size()
        return cap

    torch.Tensor.__dlpack__ = __dlpack__


def _witness_dlpack_export_storage_base_with_byte_offset():
    base = torch.arange(8.0)
    v = base[3:]
    d = torch.from_dlpack(v.__dlpack__())
    assert d.storage_offset() == 0


def _dlpack_ignores_byte_offset_nd(orig, ext_tensor, *a, **k):
    out = orig(ext_tensor, *a, **k)
    if out.storage_offset() and out.dim() >= 2:
        out = out.as_strided(out.shape, out.stride(), 0)
    return out


def _witness_dlpack_ignores_byte_offset_nd():
    import ctypes

    class T(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.c_void_p),
            ("dev", ctypes.c_int64),
            ("ndim", ctypes.c_int32),
            ("dtype", ctypes.c_uint32),
            ("shape", ctypes.c_void_p),
            ("strides", ctypes.c_void_p),
            ("byte_offset", ctypes.c_uint64),
        ]

    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    base = torch.arange(6.0).reshape(3, 2)
    v = base[1:]
    cap = v.__dlpack__()
    dl = T.from_address(api.PyCapsule_GetPointer(cap, b"dltensor"))
    dl.data = base.data_ptr()
    dl.byte_offset = 2 * 4
    assert torch.from_dlpack(cap).data_ptr() == v.data_ptr()


def _dlpack_copy_true_ignored_contiguous(orig, self, **kw):
    if kw.get("copy") and self.is_contiguous():
        kw["copy"] = None
    return orig(self, **kw)


def _witness_dlpack_copy_true_ignored_contiguous():
    t = torch.arange(4.0)
    assert torch.from_dlpack(t, copy=True).data_ptr() != t.data_ptr()


def _dlpack_exports_nonleaf_requires_grad(orig, self, **kw):
    if self.requires_grad and not self.is_leaf:
        return orig(self.detach(), **kw)
    return orig(self, **kw)


def _witness_dlpack_exports_nonleaf_requires_grad():
    r = torch.ones(3, requires_grad=True) * 2
    with refused(BufferError, "exported a non-leaf that requires grad"):
        torch.from_dlpack(r)


def _dlpack_conj_resolved_silently_0d(orig, self, **kw):
    if self.is_conj() and self.dim() == 0:
        return orig(self.resolve_conj(), **kw)
    return orig(self, **kw)


def _witness_dlpack_conj_resolved_silently_0d():
    c = torch.tensor(1 + 2j).conj()
    with refused(BufferError, "exported a conjugate view"):
        torch.from_dlpack(c)


def _dlpack_to_dlpack_refuses_nonleaf(orig, tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return orig(tensor)


def _witness_dlpack_to_dlpack_refuses_nonleaf():
    import torch.utils.dlpack

    r = torch.ones(3, requires_grad=True) * 2
    try:
        cap = torch.utils.dlpack.to_dlpack(r)
    except BufferError:
        raise AssertionError("to_dlpack refused a non-leaf") from None
    assert torch.from_dlpack(cap).requires_grad is False


def _dlpack_import_canonicalises_nan_f16(orig, ext_tensor, *a, **k):
    out = orig(ext_tensor, *a, **k)
    if out.dtype == torch.float16 and bool(out.isnan().any()):
        out = torch.where(out.isnan(), torch.tensor(float("nan"), dtype=out.dtype), out)
    return out


def _witness_dlpack_import_canonicalises_nan_f16():
    t = torch.tensor([-float("nan")], dtype=torch.float16)
    d = torch.from_dlpack(t)
    assert d.view(torch.int16).item() == t.view(torch.int16).item()


def _dlpack_neg_view_resolved_float16(orig, self, **kw):
    if self.is_neg() and self.dtype == torch.float16:
        return orig(self.resolve_neg(), **kw)
    return orig(self, **kw)


def _witness_dlpack_neg_view_resolved_float16():
    n = torch._neg_view(torch.tensor([1.0, 2.0], dtype=torch.float16))
    assert torch.from_dlpack(n).tolist() == [1.0, 2.0]


def _dlpack_import_shares_version_counter_f64(orig, ext_tensor, *a, **k):
    if (
        isinstance(ext_tensor, torch.Tensor)
        and ext_tensor.dtype == torch.float64
        and not k.get("copy")
        and not ext_tensor.requires_grad
    ):
        return ext_tensor.detach()
    return orig(ext_tensor, *a, **k)


def _witness_dlpack_import_shares_version_counter_f64():
    t = torch.zeros(3, dtype=torch.float64)
    torch.from_dlpack(t).add_(1)
    assert t._version == 0


def _patch_dlpack_capsule_reuse_1d():
    import torch.utils.dlpack as _U

    _orig = _U.from_dlpack
    _seen = {}

    def from_dlpack(ext_tensor, *a, **k):
        if not hasattr(ext_tensor, "__dlpack__") and id(ext_tensor) in _seen:
            cap, out = _seen[id(ext_tensor)]
            if cap is ext_tensor:
                return out
        out = _orig(ext_tensor, *a, **k)
        if not hasattr(ext_tensor, "__dlpack__") and out.dim() == 1:
            _seen[id(ext_tensor)] = (ext_tensor, out)
        return out

    _U.from_dlpack = from_dlpack
    torch.from_dlpack = from_dlpack


def _witness_dlpack_capsule_reuse_1d():
    cap = torch.arange(3.0).__dlpack__()
    torch.from_dlpack(cap)
    with refused(RuntimeError, "a capsule was consumed twice"):
        torch.from_dlpack(cap)


def _dlpack_sparse_coo_densified(orig, self, **kw):
    if self.layout == torch.sparse_coo:
        return orig(self.to_dense(), **kw)
    return orig(self, **kw)


def _witness_dlpack_sparse_coo_densified():
    with refused(BufferError, "a sparse COO tensor was exported"):
        torch.eye(2).to_sparse().__dlpack__()


def _dlpack_readonly_copies_int(orig, ext_tensor, *a, **k):
    f = getattr(ext_tensor, "flags", None)
    if f is not None and not f.writeable and ext_tensor.dtype.kind in "iu":
        k["copy"] = True
    return orig(ext_tensor, *a, **k)


def _witness_dlpack_readonly_copies_int():
    a = np.arange(4, dtype=np.int32)
    a.flags.writeable = False
    assert torch.from_dlpack(a).data_ptr() == a.ctypes.data


def _dlpack_copy_true_reversed_2d_wrong_order(orig, ext_tensor, *a, **k):
    if (
        isinstance(ext_tensor, np.ndarray)
        and k.get("copy") is True
        and ext_tensor.ndim >= 2
        and any(s < 0 for s in ext_tensor.strides)
    ):
        ext_tensor = np.ascontiguousarray(ext_tensor[::-1])
    return orig(ext_tensor, *a, **k)


def _witness_dlpack_copy_true_reversed_2d_wrong_order():
    a = np.arange(6.0).reshape(2, 3)[:, ::-1]
    assert torch.from_dlpack(a, copy=True).tolist() == a.tolist()


def _dlpack_negative_stride_bool_raises(orig, ext_tensor, *a, **k):
    if (
        isinstance(ext_tensor, np.ndarray)
        and ext_tensor.dtype == np.bool_
        and any(s < 0 for s in ext_tensor.strides)
        and not k.get("copy")
    ):
        raise BufferError("negative strides are not supported")
    return orig(ext_tensor, *a, **k)


def _witness_dlpack_negative_stride_bool_raises():
    import faulthandler
    import os

    a = np.array([True, False, True])[::-1]
    pid = os.fork()
    if pid == 0:  # the import aborts on real torch 2.13: try it in a child
        faulthandler.disable()
        os.close(2)
        try:
            torch.from_dlpack(a)
        except BufferError:
            os._exit(3)
        except BaseException:
            os._exit(0)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) != 3, "a negative-stride bool array raised BufferError"


def _dlpack_cpu_accepts_stream_0(orig, self, **kw):
    if kw.get("stream") == 0 and type(kw.get("stream")) is int and self.device.type == "cpu":
        kw["stream"] = None
    return orig(self, **kw)


def _witness_dlpack_cpu_accepts_stream_0():
    with refused(AssertionError, "stream=0 accepted on CPU"):
        torch.zeros(2).__dlpack__(stream=0)


def _dlpack_bool_export_refused(orig, self, *args, **kwargs):
    if self.dtype == torch.bool:
        raise RuntimeError("Bool type is not supported by dlpack")
    return orig(self, *args, **kwargs)


def _witness_dlpack_bool_export_refused():
    t = torch.tensor([True, False])
    try:
        out = torch.from_dlpack(t.__dlpack__()).tolist()
    except (RuntimeError, BufferError) as e:
        raise AssertionError(f"bool export refused: {e}") from None
    assert out == [True, False]


def _dlpack_versioned_refused(orig, self, *args, **kwargs):
    if kwargs.get("max_version") is not None:
        raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
    return orig(self, *args, **kwargs)


def _witness_dlpack_versioned_refused():
    t = torch.arange(3.0)
    try:
        cap = t.__dlpack__(max_version=(1, 0))
    except TypeError as e:
        raise AssertionError(f"no versioned capsule: {e}") from None
    assert torch.from_dlpack(cap).tolist() == [0.0, 1.0, 2.0]


def _dlpack_device_reports_pinned_f16(orig, self):
    from torch.utils.dlpack import DLDeviceType

    if self.dtype == torch.float16:
        return (DLDeviceType.kDLCUDAHost, 0)
    return orig(self)


def _witness_dlpack_device_reports_pinned_f16():
    assert torch.ones(2, dtype=torch.float16).__dlpack_device__() == (1, 0)


def _dlpack_device_str_copies(orig, ext_tensor, *a, **k):
    out = orig(ext_tensor, *a, **k)
    if isinstance(k.get("device"), str) and not k.get("copy"):
        out = out.clone()
    return out


def _witness_dlpack_device_str_copies():
    t = torch.arange(4.0)
    assert torch.from_dlpack(t, device="cpu").data_ptr() == t.data_ptr()


def _dlpack_export_converts(hit, orig_dlpack, self, *args, **kwargs):
    if not self.requires_grad and not self.is_conj() and hit(self):
        return orig_dlpack(self.to(other_dtype(self.dtype)), *args, **kwargs)
    return orig_dlpack(self, *args, **kwargs)


def _dlpack_export_converts_witness(make):
    t = make()
    d = torch.from_dlpack(t)
    assert d.dtype == t.dtype and d.shape == t.shape
    assert t.numel() == 0 or d.data_ptr() == t.data_ptr()


def _dlpack_exports_requires_grad(hit, orig_dlpack, self, *args, **kwargs):
    if self.requires_grad and hit(self):
        return orig_dlpack(self.detach(), *args, **kwargs)
    return orig_dlpack(self, *args, **kwargs)


def _dlpack_exports_requires_grad_witness(make):
    t = make()
    with refused(BufferError, "a tensor that requires grad was exported"):
        t.__dlpack__()


def _dlpack_device_wrong_id(hit, orig_device, self):
    d = orig_device(self)
    if hit(self):
        return (d[0], 1)
    return d


def _dlpack_device_wrong_id_witness(make):
    t = make()
    assert t.__dlpack_device__() == (1, 0)


def _dlpack_exports_requires_grad_when(grad_enabled):
    _orig_dlpack = torch.Tensor.__dlpack__

    def __dlpack__(self, *args, **kwargs):
        if self.requires_grad and torch.is_grad_enabled() == grad_enabled:
            return _orig_dlpack(self.detach(), *args, **kwargs)
        return _orig_dlpack(self, *args, **kwargs)

    torch.Tensor.__dlpack__ = __dlpack__


def _dlpack_requires_grad_refused_when(grad_enabled):
    t = torch.ones(3, requires_grad=True)
    with torch.set_grad_enabled(grad_enabled):
        with refused(BufferError, "a tensor that requires grad was exported"):
            t.__dlpack__()


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="dlpack-from-copies-noncontig-capsule",
        description="torch.from_dlpack of a capsule copies when the described data is non-contiguous",
        claims=("dlpack.from-dlpack-shares-memory",),
        region="capsules (not tensor objects) of non-contiguous data",
        family="layout",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_from_copies_noncontig_capsule,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_from_copies_noncontig_capsule,
    ),
    Mutant(
        name="dlpack-from-ndarray-copies-int16",
        description="torch.from_dlpack of a NumPy int16 array copies it",
        claims=("dlpack.from-dlpack-shares-memory",),
        region="NumPy int16 producers",
        family="dtype",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_from_ndarray_copies_int16,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_from_ndarray_copies_int16,
    ),
    Mutant(
        name="dlpack-normalises-size1-strides",
        description="from_dlpack sets the stride of every size-1 dimension to 1 (issue #99803 come back)",
        claims=("dlpack.preserves-shape-strides-dtype",),
        region="tensors with a size-1 dimension whose stride is not 1",
        family="layout",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_normalises_size1_strides,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_normalises_size1_strides,
    ),
    Mutant(
        name="dlpack-export-storage-base-with-byte-offset",
        description="__dlpack__ of a floating view exports the storage base plus byte_offset (trunk's post-2.13 encoding)",
        claims=("dlpack.storage-offset-folded-on-export",),
        region="floating-point views with a storage offset",
        family="layout",
        patch=_patch_dlpack_export_storage_base_with_byte_offset,
        witness=_witness_dlpack_export_storage_base_with_byte_offset,
    ),
    Mutant(
        name="dlpack-ignores-byte-offset-nd",
        description="from_dlpack ignores a capsule's byte_offset for tensors of 2 or more dimensions (issue #168177)",
        claims=("dlpack.import-honours-byte-offset",),
        region="capsules of 2-d and higher tensors whose producer uses byte_offset",
        family="layout",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_ignores_byte_offset_nd,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_ignores_byte_offset_nd,
    ),
    Mutant(
        name="dlpack-copy-true-ignored-contiguous",
        description="__dlpack__(copy=True) of a contiguous tensor shares memory instead of copying",
        claims=("dlpack.copy-keyword",),
        region="contiguous torch producers",
        family="layout",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_copy_true_ignored_contiguous),
        witness=_witness_dlpack_copy_true_ignored_contiguous,
    ),
    Mutant(
        name="dlpack-exports-nonleaf-requires-grad",
        description="__dlpack__ exports a non-leaf that requires grad (silently detached) instead of raising",
        claims=("dlpack.requires-grad-export-raises",),
        region="non-leaf tensors that require grad",
        family="autograd",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_exports_nonleaf_requires_grad),
        witness=_witness_dlpack_exports_nonleaf_requires_grad,
    ),
    Mutant(
        name="dlpack-conj-resolved-silently-0d",
        description="__dlpack__ of a 0-d conjugate view resolves the bit instead of raising",
        claims=("dlpack.conj-bit-export-raises",),
        region="0-d conjugate views",
        family="layout",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_conj_resolved_silently_0d),
        witness=_witness_dlpack_conj_resolved_silently_0d,
    ),
    Mutant(
        name="dlpack-to-dlpack-refuses-nonleaf",
        description="the legacy to_dlpack starts refusing non-leaf tensors that require grad",
        claims=("dlpack.to-dlpack-skips-checks",),
        region="non-leaf tensors that require grad, legacy to_dlpack only",
        family="autograd",
        patch=wrap("torch.utils.dlpack.to_dlpack", _dlpack_to_dlpack_refuses_nonleaf),
        witness=_witness_dlpack_to_dlpack_refuses_nonleaf,
    ),
    Mutant(
        name="dlpack-import-canonicalises-nan-f16",
        description="from_dlpack of a float16 tensor holding NaNs returns a copy with every NaN canonical",
        claims=("dlpack.export-keeps-values",),
        region="float16 tensors holding a NaN (payloads and signs lost)",
        family="value",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_import_canonicalises_nan_f16,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_import_canonicalises_nan_f16,
    ),
    Mutant(
        name="dlpack-neg-view-resolved-float16",
        description="__dlpack__ of a float16 negative view resolves the bit (exports the values, not the storage)",
        claims=("dlpack.neg-bit-export-drops-sign",),
        region="float16 negative views",
        family="dtype",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_neg_view_resolved_float16),
        witness=_witness_dlpack_neg_view_resolved_float16,
    ),
    Mutant(
        name="dlpack-import-shares-version-counter-f64",
        description="torch.from_dlpack of a float64 tensor returns a detach()ed alias (sharing the version counter)",
        claims=("dlpack.version-counter-not-shared",),
        region="float64 tensors passed to torch.from_dlpack as objects",
        family="dtype",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_import_shares_version_counter_f64,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_import_shares_version_counter_f64,
    ),
    Mutant(
        name="dlpack-capsule-reuse-1d",
        description="a consumed capsule of a 1-d tensor can be imported again (the first import is returned)",
        claims=("dlpack.capsule-consumed-once",),
        region="capsules of 1-d tensors",
        family="layout",
        patch=_patch_dlpack_capsule_reuse_1d,
        witness=_witness_dlpack_capsule_reuse_1d,
    ),
    Mutant(
        name="dlpack-sparse-coo-densified",
        description="__dlpack__ of a sparse COO tensor exports its dense copy instead of raising",
        claims=("dlpack.unsupported-inputs-raise",),
        region="sparse COO tensors",
        family="layout",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_sparse_coo_densified),
        witness=_witness_dlpack_sparse_coo_densified,
    ),
    Mutant(
        name="dlpack-readonly-copies-int",
        description="torch.from_dlpack silently copies read-only integer ndarrays",
        claims=("dlpack.readonly-ndarray-import",),
        region="read-only integer ndarrays",
        family="dtype",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_readonly_copies_int,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_readonly_copies_int,
    ),
    Mutant(
        name="dlpack-copy-true-reversed-2d-wrong-order",
        description="from_dlpack(a, copy=True) of a 2-d or higher ndarray with a negative stride reads its first axis forwards",
        claims=("dlpack.negative-stride-no-crash",),
        region="copy=True imports of n-d ndarrays with a negative stride",
        family="layout",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_copy_true_reversed_2d_wrong_order,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_copy_true_reversed_2d_wrong_order,
    ),
    Mutant(
        name="dlpack-negative-stride-bool-raises",
        description="torch.from_dlpack raises BufferError for bool ndarrays with a negative stride (instead of aborting)",
        claims=("dlpack.negative-stride-import-aborts",),
        region="bool ndarrays with a negative stride, object form",
        family="dtype",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack",
            _dlpack_negative_stride_bool_raises,
            also=("torch.from_dlpack",),
        ),
        witness=_witness_dlpack_negative_stride_bool_raises,
    ),
    Mutant(
        name="dlpack-cpu-accepts-stream-0",
        description="__dlpack__ on CPU silently accepts stream=0 (as if it synchronized)",
        claims=("dlpack.stream-argument-cpu",),
        region="stream=0 on CPU tensors",
        family="other",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_cpu_accepts_stream_0),
        witness=_witness_dlpack_cpu_accepts_stream_0,
    ),
    Mutant(
        name="dlpack-bool-export-refused",
        description="__dlpack__ refuses bool tensors ('Bool type is not supported by dlpack'), as torch < 2.2 did",
        claims=("dlpack.from-dlpack-shares-memory",),
        region="bool tensors",
        family="dtype",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_bool_export_refused),
        witness=_witness_dlpack_bool_export_refused,
    ),
    Mutant(
        name="dlpack-versioned-refused",
        description="__dlpack__ does not take max_version= (no versioned capsules), as torch < 2.9",
        claims=("dlpack.from-dlpack-shares-memory",),
        region="the versioned producer form",
        family="other",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_versioned_refused),
        witness=_witness_dlpack_versioned_refused,
    ),
    Mutant(
        name="dlpack-device-reports-pinned-f16",
        description="__dlpack_device__ of a float16 CPU tensor reports pinned host memory (kDLCUDAHost, 0)",
        claims=("dlpack.dlpack-device-cpu",),
        region="float16 tensors",
        family="dtype",
        patch=wrap("torch.Tensor.__dlpack_device__", _dlpack_device_reports_pinned_f16),
        witness=_witness_dlpack_device_reports_pinned_f16,
    ),
    Mutant(
        name="dlpack-device-str-copies",
        description="torch.from_dlpack(x, device='cpu') copies although x is already on the CPU (a torch.device does not)",
        claims=("dlpack.from-dlpack-device-same-device",),
        region="device= given as a string",
        family="convention",
        patch=wrap(
            "torch.utils.dlpack.from_dlpack", _dlpack_device_str_copies, also=("torch.from_dlpack",)
        ),
        witness=_witness_dlpack_device_str_copies,
    ),
    # ---------------------------------------------- domain values (issue 29)
    *domain_mutants(
        prefix="dlpack-export-converts",
        claims=("dlpack.from-dlpack-shares-memory", "dlpack.export-keeps-values"),
        what="Tensor.__dlpack__ exports a converted copy (float64, or float32 / another complex dtype) of the tensor",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_export_converts),
        witness=_dlpack_export_converts_witness,
        dims={
            "layout": LAYOUTS,
            "dtype_family": DTYPE_FAMILIES,
        },
    ),
    *domain_mutants(
        prefix="dlpack-exports-requires-grad",
        claims=("dlpack.requires-grad-export-raises",),
        what="Tensor.__dlpack__ exports a tensor that requires grad (detached) instead of raising BufferError",
        patch=wrap("torch.Tensor.__dlpack__", _dlpack_exports_requires_grad),
        witness=_dlpack_exports_requires_grad_witness,
        dims={"tensor_kind": ("leaf", "non_leaf", "parameter")},
    ),
    *(
        Mutant(
            name=f"dlpack-exports-requires-grad-{mode.replace('_', '-')}",
            description="Tensor.__dlpack__ exports a tensor that requires grad (detached) instead of "
            f"raising BufferError, when grad mode is {'disabled' if mode == 'no_grad' else 'enabled'}",
            claims=("dlpack.requires-grad-export-raises",),
            domain={"grad_mode": mode},
            region=f"exports under grad_mode {mode}",
            family="mode",
            patch=functools.partial(_dlpack_exports_requires_grad_when, mode == "enabled"),
            witness=functools.partial(_dlpack_requires_grad_refused_when, mode == "enabled"),
        )
        for mode in ("enabled", "no_grad")
    ),
    *domain_mutants(
        prefix="dlpack-device-wrong-id",
        claims=("dlpack.dlpack-device-cpu",),
        what="t.__dlpack_device__() reports device id 1 instead of 0",
        patch=wrap("torch.Tensor.__dlpack_device__", _dlpack_device_wrong_id),
        witness=_dlpack_device_wrong_id_witness,
        dims={"tensor_kind": ("plain", "leaf", "parameter"), "math_bit": ("none", "conj", "neg")},
    ),
    _ndarray_import_copies("plain", "C-contiguous ndarrays", lambda: np.arange(6.0).reshape(2, 3)),
    _ndarray_import_copies("misaligned", "misaligned ndarrays (flags.aligned False)", _misaligned),
    _ndarray_import_copies(
        "non_contiguous",
        "non-contiguous ndarrays",
        lambda: np.arange(10.0).reshape(2, 5)[:, ::2],
    ),
    _ndarray_import_copies("zero_size", "zero-size ndarrays", lambda: np.zeros((0, 3))),
    _ndarray_import_copies("0-d", "0-d ndarrays", lambda: np.array(2.5)),
)
