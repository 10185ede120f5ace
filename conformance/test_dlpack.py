"""Properties of the DLPack boundary (claims in ``claims/dlpack.toml``):
``torch.from_dlpack``, ``torch.utils.dlpack.to_dlpack``, ``Tensor.__dlpack__`` and
NumPy on the other side (``np.from_dlpack``, ``ndarray.__dlpack__``).

DLPack exchanges host memory here, so every claim is registered ``devices = ["cpu"]``.
Conventions (see the claims' notes):

- Sharing is observed through the first element's address and through writes, never
  through ``checks.shares_storage``: an import gets a *new* storage that starts at the
  exported data pointer (``storage_offset() == 0``), so for an offset view the storage
  addresses differ although both address the same bytes.
- A zero-size tensor exports ``data = NULL``: address checks skip ``numel() == 0``.
- ``torch.from_dlpack`` of a NumPy array with a negative stride aborts the interpreter
  on torch 2.13; such imports only ever run in a forked child (:func:`_forked`), so a
  crash is a recorded failure signature and not a dead test worker.
- APIs younger than the suite's torch floor (2.1) are probed once, on ``torch._C`` (which
  no mutant patches): versioned capsules, ``copy=``/``dl_device=`` and
  ``from_dlpack(device=)`` arrive with ``_to_dlpack_versioned`` (torch 2.9), bool export with torch 2.2. Examples needing a
  missing one are *not applicable* on that torch.

Capsules are read with :mod:`ctypes` (the DLPack 0.8 / 1.x ABI of ``dlpack.h``), which
never consumes them. What each property kills (the broken torch it would catch) is in its
docstring.
"""

from __future__ import annotations

import ctypes
import dataclasses
import faulthandler
import math
import os
import signal
import tempfile
import time
import warnings

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from conformance import evidence
from conformance.capabilities import release_has
from conformance.checks import (
    assert_same_bits,
    bits_difference,
    capture_warnings,
    element_bytes,
    first_index,
    raises_with,
    sentinel_for,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    DOMAIN_SPEC_COMPLEX,
    domain_examples,
    domain_grid,
    non_empty,
    value_examples,
)

# --------------------------------------------------------------------------- probes

#: Versioned capsules, ``max_version=``, ``copy=`` and ``dl_device=`` (PR #145000 /
#: #150218; first released in torch 2.9). From the release, never by exporting.
HAS_VERSIONED = release_has("dlpack-versioned")
#: bool tensors export as kDLBool since PR #108486 (torch 2.2). From the
#: release: a broken bool export on a later release is a verdict, not "N/A".
HAS_BOOL_EXPORT = release_has("dlpack-bool-export")


def _probe_numpy_versioned() -> bool:
    try:
        np.zeros(1).__dlpack__(max_version=(1, 0))
    except (TypeError, AttributeError, BufferError):
        return False
    return True


#: NumPy exports versioned capsules (with the read-only flag) since NumPy 2.1.
NUMPY_VERSIONED = _probe_numpy_versioned()
#: NumPy's ``from_dlpack`` returns writable arrays since NumPy 2.2.5/2.3.
NUMPY_IMPORT_WRITABLE = bool(np.from_dlpack(torch.zeros(1)).flags.writeable)


def _needs(ok: bool, what: str) -> None:
    """Declare the example not applicable on this torch/NumPy when ``ok`` is false."""
    if not ok:
        from conformance.evidence import not_applicable

        not_applicable(what)


def _needs_dtype(dtype: torch.dtype) -> None:
    _needs(dtype != torch.bool or HAS_BOOL_EXPORT, "torch < 2.2 cannot export bool over DLPack")


#: Every torch dtype NumPy can hold (not bfloat16).
NUMPY_DTYPES = tuple(d for d in ALL_DTYPES if d != torch.bfloat16)

# ------------------------------------------------------------------ capsule reader


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]  # fmt: skip


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", _DLTensor)]  # fmt: skip


_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dl_tensor(capsule) -> _DLTensor:
    """The ``DLTensor`` inside an unconsumed capsule (a live ctypes view of it)."""
    name = _api.PyCapsule_GetName(capsule)
    ptr = _api.PyCapsule_GetPointer(capsule, name)
    if name == b"dltensor_versioned":
        return _DLManagedTensorVersioned.from_address(ptr).dl_tensor
    assert name == b"dltensor", f"not a DLPack capsule: {name!r}"
    return _DLManagedTensor.from_address(ptr).dl_tensor


def _capsule_fields(capsule) -> dict:
    """data, byte_offset, shape and strides of an unconsumed capsule."""
    dl = _dl_tensor(capsule)
    n = dl.ndim
    shape = tuple(dl.shape[i] for i in range(n))
    strides = tuple(dl.strides[i] for i in range(n)) if dl.strides else None
    return {"data": dl.data or 0, "byte_offset": dl.byte_offset, "shape": shape,
            "strides": strides}  # fmt: skip


# ----------------------------------------------------------------------- helpers

#: How a torch tensor crosses the boundary into torch.
TORCH_FORMS = ("object", "capsule", "versioned", "to_dlpack")


def _export(t: torch.Tensor, form: str):
    """The DLPack producer object for ``form``: the tensor itself or a capsule."""
    if form == "object":
        return t
    if form == "capsule":
        return t.__dlpack__()
    if form == "versioned":
        return t.__dlpack__(max_version=(1, 0))
    if form == "to_dlpack":
        return torch.utils.dlpack.to_dlpack(t)
    raise ValueError(form)


def _import(t: torch.Tensor, form: str) -> torch.Tensor:
    """``torch.from_dlpack`` of ``t`` through ``form``."""
    _needs(form != "versioned" or HAS_VERSIONED, "torch < 2.9 has no versioned DLPack capsules")
    _needs_dtype(t.dtype)
    return torch.from_dlpack(_export(t, form))


def _np_element_bytes(a: np.ndarray) -> np.ndarray:
    """Raw bytes of every element of ``a`` in logical row-major order (as
    :func:`conformance.checks.element_bytes` gives them for a tensor)."""
    flat = np.ascontiguousarray(a).reshape(-1)
    return flat.view(np.uint8).reshape(flat.size, a.itemsize)


def _np_same_bits(a: np.ndarray, t: torch.Tensor) -> bool:
    """``a`` holds ``t``'s values bit for bit (same shape and element size)."""
    if tuple(a.shape) != tuple(t.shape) or a.itemsize != t.element_size():
        return False
    return bool(np.array_equal(_np_element_bytes(a), element_bytes(t)))


