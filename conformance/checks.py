"""Observation helpers shared by the property tests.

Each helper observes one thing on real torch - storage identity, version
counter sharing, visibility of writes, warnings - and the ``expect_*``
helpers raise ``AssertionError`` with a stable, claim-specific message, which
is what expectation signatures (``exception = "AssertionError"``,
``match = "<message substring>"``) match on.

"Same values" means *the same bits*: :func:`same_bits` and
:func:`assert_same_bits` compare the raw bytes of every element, so a
``-0.0`` that became ``+0.0``, a NaN whose sign or payload changed, or a
flushed subnormal counts as a changed value (``==`` and ``torch.equal`` see
none of these, and call every NaN different from itself).
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import sys
import warnings
from collections.abc import Iterator

import numpy as np
import torch

__all__ = [
    "same_bits",
    "assert_same_bits",
    "bits_difference",
    "element_bytes",
    "storage_ptr",
    "shares_storage",
    "helper_op",
    "same_storage",
    "shares_version_counter",
    "writes_visible",
    "sentinel_for",
    "first_index",
    "grad_mode_restored",
    "capture_warnings",
    "raises_with",
    "run_fresh_interpreter",
]


def storage_ptr(t: torch.Tensor) -> int:
    """Address of the first byte of ``t``'s untyped storage (0 for a zero-byte storage)."""
    return t.untyped_storage().data_ptr()


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when ``a`` and ``b`` are backed by the same storage.

    Compares ``untyped_storage().data_ptr()``. Zero-byte storages all report
    address 0, so for those the ``UntypedStorage`` objects are compared by
    identity (torch keeps one Python object per live storage). Where the
    installed torch makes a new storage object per call (torch 2.1), sharing
    of a 0-byte storage is not observable through public APIs: the current
    example is then *not applicable*
    (:func:`conformance.evidence.not_applicable`), never failed.
    """
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.nbytes() == 0 or sb.nbytes() == 0:
        from conformance.capabilities import storage_identity_observable
        from conformance.evidence import not_applicable

        if not storage_identity_observable():
            not_applicable(
                "sharing of a 0-byte storage is not observable through public APIs "
                "(untyped_storage() returns a new object on every call)"
            )
        return sa is sb
    return sa.data_ptr() == sb.data_ptr()


def same_storage(a: torch.UntypedStorage, b: torch.UntypedStorage) -> bool:
    """True when two ``UntypedStorage`` objects are the same storage: the same
    address and size, or for 0-byte storages (which all report address 0) the
    same object. Where the installed torch makes a new storage object per
    ``untyped_storage()`` call (torch 2.1) a 0-byte storage's identity is not
    observable through public APIs: the example is then *not applicable*."""
    if a.nbytes() and b.nbytes():
        return a.data_ptr() == b.data_ptr() and a.nbytes() == b.nbytes()
    if a.nbytes() != b.nbytes():
        return False
    from conformance.capabilities import storage_identity_observable
    from conformance.evidence import not_applicable

    if not storage_identity_observable():
        not_applicable(
            "sharing of a 0-byte storage is not observable through public APIs "
            "(untyped_storage() returns a new object on every call)"
        )
    return a is b


def shares_version_counter(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when bumping ``a``'s version counter is seen by ``b``.

    Uses the public ``torch.autograd.graph.increment_version``, which changes
    no values. Only meaningful for non-inference tensors.
    """
    before_a, before_b = a._version, b._version
    torch.autograd.graph.increment_version(a)
    return a._version == before_a + 1 and b._version == before_b + 1


#: NumPy dtypes with the same bytes per element as a torch dtype, for
#: showing element values in messages (bfloat16 is decoded by hand).
_NUMPY_VIEW = {
    torch.bool: np.bool_,
    torch.uint8: np.uint8,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.complex64: np.complex64,
    torch.complex128: np.complex128,
    **{
        getattr(torch, n): getattr(np, n)
        for n in ("uint16", "uint32", "uint64")
        if hasattr(torch, n)  # torch >= 2.3
    },
}


