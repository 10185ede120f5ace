"""Observation helpers shared by the property tests.

Each helper observes one thing on real torch - storage identity, version
counter sharing, visibility of writes, warnings - and the ``expect_*``
helpers raise ``AssertionError`` with a stable, claim-specific message, which
is what expectation signatures (``exception = "AssertionError"``,
``match = "<message substring>"``) match on.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator

import torch

__all__ = [
    "storage_ptr",
    "shares_storage",
    "shares_version_counter",
    "writes_visible",
    "sentinel_for",
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
    identity (torch keeps one Python object per live storage).
    """
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.nbytes() == 0 or sb.nbytes() == 0:
        return sa is sb
    return sa.data_ptr() == sb.data_ptr()


def shares_version_counter(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when bumping ``a``'s version counter is seen by ``b``.

    Uses the public ``torch.autograd.graph.increment_version``, which changes
    no values. Only meaningful for non-inference tensors.
    """
    before_a, before_b = a._version, b._version
    torch.autograd.graph.increment_version(a)
    return a._version == before_a + 1 and b._version == before_b + 1


def sentinel_for(t: torch.Tensor) -> bool | int | float | complex:
    """A value different from ``t``'s first element, representable in its dtype."""
    first = t.reshape(-1)[0].item() if t.numel() else 0
    if t.dtype == torch.bool:
        return not first
    if t.dtype.is_complex:
        return complex(first) + (1 + 1j)
    if t.dtype.is_floating_point:
        return 7.0 if first != 7.0 else -3.0
    return 7 if first != 7 else 3


def writes_visible(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """Write a sentinel into the first element of ``src`` (under ``no_grad``)
    and report whether ``dst``'s first element became that sentinel.

    Both must be non-empty and index their first element at the same memory
    location (true for a tensor and its detach/.data alias). Mutates ``src``.
    """
    value = sentinel_for(dst)
    index = (0,) * src.dim()
    with torch.no_grad():
        src[index] = value
    # Compare with the sentinel as stored in dst's dtype (it may round).
    expected = torch.tensor(value, dtype=dst.dtype).item()
    return dst[(0,) * dst.dim()].item() == expected


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