def _np_sentinel(a: np.ndarray):
    """A value different from ``a``'s first element, exact in ``a``'s dtype."""
    first = a[first_index(a)].item()
    if a.dtype.kind == "b":
        return not first
    if a.dtype.kind == "c":
        return next(
            c for c in (7 + 7j, -3 - 3j, 5 + 5j) if c.real != first.real and c.imag != first.imag
        )
    if a.dtype.kind == "f":
        return 7.0 if first != 7.0 else -3.0
    return 7 if first != 7 else 3


def _tensor_write_seen(src: torch.Tensor, dst) -> bool:
    """Write a sentinel into ``src``'s first element; is it ``dst``'s first element now?"""
    value = sentinel_for(src)
    with torch.no_grad():
        src[first_index(src)] = value
    want = torch.tensor(value, dtype=src.dtype).item()
    got = dst[first_index(dst)]
    return (got.item() if hasattr(got, "item") else got) == want


def _array_write_seen(a: np.ndarray, t: torch.Tensor) -> bool:
    """Write a sentinel into ``a``'s first element; is it ``t``'s first element now?"""
    value = _np_sentinel(a)
    a[first_index(a)] = value
    return t[first_index(t)].item() == np.array(value, dtype=a.dtype).item()


def _neg_view(t: torch.Tensor) -> torch.Tensor:
    """A tensor with the negative bit set whose *storage* holds ``t``'s values
    (``torch._neg_view``: what ``c.conj().imag`` builds for a complex ``c``)."""
    return torch._neg_view(t)


# ===================================================================== sharing


@pytest.mark.claim("dlpack.from-dlpack-shares-memory")
@pytest.mark.observes("tensor")
@grid_examples(form="capsule", direction="to-source")
@given(
    spec=tensor_specs(),
    form=st.sampled_from(TORCH_FORMS),
    direction=st.sampled_from(["to-source", "to-import"]),
)
def test_from_dlpack_of_tensor_shares_memory(device, spec, form, direction):
    """torch -> torch in every producer form (the tensor object, ``__dlpack__()``,
    ``__dlpack__(max_version=(1, 0))``, legacy ``to_dlpack``).

    Kills: an import that copies (always, or for one layout, dtype or capsule kind), an
    import that starts at the storage base instead of the view's first element, or one
    that copies on write."""
    t = spec.build(device)
    d = _import(t, form)
    assert (d.shape, d.dtype) == (t.shape, t.dtype), "from_dlpack changed shape or dtype"
    if t.numel() == 0:
        return
    assert d.data_ptr() == t.data_ptr(), (
        "from_dlpack result does not start at the input's first element (not shared)"
    )
    if direction == "to-source":
        assert _tensor_write_seen(d, t), "a write through the import is not seen in the input"
    else:
        assert _tensor_write_seen(t, d), "a write to the input is not seen through the import"


#: Specs of the explicit examples of each value of a domain (issue 29).
_F32_SPEC = TensorSpec(
    dtype=torch.float32, base_shape=(2, 3), storage=(1.0, -0.0, 3.5, 4.0, 5.0, 6.0)
)
_F64_SPEC = TensorSpec(
    dtype=torch.float64, base_shape=(2, 3), storage=(1.0, -0.0, 3.5, 4.0, 5.0, 6.0)
)
_I32_SPEC = TensorSpec(dtype=torch.int32, base_shape=(2, 3), storage=(1, -2, 3, 4, 5, 6))
_C64_SPEC = TensorSpec(dtype=torch.complex64, base_shape=(2,), storage=(1 + 2j, -3j))


@pytest.mark.claim("dlpack.from-dlpack-shares-memory")
@pytest.mark.observes("numpy", "tensor")
@grid_examples(dtypes=NUMPY_DTYPES, form="object", direction="to-array", misaligned=False)
@example(spec=_F64_SPEC, form="object", direction="to-array", misaligned=True)
@example(spec=_I32_SPEC, form="capsule", direction="to-import", misaligned=True)
@example(spec=_C64_SPEC, form="object", direction="to-import", misaligned=True)
@given(
    spec=tensor_specs(dtype=NUMPY_DTYPES),
    form=st.sampled_from(["object", "capsule"]),
    direction=st.sampled_from(["to-array", "to-import"]),
    misaligned=st.just(False),
)
def test_from_dlpack_of_ndarray_shares_memory(device, spec, form, direction, misaligned):
    """NumPy -> torch: ``torch.from_dlpack(a)`` and ``torch.from_dlpack(a.__dlpack__())``
    of ndarrays of every layout (views of a torch-owned buffer), and - ``misaligned`` -
    of a C-contiguous copy placed one byte into a buffer (``flags.aligned`` False).

    Kills: an import of NumPy data that copies (for one layout, kind of array or dtype,
    or for capsules only)."""
    a = spec.build(device).numpy()
    if misaligned:
        raw = np.zeros(a.nbytes + 1, dtype=np.uint8)[1:]
        m = raw.view(a.dtype).reshape(a.shape)
        m[...] = a
        a = m
        assert not a.flags.aligned
    evidence.features(ndarray_kind=evidence.ndarray_kinds(a))
    _needs_dtype(spec.dtype)
    d = torch.from_dlpack(a if form == "object" else a.__dlpack__())
    assert tuple(d.shape) == a.shape, f"from_dlpack(ndarray) has shape {tuple(d.shape)}"
    if a.size == 0:
        return
    assert d.data_ptr() == a.ctypes.data, "from_dlpack(ndarray) does not share the array's memory"
    if direction == "to-array":
        assert _tensor_write_seen(d, a), "a write through the import is not seen in the array"
    else:
        assert _array_write_seen(a, d), "a write to the array is not seen through the import"


# ============================================================ layout and dtype


def _small_dims_with_odd_strides(t: torch.Tensor) -> bool:
    """Does ``t`` have a dimension of size 0 or 1 whose stride is not 1? Exporters
    before torch 2.10 rewrite exactly those strides to 1 (``toDLPack``'s normalization,
    issues #83069 and #99803); a region feature, computed from the input alone."""
    return any(n < 2 and s != 1 for n, s in zip(t.shape, t.stride(), strict=True))


def _size1_dim_off_row_major(t: torch.Tensor) -> bool:
    """Does a size-1 dimension of ``t`` have a stride other than the row-major stride the
    later dimensions imply (walking from the last dimension, the first size-1 stride that
    breaks the pattern)? torch 2.9's ``toDLPack`` normalizes the strides only then
    (cheaper than 2.1-2.8's normalization of every tensor); a region feature, computed
    from the input alone."""
    expected = 1
    for n, s in zip(reversed(t.shape), reversed(t.stride()), strict=True):
        if n == 1 and s != expected:
            return True
        expected *= n
    return False


def _each(decorators):
    r"""Apply each of ``decorators`` (explicit ``@example``\ s built in a loop)."""
    decorators = list(decorators)

    def apply(fn):
        for d in decorators:
            fn = d(fn)
        return fn

    return apply