def element_bytes(t: torch.Tensor) -> np.ndarray:
    """The raw bytes of every element of ``t``, in logical row-major order.

    Returns a ``(t.numel(), t.element_size())`` ``uint8`` array: row ``i``
    holds the bytes (in machine byte order) of the ``i``-th element of
    ``t.reshape(-1)``, whatever ``t``'s strides (non-contiguous, permuted,
    expanded with stride 0, storage offset) and device.

    The bytes are read straight from ``t``'s storage at the element offsets
    its size/stride/offset metadata gives, so no tensor operation (copy,
    clone, ``contiguous``, ``to``, ``numpy``, indexing) is involved: the
    observation cannot share a bug with the operation under test. A
    storage on another device is first copied to host memory whole
    (``UntypedStorage.cpu()``, a byte copy).

    A conjugate or negative bit is resolved on the bytes, so the result is
    what the tensor *means*: a conjugate view flips the sign bit of each
    imaginary part, a negative view flips the sign bit of every floating
    component (IEEE negation, NaN and zero included); a negative view of an
    integral tensor is negated through ``resolve_neg()``.

    Raises ``TypeError`` for a non-strided tensor (sparse, ...) and
    ``ValueError`` for a tensor without data (the meta device).
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"element_bytes() needs a torch.Tensor, not {type(t).__name__}")
    if t.layout != torch.strided:
        raise TypeError(f"element_bytes() needs a strided tensor, not {t.layout}")
    if t.device.type == "meta":
        raise ValueError("a tensor on the meta device has no values to compare")
    floating = t.dtype.is_floating_point or t.dtype.is_complex
    if t.is_neg() and not floating:
        t = t.resolve_neg()
    itemsize = t.element_size()
    n = t.numel()
    if n == 0:
        return np.zeros((0, itemsize), dtype=np.uint8)
    shape, strides = tuple(t.shape), t.stride()
    if any(s < 0 for s in strides):  # torch has none; the arithmetic below assumes it
        raise ValueError(f"negative strides {strides} are not a torch layout")
    # Element offsets run from storage_offset (every index 0) to
    # storage_offset + sum((size - 1) * stride) (every index at its last).
    lo = t.storage_offset()
    hi = lo + sum((size - 1) * s for size, s in zip(shape, strides, strict=True))
    storage = t.untyped_storage()
    if storage.device.type != "cpu":
        storage = storage.cpu()
    raw = ctypes.string_at(storage.data_ptr() + lo * itemsize, (hi - lo + 1) * itemsize)
    # The same metadata read by NumPy: one row of ``itemsize`` bytes per
    # element, at byte strides ``stride * itemsize``; ``copy`` gathers them in
    # logical row-major order into a fresh, writable array.
    rows = np.ndarray((*shape, itemsize), np.uint8, raw, 0, (*(s * itemsize for s in strides), 1))
    out = rows.copy().reshape(n, itemsize)
    # The byte holding the sign bit of each floating component.
    parts = 2 if t.dtype.is_complex else 1
    width = itemsize // parts
    sign = [width - 1 if sys.byteorder == "little" else 0]
    if parts == 2:
        sign.append(width + sign[0])
    if t.is_conj():
        out[:, sign[-1]] ^= 0x80
    if t.is_neg() and floating:
        for b in sign:
            out[:, b] ^= 0x80
    return out


def _mismatch(a: torch.Tensor, b: torch.Tensor) -> str | None:
    """Why ``a`` and ``b`` differ in shape or dtype, or ``None``."""
    if tuple(a.shape) != tuple(b.shape):
        return f"shape {tuple(a.shape)} != {tuple(b.shape)}"
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} != {b.dtype}"
    return None


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when ``a`` and ``b`` hold the same values *bit for bit*.

    Same shape, same dtype, and the same raw bytes for every element in
    logical row-major order (see :func:`element_bytes`): ``-0.0`` differs
    from ``0.0``, a NaN equals a NaN with the same sign and payload and
    differs from any other, subnormals are compared as they are stored.
    Strides, storage offset, device, ``requires_grad`` and autograd history
    are not compared; conjugate and negative bits are resolved (a conjugate
    view equals the resolved conjugate). Works for any strided layout
    (non-contiguous, expanded, 0-d, zero-size) on any device, and never
    changes either tensor (no version-counter bump, no autograd record).

    Raises ``TypeError``/``ValueError`` as :func:`element_bytes` does.
    """
    if _mismatch(a, b) is not None:
        return False
    return bool(np.array_equal(element_bytes(a), element_bytes(b)))