@st.composite
def _odd_unit_strides(draw, spec_strategy):
    """A spec and, for each of its size-1 dims, a stride of 0..9 to give that dim (DLPack
    exporters once normalised such strides to 1: issues #83069, #99803)."""
    spec = draw(spec_strategy)
    ones = [i for i, n in enumerate(spec.shape) if n == 1]
    strides = tuple(draw(st.integers(0, 9)) for _ in ones)
    return spec, dict(zip(ones, strides, strict=True))


@pytest.mark.claim("dlpack.preserves-shape-strides-dtype")
# Issue 29: every layout and dtype family the sentence lists, by construction.
@_each(example(drawn=(s, {}), consumer="capsule") for s in domain_grid())
@given(
    drawn=_odd_unit_strides(tensor_specs(shape=shapes(max_dims=4, max_side=3))),
    consumer=st.sampled_from([*TORCH_FORMS, "numpy"]),
)
def test_from_dlpack_keeps_shape_strides_dtype(device, drawn, consumer):
    """Kills: an exporter or importer that normalises strides (of size-1 dims, 0-d,
    zero-size or expanded tensors), reorders a channels_last or permuted layout into a
    contiguous one, or changes the dtype."""
    spec, unit = drawn
    t = spec.build(device)
    if unit:
        stride = [unit.get(i, s) for i, s in enumerate(t.stride())]
        t = t.as_strided(t.shape, stride, t.storage_offset())
    # NumPy reports 0 strides for a zero-size array, so the numpy consumer
    # compares no stride of one: its strides cannot show the normalization.
    strides_compared = consumer != "numpy" or t.numel() > 0
    evidence.features(
        odd_unit_stride=any(s != 1 for s in unit.values()),
        small_dim_odd_stride=strides_compared and _small_dims_with_odd_strides(t),
        size1_dim_off_row_major=_size1_dim_off_row_major(t),
    )
    if consumer == "numpy":
        assume(spec.dtype != torch.bfloat16)
        _needs_dtype(t.dtype)
        a = np.from_dlpack(t)
        assert a.shape == tuple(t.shape), f"np.from_dlpack shape {a.shape} != {tuple(t.shape)}"
        assert a.itemsize == t.element_size(), "np.from_dlpack changed the element size"
        if t.numel():  # NumPy itself reports 0 strides for a zero-size array
            want = tuple(s * t.element_size() for s in t.stride())
            assert a.strides == want, f"np.from_dlpack strides {a.strides} != {want}"
        return
    d = _import(t, consumer)
    assert d.dtype == t.dtype, f"from_dlpack changed dtype {t.dtype} -> {d.dtype}"
    assert d.shape == t.shape, f"from_dlpack changed shape {tuple(t.shape)} -> {tuple(d.shape)}"
    assert d.stride() == t.stride(), f"from_dlpack changed strides {t.stride()} -> {d.stride()}"


@pytest.mark.claim("dlpack.storage-offset-folded-on-export")
@domain_examples(form="capsule")  # issue 29: every layout and dtype family
@given(
    spec=tensor_specs(),
    form=st.sampled_from(["capsule", "versioned", "to_dlpack"]),
)
def test_export_folds_storage_offset_into_data(device, spec, form):
    """Reads the capsule's ``DLTensor`` with ctypes before importing it.

    Kills: an exporter that hands out the storage base plus ``byte_offset`` (the change
    trunk made after 2.13, which consumers asserting ``byte_offset == 0`` break on), or one
    that exports the storage base and loses the offset (wrong first element)."""
    t = spec.build(device)
    _needs(form != "versioned" or HAS_VERSIONED, "torch < 2.9 has no versioned DLPack capsules")
    _needs_dtype(t.dtype)
    evidence.features(
        offset=t.storage_offset() > 0,
        small_dim_odd_stride=_small_dims_with_odd_strides(t),
        size1_dim_off_row_major=_size1_dim_off_row_major(t),
    )
    cap = _export(t, form)
    f = _capsule_fields(cap)
    assert f["byte_offset"] == 0, f"capsule byte_offset {f['byte_offset']} (want 0)"
    if t.numel():
        assert f["data"] == t.data_ptr(), (
            "capsule data does not point at the tensor's first element "
            f"(data - data_ptr() = {f['data'] - t.data_ptr()} bytes)"
        )
    assert f["shape"] == tuple(t.shape), f"capsule shape {f['shape']}"
    assert f["strides"] in (None, tuple(t.stride())), f"capsule strides {f['strides']}"
    d = torch.from_dlpack(cap)
    assert d.storage_offset() == 0, f"imported view has storage_offset {d.storage_offset()}"
    if t.numel():
        assert d.data_ptr() == t.data_ptr(), "imported view starts elsewhere"


@pytest.mark.claim("dlpack.import-honours-byte-offset")
# Issue 29: every non-empty layout and dtype family (k > 0 where the layout has an offset).
@domain_examples(where=non_empty, form="capsule", back=8)
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    form=st.sampled_from(["capsule", "versioned", "to_dlpack"]),
    back=st.integers(0, 8),
)
def test_import_honours_byte_offset(device, spec, form, back):
    """A producer may point ``data`` before the first element and put the difference in
    ``byte_offset``: the capsule of ``t`` is rewritten (ctypes) to ``data - k * itemsize``,
    ``byte_offset = k * itemsize``, with ``k`` up to ``t.storage_offset()`` (so ``data``
    stays inside ``t``'s storage). The import must still hold ``t``'s values at ``t``'s
    address.

    Kills: an importer that ignores ``byte_offset`` (issue #168177; reads ``k`` elements
    too early), or that adds it twice."""
    t = spec.build(device)
    _needs(form != "versioned" or HAS_VERSIONED, "torch < 2.9 has no versioned DLPack capsules")
    _needs_dtype(t.dtype)
    k = min(back, t.storage_offset())
    evidence.features(byte_offset=k > 0)
    cap = _export(t, form)
    dl = _dl_tensor(cap)
    dl.data = t.data_ptr() - k * t.element_size()
    dl.byte_offset = k * t.element_size()
    d = torch.from_dlpack(cap)
    assert d.data_ptr() == t.data_ptr(), (
        f"import of a capsule with byte_offset {k * t.element_size()} starts "
        f"{d.data_ptr() - t.data_ptr()} bytes away from data + byte_offset"
    )
    assert_same_bits(d, t, "the import honours byte_offset")


# ==================================================================== copy=


@pytest.mark.claim("dlpack.copy-keyword")
@pytest.mark.observes("numpy", "tensor")
@grid_examples(where=lambda s: math.prod(s.shape) > 0, producer="torch", form="object",
               copy=True)  # fmt: skip
@given(
    spec=tensor_specs(shape=shapes(min_side=1), values="all"),
    producer=st.sampled_from(["torch", "numpy"]),
    form=st.sampled_from(["object", "capsule", "versioned"]),
    copy=st.sampled_from([True, False, None]),
)
def test_copy_keyword(device, spec, producer, form, copy):
    """``torch.from_dlpack(x, copy=c)`` and ``torch.from_dlpack(x.__dlpack__(copy=c))``
    (unversioned and versioned) for torch and NumPy producers.

    Kills: a ``copy=True`` that aliases (for one layout, dtype, form or producer), a copy
    with different values (bit for bit, NaN payloads and -0.0 included), or a
    ``copy=False``/``None`` that copies a same-device CPU input."""
    _needs(HAS_VERSIONED, "torch < 2.9 has no copy= in from_dlpack / __dlpack__")
    if producer == "numpy":
        assume(spec.dtype != torch.bfloat16)
    _needs_dtype(spec.dtype)
    t = spec.build(device)
    want = spec.build(device)
    x = t if producer == "torch" else t.numpy()
    if form == "object":
        d = torch.from_dlpack(x, copy=copy)
    elif producer == "numpy":
        assume(form == "capsule")  # NumPy's capsule form: a.__dlpack__(copy=...)
        _needs(NUMPY_VERSIONED, "NumPy < 2.1 has no copy= in ndarray.__dlpack__")
        d = torch.from_dlpack(x.__dlpack__(copy=copy, max_version=(1, 0)))
    else:
        kw = {"max_version": (1, 0)} if form == "versioned" else {}
        d = torch.from_dlpack(x.__dlpack__(copy=copy, **kw))
    assert d.shape == t.shape and d.dtype == t.dtype, "from_dlpack changed shape or dtype"
    assert_same_bits(d, want, f"from_dlpack(copy={copy}) keeps the values")
    if copy:
        assert d.data_ptr() != t.data_ptr(), "from_dlpack(copy=True) shares the input's memory"
        assert not _tensor_write_seen(d, t), "a write to a copy=True import reached the input"
    else:
        assert d.data_ptr() == t.data_ptr(), f"from_dlpack(copy={copy}) copied a CPU input"


# ======================================================== refused exports


def _export_forms_with_checks(t: torch.Tensor, form: str):
    """The export paths that go through ``Tensor.__dlpack__``'s checks."""
    if form == "__dlpack__":
        return t.__dlpack__()
    if form == "versioned":
        _needs(HAS_VERSIONED, "torch < 2.9 has no versioned DLPack capsules")
        return t.__dlpack__(max_version=(1, 0))
    if form == "torch.from_dlpack":
        return torch.from_dlpack(t)
    if form == "np.from_dlpack":
        return np.from_dlpack(t)
    raise ValueError(form)


CHECKED_FORMS = ("__dlpack__", "versioned", "torch.from_dlpack", "np.from_dlpack")


@pytest.mark.claim("dlpack.requires-grad-export-raises")
@example(spec=_F32_SPEC, state="leaf", form="__dlpack__")
@example(spec=_F32_SPEC, state="non-leaf", form="torch.from_dlpack")
@example(spec=_F32_SPEC, state="parameter", form="np.from_dlpack")
@example(spec=_F32_SPEC, state="leaf-under-no-grad", form="__dlpack__")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    state=st.sampled_from(["leaf", "non-leaf", "parameter", "leaf-under-no-grad"]),
    form=st.sampled_from(CHECKED_FORMS),
)
def test_requires_grad_export_raises(device, spec, state, form):
    """Kills: an exporter that lets a tensor requiring grad out (silently detached: the
    import would alias it with no autograd link), for non-leaves, Parameters, under
    ``no_grad`` or in one export path."""
    if state == "non-leaf":
        t = spec.build(device, requires_grad=True) * 1
    elif state == "parameter":
        t = torch.nn.Parameter(spec.build(device))
    else:
        t = spec.build(device, requires_grad=True, leaf=True)
    evidence.features(
        tensor_kind={"non-leaf": "non_leaf", "parameter": "parameter"}.get(state, "leaf"),
        grad_mode="no_grad" if state == "leaf-under-no-grad" else "enabled",
    )
    with raises_with(BufferError, "Can't export tensors that require gradient"):
        if state == "leaf-under-no-grad":
            with torch.no_grad():
                _export_forms_with_checks(t, form)
        else:
            _export_forms_with_checks(t, form)


@pytest.mark.claim("dlpack.conj-bit-export-raises")
@domain_examples(dtypes=COMPLEX, form="__dlpack__")  # issue 29: every layout
@given(spec=tensor_specs(dtype=COMPLEX), form=st.sampled_from(CHECKED_FORMS))
def test_conj_bit_export_raises(device, spec, form):
    """A conjugate view (``c.conj()`` of a complex tensor) cannot be exported; its
    ``resolve_conj()`` exports the conjugated values.

    Kills: an exporter that drops the conjugate bit (silently exporting the unconjugated
    storage), or that resolves it only for some layouts."""
    c = spec.build(device).conj()
    with raises_with(BufferError, "Can't export tensors with the conjugate bit set"):
        _export_forms_with_checks(c, form)
    if form != "np.from_dlpack":
        r = c.resolve_conj()
        d = torch.from_dlpack(r)
        assert_same_bits(d, c, "the export of resolve_conj() holds the conjugated values")


@pytest.mark.claim("dlpack.to-dlpack-skips-checks")
@domain_examples(dtypes=DIFFERENTIABLE, case="leaf")  # issue 29
@value_examples("case", ("leaf", "non-leaf", "conj"), spec=DOMAIN_SPEC_COMPLEX)
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    case=st.sampled_from(["leaf", "non-leaf", "conj"]),
)
def test_legacy_to_dlpack_skips_the_checks(device, spec, case):
    """Pins the legacy path's hole: ``torch.utils.dlpack.to_dlpack`` runs none of
    ``__dlpack__``'s checks. A tensor requiring grad exports, and its import is a leaf
    without grad sharing its memory; a conjugate view exports its *storage* (the
    unconjugated values) with no conjugate bit.

    Kills: a ``to_dlpack`` that starts refusing (or resolving) these inputs, for one
    autograd state or dtype (the change an upgrade gate should see)."""
    if case == "conj":
        assume(spec.dtype in COMPLEX)
        evidence.features(math_bit="conj")
        t = spec.build(device).conj()
    else:
        evidence.features(math_bit="none", tensor_kind="leaf" if case == "leaf" else "non_leaf")
        t = spec.build(device, requires_grad=True, leaf=case == "leaf")
        if case == "non-leaf":
            t = t.expand(t.shape)  # a non-leaf view (ExpandBackward0), same values
    d = torch.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    assert d.requires_grad is False and d.is_leaf and d.grad_fn is None, (
        "to_dlpack import carries autograd state"
    )
    assert not d.is_conj(), "to_dlpack import has the conjugate bit"
    if t.numel():
        assert d.data_ptr() == t.data_ptr(), "to_dlpack import does not share the input's memory"
    assert_same_bits(d, spec.build(device), "to_dlpack exports the raw storage values")