def _show_element(row: np.ndarray, dtype: torch.dtype) -> tuple[str, str]:
    """(value, bit pattern in hex) of one element's bytes."""
    parts = 2 if dtype.is_complex else 1
    width = row.size // parts
    chunks = [bytes(row[i * width : (i + 1) * width]) for i in range(parts)]
    bits = [int.from_bytes(c, sys.byteorder) for c in chunks]
    hexes = [f"0x{v:0{2 * width}x}" for v in bits]
    shown_bits = hexes[0] if parts == 1 else f"re {hexes[0]}, im {hexes[1]}"
    if dtype == torch.bfloat16:
        value = repr(float(np.array([bits[0] << 16], dtype=np.uint32).view(np.float32)[0]))
    elif dtype in _NUMPY_VIEW:
        value = repr(np.frombuffer(bytes(row), dtype=_NUMPY_VIEW[dtype])[0].item())
    else:
        value = "?"
    return value, shown_bits


def bits_difference(got: torch.Tensor, want: torch.Tensor) -> str | None:
    """``None`` when :func:`same_bits` holds, else a sentence describing the
    difference: the shape or dtype mismatch, or how many elements differ and
    the first one (its index, both values and both bit patterns in hex)."""
    why = _mismatch(got, want)
    if why is not None:
        return f"got {why.replace(' != ', ', want ', 1)}"
    g, w = element_bytes(got), element_bytes(want)
    differs = np.flatnonzero((g != w).any(axis=1))
    if differs.size == 0:
        return None
    first = int(differs[0])
    index = tuple(int(i) for i in np.unravel_index(first, tuple(got.shape)))
    gv, gb = _show_element(g[first], got.dtype)
    wv, wb = _show_element(w[first], want.dtype)
    return (
        f"{differs.size} of {g.shape[0]} elements differ bit for bit; first at index "
        f"{index}: got {gv} ({gb}), want {wv} ({wb})"
    )


def assert_same_bits(got: torch.Tensor, want: torch.Tensor, claim: str) -> None:
    """Assert :func:`same_bits`; ``claim`` says what should have held.

    Raises ``AssertionError`` whose message starts with ``claim`` (so an
    expectation's ``match`` can select it) and then shows the difference
    (see :func:`bits_difference`), e.g.::

        clone() keeps the values: 1 of 6 elements differ bit for bit; first
        at index (0, 1): got 0.0 (0x00000000), want -0.0 (0x80000000)
    """
    why = bits_difference(got, want)
    if why is not None:
        raise AssertionError(f"{claim}: {why}")


def _nan_components(t: torch.Tensor) -> np.ndarray | None:
    """(numel, parts) bool: which real components of ``t`` are NaN, in the
    order of :func:`element_bytes` (``torch.isnan`` under ``no_grad``, no
    ``detach``); ``None`` when ``t`` has no NaN (or its dtype no ``isnan``
    kernel: then nothing is tolerated)."""
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        return None
    try:
        with torch.no_grad():
            r = t.resolve_conj().resolve_neg()
            parts = torch.view_as_real(r.contiguous()) if r.dtype.is_complex else r.unsqueeze(-1)
            mask = torch.isnan(parts).reshape(-1, parts.shape[-1]).cpu().numpy()
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    return mask if mask.any() else None


def assert_same_computed_values(got: torch.Tensor, want: torch.Tensor, claim: str) -> None:
    """:func:`assert_same_bits` for results of *arithmetic* (not copies):
    bit for bit (``-0.0``, subnormals, infinities), except that a NaN
    component matches any NaN - IEEE 754 leaves the sign and payload of a
    NaN produced by arithmetic unspecified, and vectorised and scalar kernels
    differ there. Each tolerated difference is counted in the report
    ("NaN sign/payload differences tolerated"). Raises ``AssertionError`` as
    :func:`assert_same_bits` does."""
    why = bits_difference(got, want)
    if why is None:
        return
    if _mismatch(got, want) is not None:
        raise AssertionError(f"{claim}: {why}")
    gn, wn = _nan_components(got), _nan_components(want)
    if gn is None or wn is None:
        raise AssertionError(f"{claim}: {why}")
    parts = gn.shape[1]
    g = element_bytes(got).reshape(gn.shape[0], parts, -1)
    w = element_bytes(want).reshape(wn.shape[0], parts, -1)
    differs = (g != w).any(axis=2)
    if (differs & ~(gn & wn)).any():
        raise AssertionError(f"{claim}: {why}")
    from conformance import evidence

    evidence.tally("NaN sign/payload differences tolerated", int(differs.any(axis=1).sum()))