# ============================================================== values


def _maybe_neg(spec, device, neg: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(tensor under test, the tensor whose storage it shows with the sign bit flipped)."""
    t = spec.build(device)
    if not neg:
        return t, None
    if t.is_complex():
        return t.conj().imag, t.imag
    return _neg_view(t), t


@pytest.mark.claim("dlpack.export-keeps-values")
@grid_examples(grid_values="all", neg=False, consumer="object")
@given(
    spec=tensor_specs(values="all"),
    neg=st.booleans(),
    consumer=st.sampled_from(["object", "capsule", "to_dlpack", "numpy"]),
)
def test_export_keeps_values(device, spec, neg, consumer):
    """Every export holds the tensor's *values*, bit for bit (NaN payloads, -0.0,
    subnormals), including a tensor with the negative bit set (``c.conj().imag``,
    ``torch._neg_view``): like the conjugate bit it must be refused or resolved, never
    dropped. (torch 2.13 drops it: recorded deviation, pinned by
    ``dlpack.neg-bit-export-drops-sign``.)

    Kills: an export that changes values for some dtype (canonicalised NaN, flushed -0.0
    or subnormals), or that drops a negative bit."""
    if neg:
        assume(spec.dtype in ARITHMETIC)  # the negative bit needs a neg kernel
    if consumer == "numpy":
        assume(spec.dtype != torch.bfloat16)
    t, raw = _maybe_neg(spec, device, neg)
    _needs_dtype(t.dtype)
    evidence.features(neg_bit=t.is_neg(), negated_differs=raw is not None and not _same(t, raw))
    if consumer == "numpy":
        a = np.from_dlpack(t)
        assert _np_same_bits(a, t), "np.from_dlpack keeps the tensor's values: bits differ"
        return
    d = torch.from_dlpack(_export(t, consumer))
    assert not d.is_neg(), "from_dlpack result has a negative bit"
    assert_same_bits(d, t, "from_dlpack keeps the tensor's values")


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bits_difference(a, b) is None


@pytest.mark.claim("dlpack.neg-bit-export-drops-sign")
@grid_examples(dtypes=ARITHMETIC, grid_values="all", consumer="capsule")
@given(
    spec=tensor_specs(dtype=ARITHMETIC, values="all"),
    consumer=st.sampled_from(["object", "capsule", "versioned", "to_dlpack", "numpy"]),
)
def test_neg_bit_export_drops_sign(device, spec, consumer):
    """Pins torch 2.13: ``__dlpack__`` checks the conjugate bit but not the negative bit,
    so a negative view exports its storage - the values with the sign flipped - with no
    error and no warning, to torch and to NumPy.

    Kills: a change in how negative views export (resolved, refused, or wrong in another
    way), for one dtype or consumer."""
    if consumer == "numpy":
        assume(spec.dtype != torch.bfloat16)
    t, raw = _maybe_neg(spec, device, True)
    _needs_dtype(t.dtype)
    with capture_warnings() as caught:
        if consumer == "numpy":
            a = np.from_dlpack(t)
            assert _np_same_bits(a, raw), "np.from_dlpack(neg view) does not hold its storage"
        else:
            d = _import(t, consumer)
            assert not d.is_neg(), "the import of a negative view has the negative bit"
            assert_same_bits(d, raw, "from_dlpack(neg view) holds the view's storage")
    assert not caught, f"exporting a negative view warned: {caught[0].message}"


# ======================================================== version counter


@pytest.mark.claim("dlpack.version-counter-not-shared")
@pytest.mark.observes("backward", "detach", "tensor")
# Issue 29: every layout that can be written through, every dtype family.
@domain_examples(
    where=lambda s: not any(v[0] == "expand" for v in s.views) and all(n > 0 for n in s.shape),
    consumer="object",
)
@given(
    spec=tensor_specs(views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    consumer=st.sampled_from(["object", "capsule", "to_dlpack", "numpy"]),
)
def test_import_does_not_share_version_counter(device, spec, consumer):
    """A write through an import changes ``t``'s memory but not ``t._version``; so a
    ``backward`` that saved ``t`` runs without the "modified by an inplace operation"
    error and silently uses the new values (differentiable dtypes).

    Kills: an import that is a torch view sharing the version counter (the check would
    fire), or one that does not share memory at all (the write would not be seen)."""
    if consumer == "numpy":
        assume(spec.dtype != torch.bfloat16)
    t = spec.build(device)
    _needs_dtype(t.dtype)
    before = t._version
    if consumer == "numpy":
        _needs(NUMPY_IMPORT_WRITABLE, "NumPy < 2.2.5 imports DLPack data read-only")
        a = np.from_dlpack(t)
        assert _array_write_seen(a, t), "a write through np.from_dlpack(t) is not seen in t"
    else:
        d = torch.from_dlpack(_export(t, consumer))
        assert _tensor_write_seen(d, t), "a write through the import is not seen in t"
        assert d._version > 0, "the write did not bump the import's own version counter"
    assert t._version == before, (
        f"a write through the import bumped the source's version ({before} -> {t._version})"
    )
    if spec.dtype not in DIFFERENTIABLE:
        return
    x = spec.build(device, requires_grad=True, leaf=True)
    loss = (x * x).sum()
    if loss.is_complex():
        loss = loss.real
    if consumer == "numpy":
        b = np.from_dlpack(x.detach())
        b[first_index(b)] = _np_sentinel(b)
    else:
        d = torch.from_dlpack(_export(x.detach(), consumer))
        with torch.no_grad():
            d[first_index(d)] = sentinel_for(d)
    loss.backward()  # must not raise: the saved x's version did not move


# ====================================================== capsules, errors


@pytest.mark.claim("dlpack.capsule-consumed-once")
@given(spec=tensor_specs(), form=st.sampled_from(["capsule", "versioned", "to_dlpack"]))
def test_capsule_can_be_consumed_once(device, spec, form):
    """Kills: an importer that accepts a consumed capsule again (a second owner of the
    same memory, use after free once both are deleted)."""
    t = spec.build(device)
    _needs(form != "versioned" or HAS_VERSIONED, "torch < 2.9 has no versioned DLPack capsules")
    _needs_dtype(t.dtype)
    cap = _export(t, form)
    torch.from_dlpack(cap)
    with raises_with(RuntimeError, "consumed only once"):
        torch.from_dlpack(cap)


#: A float64 offset, transposed 2 x 3 tensor (its ``numpy()`` is non-contiguous;
#: items wider than a byte, so a copy one byte into a buffer is misaligned).
DOMAIN_SPEC_F64 = dataclasses.replace(DOMAIN_SPEC, dtype=torch.float64)

SPARSE_LAYOUTS = ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")


@pytest.mark.claim("dlpack.unsupported-inputs-raise")
@pytest.mark.observes("to")
@given(
    spec=tensor_specs(
        dtype=(torch.float32, torch.float64), shape=shapes(min_dims=2, max_dims=2), views=False
    ),
    kind=st.sampled_from([*SPARSE_LAYOUTS, "quint8", "qint8", "qint32"]),
    form=st.sampled_from(["__dlpack__", "versioned", "torch.from_dlpack"]),
)
def test_unsupported_inputs_raise_buffer_error(device, spec, kind, form):
    """Kills: an exporter that densifies a sparse tensor or dequantizes a quantized one
    (silently exporting different memory than the tensor's), for one layout or qdtype."""
    t = spec.build(device).to(torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sparse CSR/BSR "beta" notices
        if kind in SPARSE_LAYOUTS:
            x = {
                "sparse_coo": lambda: t.to_sparse(),
                "sparse_csr": lambda: t.to_sparse_csr(),
                "sparse_csc": lambda: t.to_sparse_csc(),
                "sparse_bsr": lambda: t.to_sparse_bsr((1, 1)),
                "sparse_bsc": lambda: t.to_sparse_bsc((1, 1)),
            }[kind]()
            message = "Can't export tensors with layout other than torch.strided"
        else:
            x = torch.quantize_per_tensor(t, 0.5, 0, getattr(torch, kind))
            message = "QUInt/QInt types are not supported by dlpack"
        with raises_with(BufferError, message):
            _export_forms_with_checks(x, form)


@pytest.mark.claim("dlpack.readonly-ndarray-import")
@pytest.mark.observes("numpy", "tensor")
# Issue 29: every non-empty layout and dtype family of the array (t.numpy() of
# the grid's tensors: C-contiguous, non-contiguous, 0-d), for each copy=, and
# a misaligned read-only array (a copy one byte into a buffer).
@domain_examples(dtypes=NUMPY_DTYPES, where=non_empty, copy=None, misaligned=False)
@domain_examples(dtypes=NUMPY_DTYPES, where=non_empty, copy=False, misaligned=False)
@domain_examples(dtypes=NUMPY_DTYPES, where=non_empty, copy=True, misaligned=False)
@value_examples("copy", [None, False, True], spec=DOMAIN_SPEC_F64, misaligned=True)
@given(
    spec=tensor_specs(dtype=NUMPY_DTYPES, shape=shapes(min_side=1), values="all"),
    copy=st.sampled_from([None, False, True]),
    misaligned=st.just(False),
)
def test_readonly_ndarray_imports_writable(device, spec, copy, misaligned):
    """Pins torch 2.13: a read-only ndarray (its versioned capsule carries
    ``DLPACK_FLAG_BITMASK_READ_ONLY``) imports without a warning as a writable alias - a
    write through it changes the array - unless ``copy=True``.

    Kills: an importer that starts to honour the read-only flag (warns, copies or makes
    the tensor read-only) for some dtype or layout, or a ``copy=True`` that aliases."""
    _needs(HAS_VERSIONED, "torch < 2.9 does not ask for versioned capsules (max_version)")
    _needs(NUMPY_VERSIONED, "NumPy < 2.1 refuses to export read-only arrays")
    _needs_dtype(spec.dtype)
    a = spec.build(device).numpy()
    if misaligned:  # a C-contiguous copy one byte into a buffer
        m = np.zeros(a.nbytes + 1, dtype=np.uint8)[1:].view(a.dtype).reshape(a.shape)
        m[...] = a
        a = m
    a.flags.writeable = False
    evidence.features(ndarray_kind=evidence.ndarray_kinds(a))
    want = spec.build(device)
    with capture_warnings() as caught:
        d = torch.from_dlpack(a) if copy is None else torch.from_dlpack(a, copy=copy)
    assert not caught, f"importing a read-only array warned: {caught[0].message}"
    assert_same_bits(d, want, "the import of a read-only array keeps its values")
    seen = _tensor_write_seen(d, a)
    if copy:
        assert not seen, "a write to a copy=True import of a read-only array reached the array"
    else:
        assert seen, "the import of a read-only array does not alias it (or is not writable)"


# ======================================================= negative strides


def _forked(fn, timeout: float = 60.0) -> tuple[int | None, bytes, str]:
    """Run ``fn()`` in a forked child of this process (which inherits torch, patched or
    not). Returns ``(exit code - negative for a signal, None on timeout -, the bytes
    ``fn`` returned, the head of the child's stderr)``. The child never returns into
    the caller: it always ends with ``os._exit``."""
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork to contain an interpreter crash")
    r, w = os.pipe()
    with tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 0
            try:
                faulthandler.disable()  # the parent's handler would dump onto its stderr
                os.close(r)
                os.dup2(err.fileno(), 2)
                out = fn()
                os.write(w, out)
            except BaseException as e:  # a Python exception is an outcome, not a crash
                os.write(w, b"EXC " + f"{type(e).__name__}: {e}".encode()[:500])
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        chunks = []
        deadline = time.monotonic() + timeout
        status = None
        while True:
            done, st_ = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(st_)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.002)
        while chunk := os.read(r, 1 << 16):
            chunks.append(chunk)
        os.close(r)
        err.seek(0)
        head = err.read(4000).decode(errors="replace")
    return status, b"".join(chunks), head


@st.composite
def _reversed_arrays(draw):
    """(ndarray with at least one negative stride, a description): a spec's ndarray of
    1-3 dims with some axes stepped backwards (-1 or -2), optionally transposed."""
    spec = draw(tensor_specs(dtype=NUMPY_DTYPES, shape=shapes(min_dims=1, max_dims=3),
                             views=False))  # fmt: skip
    a = spec.build().numpy()
    axes = draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, unique=True))
    step = draw(st.sampled_from([-1, -2]))
    index = tuple(slice(None, None, step) if i in axes else slice(None) for i in range(a.ndim))
    a = a[index]
    if a.ndim >= 2 and draw(st.booleans()):
        a = a.T
    return a


def _import_in_child(a: np.ndarray, form: str, copy):
    def run() -> bytes:
        x = a if form == "object" else a.__dlpack__()
        d = torch.from_dlpack(x) if copy is None else torch.from_dlpack(x, copy=copy)
        shared = a.size > 0 and d.data_ptr() == a.ctypes.data
        return b"OK %d " % shared + element_bytes(d).tobytes()

    return _forked(run)


def _negative_stride_features(a: np.ndarray, form: str, copy) -> dict:
    reversed_axis = a.size > 0 and any(
        n > 1 and s < 0 for n, s in zip(a.shape, a.strides, strict=True)
    )
    producer_copies = form == "object" and copy is True
    evidence.features(reversed_axis=reversed_axis, producer_copies=producer_copies)
    return {"reversed_axis": reversed_axis, "producer_copies": producer_copies}


#: Generated examples of the two forked-child properties (besides their explicit grid): a
#: fork of the test process costs tens of milliseconds, and their input space (dtype x
#: rank x reversed axes x 4 call forms) is small, so they draw fewer examples than the
#: profile's (in every profile).
FORKED_EXAMPLES = 30

FORM_COPIES = (("object", None), ("object", False), ("object", True), ("capsule", None))
_FORM_COPY = st.sampled_from(FORM_COPIES)