@contextlib.contextmanager
def helper_op(name: str, dtype: torch.dtype) -> Iterator[None]:
    """Run a *helper* op (one that prepares inputs, not the operation under
    test): if the installed torch has no kernel for ``dtype`` ("... not
    implemented for 'UInt16'"), the example is not applicable on this torch
    (:func:`conformance.evidence.not_applicable`) instead of failed. Any other
    error propagates."""
    try:
        yield
    except (RuntimeError, NotImplementedError) as e:
        if "not implemented for" not in str(e):
            raise
        from conformance.evidence import not_applicable
        from strategies.dtypes import dtype_name

        not_applicable(f"helper op {name} has no {dtype_name(dtype)} kernel")


def sentinel_for(t: torch.Tensor) -> bool | int | float | complex:
    """A finite value different from ``t``'s first element, exact in its dtype;
    for complex dtypes different in *both* parts (so a write is seen through
    a ``.real`` or ``.imag`` view too).

    Never derived arithmetically from the element, so a NaN or infinite
    element still gets a sentinel that ``==`` can recognise once written.
    """
    first = t.reshape(-1)[0].item() if t.numel() else 0
    if t.dtype == torch.bool:
        return not first
    if t.dtype.is_complex:
        first = complex(first)
        # Each part of ``first`` equals at most one candidate's: one of three fits.
        return next(
            c for c in (7 + 7j, -3 - 3j, 5 + 5j) if c.real != first.real and c.imag != first.imag
        )
    if t.dtype.is_floating_point:
        return 7.0 if first != 7.0 else -3.0
    return 7 if first != 7 else 3


def first_index(x: torch.Tensor | np.ndarray) -> tuple[int, ...]:
    """The index of the first element of ``x`` (a tensor or a NumPy array):
    ``(0,) * x.ndim``, so ``x[first_index(x)]`` is that element as a 0-d
    view, which ``x[first_index(x)] = v`` writes (``x`` must be non-empty)."""
    return (0,) * x.ndim


def writes_visible(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """Write a sentinel into the first element of ``src`` (under ``no_grad``)
    and report whether ``dst``'s first element became that sentinel.

    Both must be non-empty and index their first element at the same memory
    location (true for a tensor and its detach/.data alias). Mutates ``src``.
    """
    value = sentinel_for(dst)
    with torch.no_grad():
        src[first_index(src)] = value
    # Compare with the sentinel as stored in dst's dtype (it may round).
    expected = torch.tensor(value, dtype=dst.dtype).item()
    return dst[first_index(dst)].item() == expected


@contextlib.contextmanager
def grad_mode_restored() -> Iterator[None]:
    """Restore grad mode, inference mode-independent state and the default
    dtype on exit, whatever the body changed."""
    grad = torch.is_grad_enabled()
    dtype = torch.get_default_dtype()
    anomaly = torch.is_anomaly_enabled()
    try:
        yield
    finally:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        torch.autograd.set_detect_anomaly(anomaly)


@contextlib.contextmanager
def capture_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning raised in the body (filters restored on exit)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def raises_with(exc_type: type[BaseException], substring: str):
    """``pytest.raises`` matching a *stable substring* (escaped, not a regex).

    Torch error texts change between versions; match the part that does not.
    """
    import pytest

    return pytest.raises(exc_type, match=re.escape(substring))


def run_fresh_interpreter(code: str, timeout: float = 120) -> dict:
    """Run ``code`` in a new Python process and return the JSON object it
    prints on its last stdout line.

    For behaviour that happens once per process (warnings torch emits only
    the first time), which an already-warm test process cannot observe.
    Raises ``AssertionError`` (with the tail of stderr) if the process fails.
    """
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, f"subprocess failed: {proc.stderr[-500:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])