def _negative_stride_grid(fn):
    """One explicit example per (reversed layout, call form): distinct values, so an
    import that reads a reversed axis forwards is seen whatever the draws. The first
    array reverses a size-1 axis: its stride is negative, yet NumPy calls it
    C-contiguous (``ndarray_kind`` plain; issue 29)."""
    from hypothesis import example

    arrays = (
        np.arange(1.0, 7.0).reshape(1, 6)[::-1],  # a size-1 axis reversed: C-contiguous
        np.arange(1.0, 7.0)[::-1],  # 1-d reversed
        np.arange(1, 7, dtype=np.int32).reshape(2, 3)[:, ::-1],  # inner axis reversed
        np.arange(1, 7, dtype=np.int16).reshape(2, 3)[::-1].T,  # reversed, transposed
        np.array([True, False, True, True])[::-2],  # bool, step -2
        np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)[::-1, ::-1],  # both reversed
    )
    for a in arrays:
        for fc in FORM_COPIES:
            fn = example(a=a, form_copy=fc)(fn)
    return fn


@pytest.mark.claim("dlpack.negative-stride-no-crash")
@pytest.mark.observes("numpy")
@_negative_stride_grid
@settings(max_examples=FORKED_EXAMPLES)
@given(a=_reversed_arrays(), form_copy=_FORM_COPY)
def test_negative_stride_import_never_crashes(device, a, form_copy):
    """``torch.from_dlpack`` of an ndarray with a negative stride (object form with
    ``copy`` None/False/True, or its capsule) must raise a Python exception, or return a
    tensor holding the array's values; ``copy=False`` may not copy. Runs in a forked child.

    Kills: an import that terminates the interpreter (torch 2.13 aborts: recorded
    deviation, pinned by ``dlpack.negative-stride-import-aborts``), or one that returns
    wrong values (e.g. the reversed axis read forwards)."""
    form, copy = form_copy
    _needs(copy is None or HAS_VERSIONED, "torch < 2.9 has no copy= in from_dlpack")
    _negative_stride_features(a, form, copy)
    evidence.features(ndarray_kind=evidence.ndarray_kinds(a))
    status, out, err = _import_in_child(a, form, copy)
    assert status == 0, (
        f"from_dlpack of a negative-stride array terminated the interpreter "
        f"(exit {status}): {_first_error_line(err)}"
    )
    if out.startswith(b"EXC "):
        return  # a Python exception is allowed
    assert out.startswith(b"OK "), f"unexpected child output {out[:80]!r}"
    shared, data = out[3:4] == b"1", out[5:]
    assert data == _np_element_bytes(a).tobytes(), (
        "from_dlpack of a negative-stride array returned different values"
    )
    assert not (copy is False and not shared) or a.size == 0, "from_dlpack(copy=False) copied"


def _first_error_line(err: str) -> str:
    for line in err.splitlines():
        if "what()" in line or "Error" in line:
            return line.strip()[:200]
    return err.strip().splitlines()[0][:200] if err.strip() else "(no stderr)"


@pytest.mark.claim("dlpack.negative-stride-import-aborts")
@pytest.mark.observes("numpy")
@_negative_stride_grid
@settings(max_examples=FORKED_EXAMPLES)
@given(a=_reversed_arrays(), form_copy=_FORM_COPY)
def test_negative_stride_import_aborts(device, a, form_copy):
    """Pins torch 2.13 (issue #188023, still reproducible although closed): an ndarray
    with a negative stride on a dimension of size > 1 exported *as is* (not copied by
    NumPy) makes ``from_dlpack`` abort the process (SIGABRT, c10::Error "Storage size
    calculation overflowed"); with ``copy=True`` NumPy exports a positive-stride copy and
    the import holds the array's values. Runs in a forked child.

    Kills: any change of this behaviour for some dtype, rank or form (a fix shows up as a
    failure here and an unexpected pass of ``dlpack.negative-stride-no-crash``)."""
    form, copy = form_copy
    _needs(copy is None or HAS_VERSIONED, "torch < 2.9 has no copy= in from_dlpack")
    f = _negative_stride_features(a, form, copy)
    evidence.features(ndarray_kind=evidence.ndarray_kinds(a))
    status, out, err = _import_in_child(a, form, copy)
    if f["reversed_axis"] and not f["producer_copies"]:
        assert status == -signal.SIGABRT, (
            f"from_dlpack of a negative-stride array no longer aborts (exit {status}, "
            f"output {out[:60]!r})"
        )
        assert "Storage size calculation overflowed" in err, _first_error_line(err)
        return
    assert status == 0 and out.startswith(b"OK "), f"exit {status}, output {out[:80]!r}"
    assert out[5:] == _np_element_bytes(a).tobytes(), "the import holds different values"


# ================================================================ streams


@pytest.mark.claim("dlpack.stream-argument-cpu")
@given(
    spec=tensor_specs(),
    stream=st.sampled_from([None, -1, 0, 1, 2, 3, 2**40, -2, True, 1.0, "0", ()]),
)
# stream=0 is one value of twelve: pinned so that no draw can miss it.
@example(spec=TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, 2.0]), stream=0)
@example(spec=TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, 2.0]), stream=-1)
def test_stream_argument_on_cpu(device, spec, stream):
    """Kills: a CPU exporter that accepts a stream other than None/-1 (silently, as if
    synchronized), or that rejects the default -1 or None, or that takes a non-int."""
    evidence.features(
        stream_minus_one=type(stream) is int and stream == -1,
        stream_kind="none"
        if stream is None
        else "minus-one"
        if type(stream) is int and stream == -1
        else "other-int"
        if type(stream) is int
        else "not-int",
    )
    t = spec.build(device)
    _needs_dtype(t.dtype)
    if stream is None or (type(stream) is int and stream == -1):
        d = torch.from_dlpack(t.__dlpack__(stream=stream))
        assert d.shape == t.shape, "__dlpack__(stream=...) exported a different tensor"
    elif type(stream) is int:
        with raises_with(AssertionError, "stream should be None on cpu"):
            t.__dlpack__(stream=stream)
    else:
        with raises_with(TypeError, "stream must be ``int`` or ``none``"):
            t.__dlpack__(stream=stream)


# ================================================================ devices


@pytest.mark.claim("dlpack.dlpack-device-cpu")
@pytest.mark.observes("detach")
# zero-size (data = NULL) and 0-d tensors, bool: pinned so that no draw can miss them.
@example(spec=TensorSpec(dtype=torch.float32, base_shape=(2, 0), storage=[]), state="plain")
@example(spec=TensorSpec(dtype=torch.int64, base_shape=(), storage=[3]), state="plain")
@example(spec=TensorSpec(dtype=torch.bool, base_shape=(2,), storage=[True, False]), state="plain")
@example(spec=_F32_SPEC, state="requires-grad")
@example(spec=_F32_SPEC, state="parameter")
@example(spec=_C64_SPEC, state="conj")
@example(spec=_C64_SPEC, state="neg")
@grid_examples(state="plain")
@given(
    spec=tensor_specs(),
    state=st.sampled_from(["plain", "requires-grad", "parameter", "conj", "neg"]),
)
def test_dlpack_device_of_cpu_tensor(device, spec, state):
    """``t.__dlpack_device__()`` of a (not pinned) CPU tensor is ``(kDLCPU, 0)`` =
    ``(1, 0)``, an enum member and an int, whatever the dtype, layout, autograd state or
    lazy bit; for a tensor ``__dlpack__`` exports, the capsule's ``DLTensor.device``
    (read with ctypes) is that pair.

    Kills: a ``__dlpack_device__`` that reports another device type (pinned, CUDA host)
    or id, a list or a bare int, for one dtype or state; an exporter whose capsule names
    another device than ``__dlpack_device__``."""
    t = spec.build(device)
    if state in ("requires-grad", "parameter"):
        assume(spec.dtype in DIFFERENTIABLE)
        t = spec.build(device, requires_grad=True, leaf=True)
        if state == "parameter":
            t = torch.nn.Parameter(t.detach())
    elif state == "conj":
        assume(spec.dtype in COMPLEX)
        t = t.conj()
    elif state == "neg":
        assume(spec.dtype in ARITHMETIC)
        t = t.conj().imag if spec.dtype in COMPLEX else _neg_view(t)
    evidence.features(
        tensor_kind="parameter"
        if isinstance(t, torch.nn.Parameter)
        else "leaf"
        if t.requires_grad
        else "plain",
        math_bit="conj" if t.is_conj() else "neg" if t.is_neg() else "none",
    )
    assert not t.is_pinned(), "a tensor built on the CPU is pinned"
    d = t.__dlpack_device__()
    assert type(d) is tuple and len(d) == 2, f"__dlpack_device__() returned {d!r}"
    assert d == (1, 0), f"__dlpack_device__() of a CPU tensor is {d!r}, not (kDLCPU = 1, 0)"
    assert d[0] is torch.utils.dlpack.DLDeviceType.kDLCPU, f"device type {d[0]!r} is not kDLCPU"
    assert type(d[1]) is int, f"device id {d[1]!r} is not an int"
    if state in ("conj", "neg"):
        return  # __dlpack__ refuses a conjugate bit (dlpack.conj-bit-export-raises)
    x = t.detach()
    _needs_dtype(x.dtype)
    dl = _dl_tensor(x.__dlpack__())
    got = (dl.device.device_type, dl.device.device_id)
    assert got == d, f"the capsule's DLTensor.device is {got}, __dlpack_device__() {d}"


#: Ways to name the CPU device (``torch.device`` built in the test, not at import).
CPU_NAMES = ("cpu", "cpu:0", "torch.device('cpu')", "torch.device('cpu', 0)")


def _cpu_device(name: str):
    if name == "torch.device('cpu')":
        return torch.device("cpu")
    if name == "torch.device('cpu', 0)":
        return torch.device("cpu", 0)
    return name


@pytest.mark.claim("dlpack.from-dlpack-device-same-device")
@pytest.mark.observes("numpy", "tensor")
@grid_examples(where=lambda s: s.base_shape == (2, 3) and not s.views, producer="torch", name="cpu",
               copy=None)  # fmt: skip
# Issue 29: every non-empty layout and every dtype family, by construction.
@domain_examples(where=lambda s: math.prod(s.shape) > 0, grid_values="all", producer="torch",
                 name="cpu:0", copy=False)  # fmt: skip
@given(
    spec=tensor_specs(shape=shapes(min_side=1), values="all"),
    producer=st.sampled_from(["torch", "numpy"]),
    name=st.sampled_from(CPU_NAMES),
    copy=st.sampled_from([None, False, True]),
)
def test_from_dlpack_device_same_device(device, spec, producer, name, copy):
    """``torch.from_dlpack(x, device=d, copy=c)`` with ``d`` x's own device (the CPU,
    named four ways): a CPU tensor with x's shape, dtype and values, aliasing x unless
    ``c`` is True, then in new memory.

    Kills: a ``device=`` that copies although no copy is necessary (for one spelling of
    the device, a dtype or producer), a ``copy=True`` with ``device=`` that aliases, or an
    import that lands on another device or changes values."""
    _needs(HAS_VERSIONED, "torch < 2.9 has no device= in torch.from_dlpack")
    if producer == "numpy":
        assume(spec.dtype != torch.bfloat16)
    _needs_dtype(spec.dtype)
    t = spec.build(device)
    want = spec.build(device)
    x = t if producer == "torch" else t.numpy()
    d = torch.from_dlpack(x, device=_cpu_device(name), copy=copy)
    assert d.device.type == "cpu", f"from_dlpack(device={name}) is on {d.device}"
    assert d.shape == t.shape and d.dtype == t.dtype, "from_dlpack(device=) changed shape or dtype"
    assert_same_bits(d, want, f"from_dlpack(device={name}, copy={copy}) keeps the values")
    if copy:
        assert d.data_ptr() != t.data_ptr(), f"from_dlpack(device={name}, copy=True) aliases x"
        assert not _tensor_write_seen(d, t), "a write to a copy=True import reached the input"
    else:
        assert d.data_ptr() == t.data_ptr(), (
            f"from_dlpack(device={name}, copy={copy}) copied an input already on that device"
        )
        assert _tensor_write_seen(d, t), "a write through the import is not seen in the input"
