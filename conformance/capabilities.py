"""What the installed torch can do, probed once per process.

A test must never fail because a helper it uses to *observe* a claim is
missing from the installed torch: an op without a kernel for a dtype on
some release, an API or argument form that came later, an observation
that is impossible through public APIs. These probes detect that by
trying (kernels, helper ops), or - where the capability is the behaviour
a claim's own test checks - from the installed release
(:data:`RELEASE_FEATURES`), never by calling the operation under test; and
:func:`require` turns a missing capability into the verdict "not
applicable on torch X: reason" (:func:`conformance.evidence.not_applicable`)
for the examples that need it.

Example::

    from conformance import capabilities as cap

    cap.require_kernel("torch.where", dtype, device)   # N/A where no kernel
    if cap.has_api(torch.autograd.graph, "increment_version"): ...
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import torch

from conformance.evidence import not_applicable
from strategies.dtypes import dtype_name

__all__ = [
    "RELEASE_FEATURES",
    "release_has",
    "storage_identity_observable",
    "save_supports",
    "has_api",
    "has_kwarg",
    "kernel_available",
    "require",
    "require_kernel",
    "KERNEL_PROBES",
    "ANY_ACCELERATOR",
    "current_accelerator",
    "default_devices",
    "device_allowed",
    "device_module",
    "device_unavailable",
    "unknown_device_type",
    "parse_devices",
    "synchronize",
]


#: Features a claim's test needs that came with a torch release, decided from
#: the installed release (never by calling the operation under test, whose
#: failure must be a verdict): ``name -> (first minor release, what, source)``.
RELEASE_FEATURES: dict[str, tuple[tuple[int, int], str, str]] = {
    "numpy2-abi": (
        (2, 3),
        "wheels built against NumPy 2 (older ones need numpy<2)",
        "release runs: 2.1.2 needs numpy<2, 2.5.1 runs with NumPy 2 (README, release table)",
    ),
    "dlpack-bool-export": (
        (2, 2),
        "bool tensors export over DLPack as kDLBool",
        "https://github.com/pytorch/pytorch/pull/108486 (absent on 2.1.2, present on 2.5.1)",
    ),
    "dlpack-versioned": (
        (2, 9),
        "versioned DLPack capsules, max_version=, copy= and dl_device=",
        "https://github.com/pytorch/pytorch/pull/145000 (absent on 2.8.0, present on 2.9.1)",
    ),
    "increment-version-list": (
        (2, 5),
        "torch.autograd.graph.increment_version accepts a list of tensors",
        "release runs: absent on 2.1.2, present from 2.5.1 (baselines); 2.5 per the suite's "
        "earlier probe",
    ),
    "load-assign-keeps-requires-grad": (
        (2, 4),
        "Module.load_state_dict(assign=True) keeps each parameter's requires_grad (the "
        "docstring's 'properties of the tensors in the current module are preserved')",
        "absent from the 2.1.2 docstring and behaviour (the donor's requires_grad is taken), "
        "present on the 2.4.1 gate run; 2.2 and 2.3 not measured",
    ),
    "device-backend-autoload": (
        (2, 5),
        "import torch loads out-of-tree device extensions from the torch.backends entry point "
        "(TORCH_DEVICE_BACKEND_AUTOLOAD)",
        "https://github.com/pytorch/pytorch/issues/122468 (prototype in the 2.5 release notes)",
    ),
    "save-wide-unsigned": (
        (2, 6),
        "torch.save/torch.load of uint16, uint32 and uint64 tensors "
        "(2.3-2.5 raise KeyError: 'dtype torch.uint16 is not recognized')",
        "measured on the 2.5.1 and 2.6.0 release runs (baselines in reports/baseline_data/)",
    ),
}


def _release() -> tuple[int, int]:
    """The installed torch's (major, minor), from its version string."""
    from packaging.version import Version

    return Version(torch.__version__).release[:2]


def release_has(feature: str) -> bool:
    """Whether the installed torch release has ``feature`` (a key of
    :data:`RELEASE_FEATURES`). Raises ``KeyError`` for an unknown name."""
    first, _what, _source = RELEASE_FEATURES[feature]
    return _release() >= first


def numpy_problem() -> str | None:
    """Why the installed torch cannot exchange arrays with the installed
    NumPy, as one line naming the fix, or ``None`` when it can.

    torch < 2.3 wheels are built against NumPy 1.x: with NumPy 2 installed
    every ``from_numpy``/``.numpy()`` raises "Numpy is not available" - the
    suite would report that as hundreds of failures. Decided from the two
    versions, never by calling the bridge the NumPy claims test: on a torch
    built for NumPy 2 a broken bridge is a verdict on those claims.
    """
    import numpy as np
    from packaging.version import Version

    if not release_has("numpy2-abi") and Version(np.__version__).major >= 2:
        return (
            f"torch {torch.__version__} is built for NumPy 1 and cannot use NumPy "
            f"{np.__version__}; install a NumPy it was built for: pip install 'numpy<2'"
        )
    return None


@functools.cache
def storage_identity_observable() -> bool:
    """Does ``t.untyped_storage()`` return the same Python object on every
    call while the storage lives? Needed to tell whether two tensors with a
    0-byte storage (which all report ``data_ptr() == 0``) share it. False on
    torch 2.1, where each call wraps the StorageImpl in a new object."""
    t = torch.empty(0)
    return t.untyped_storage() is t.untyped_storage()


def subnormals_survive() -> bool:
    """Whether this process's floating-point environment keeps subnormal
    results: eager float32 arithmetic in torch and float64 arithmetic in
    NumPy (x86 flush-to-zero / denormals-are-zero both off, the default).

    Not cached: some torch releases flip it behind the user's back when a
    ``torch.compile`` (inductor) kernel built with ``-ffast-math`` is loaded
    (pytorch/pytorch#126848, #135758)."""
    import numpy as np

    t = torch.tensor([2.0**-140], dtype=torch.float32) * 1.0  # float32 subnormal
    return t.item() != 0.0 and float(np.float64(5e-324) * np.float64(1.0)) != 0.0


def restore_subnormals() -> bool:
    """Turn flush-denormal mode off again if something turned it on
    (``torch.set_flush_denormal(False)``). Returns whether it had been on."""
    if subnormals_survive():
        return False
    torch.set_flush_denormal(False)
    return True


def has_api(owner: object, name: str) -> bool:
    """``owner.name`` exists (an API that came in a later release)."""
    return getattr(owner, name, None) is not None


@functools.cache
def has_kwarg(fn: Callable, name: str) -> bool:
    """``fn`` accepts keyword argument ``name`` (per its signature, or by
    trying where it has none: C functions of older releases)."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


#: name -> a thunk ``(dtype, device) -> None`` that runs the helper op once.
KERNEL_PROBES: dict[str, Callable[[torch.dtype, str], object]] = {
    "torch.where": lambda d, dev: torch.where(
        torch.tensor([True, False], device=dev),
        torch.zeros(2, dtype=d, device=dev),
        torch.ones(2, dtype=d, device=dev),
    ),
    "advanced indexing": lambda d, dev: torch.zeros(3, dtype=d, device=dev)[
        torch.tensor([0, 2], device=dev)
    ],
    "index_put_": lambda d, dev: torch.zeros(3, dtype=d, device=dev).index_put_(
        (torch.tensor([0, 2], device=dev),), torch.zeros(2, dtype=d, device=dev)
    ),
    "addmm": lambda d, dev: torch.addmm(
        torch.zeros(2, 2, dtype=d, device=dev),
        torch.zeros(2, 2, dtype=d, device=dev),
        torch.zeros(2, 2, dtype=d, device=dev),
    ),
    "matmul": lambda d, dev: (
        torch.zeros(2, 2, dtype=d, device=dev) @ torch.zeros(2, 2, dtype=d, device=dev)
    ),
    "add_": lambda d, dev: torch.zeros(2, dtype=d, device=dev).add_(
        torch.zeros(2, dtype=d, device=dev)
    ),
    "mul_": lambda d, dev: torch.zeros(2, dtype=d, device=dev).mul_(
        torch.zeros(2, dtype=d, device=dev)
    ),
    "eq": lambda d, dev: torch.zeros(2, dtype=d, device=dev) == torch.zeros(2, dtype=d, device=dev),
    "sum": lambda d, dev: torch.zeros(2, dtype=d, device=dev).sum(),
    "masked_fill_": lambda d, dev: torch.zeros(2, dtype=d, device=dev).masked_fill_(
        torch.tensor([True, False], device=dev), 0
    ),
    "stack": lambda d, dev: torch.stack([torch.zeros(2, dtype=d, device=dev)] * 2),
    "cat": lambda d, dev: torch.cat([torch.zeros(2, dtype=d, device=dev)] * 2),
    "batch_norm": lambda d, dev: torch.nn.functional.batch_norm(
        torch.zeros(2, 2, dtype=d, device=dev),
        torch.zeros(2, dtype=d, device=dev),
        torch.ones(2, dtype=d, device=dev),
        training=True,
    ),
}


def save_supports(dtype: torch.dtype) -> bool:
    """Whether the installed release can ``torch.save`` (and ``torch.load``)
    a tensor of ``dtype``: torch 2.3 to 2.5 have uint16/uint32/uint64 tensors
    but raise ``KeyError: 'dtype torch.uint16 is not recognized'`` when
    saving them (:data:`RELEASE_FEATURES` ``save-wide-unsigned``). Decided
    from the release, never by saving: a ``torch.save`` that refuses a dtype
    on a release that supports it is a verdict on the serialization claims."""
    wide = {getattr(torch, n, None) for n in ("uint16", "uint32", "uint64")} - {None}
    if dtype in wide:  # (torch < 2.3 has none of them)
        return release_has("save-wide-unsigned")
    return True


@functools.cache
def kernel_available(name: str, dtype: torch.dtype, device: str) -> bool:
    """Does helper op ``name`` (a key of :data:`KERNEL_PROBES`) run for
    ``dtype`` on ``device``? A ``RuntimeError``/``NotImplementedError``/
    ``TypeError`` from the probe means no kernel. Raises ``KeyError`` for an
    unknown name."""
    probe = KERNEL_PROBES[name]
    try:
        probe(dtype, device)
    except (RuntimeError, NotImplementedError, TypeError):
        return False
    return True


def require(ok: bool, reason: str) -> None:
    """Declare the current example not applicable unless ``ok``: ``reason``
    names the missing capability (the torch version is added by the gate)."""
    if not ok:
        not_applicable(reason)


def require_kernel(name: str, dtype: torch.dtype, device: str) -> None:
    """Not applicable when helper op ``name`` has no kernel for ``dtype`` on
    ``device`` in the installed torch."""
    require(
        kernel_available(name, dtype, str(device).split(":")[0]),
        f"{name} has no {dtype_name(dtype)} kernel on {device}",
    )


# -- devices -----------------------------------------------------------------
#
# ``--devices`` takes device *types* (``cpu``, ``cuda``, ``xpu``, ``mps``, the
# renamed PrivateUse1 backend of an out-of-tree extension such as OpenReg's
# ``openreg``...). Whether one can run here is decided from torch's public
# device APIs - ``torch.device`` to know the type, ``torch.get_device_module``
# (torch 2.3+; ``torch.<type>`` before) and its ``is_available()`` - never by
# running an operation a claim is about. The CPU is always there and is the
# reference where a claim compares a device with host memory.

#: What the registry's ``devices`` may name besides concrete device types:
#: ``"accelerator"`` is every device under test other than the CPU.
ANY_ACCELERATOR = "accelerator"


def device_module(device_type: str):
    """The Python module of ``device_type`` (``torch.cuda``, ``torch.xpu``,
    ``torch.mps``, the module a PrivateUse1 extension registered under its
    renamed type), or ``None`` for a type without one (``meta``, an
    unregistered ``privateuseone``) and for ``cpu``.

    Uses ``torch.get_device_module`` where the release has it (2.3+), else
    ``getattr(torch, device_type)``. Raises nothing."""
    if device_type == "cpu":
        return None
    if has_api(torch, "get_device_module"):
        try:
            return torch.get_device_module(device_type)
        except (RuntimeError, ValueError, TypeError):
            return None
    return getattr(torch, device_type, None)


def current_accelerator() -> str | None:
    """The device type of the available accelerator per ``torch.accelerator``
    (torch 2.6+; ``cuda``, ``xpu``, ``mps``, a renamed PrivateUse1 type...),
    or ``None`` when there is none or the release has no ``torch.accelerator``."""
    acc = getattr(torch, "accelerator", None)
    if acc is None or not has_api(acc, "current_accelerator"):
        return None
    try:
        if not acc.is_available():
            return None
        dev = acc.current_accelerator()
    except RuntimeError:
        return None
    return None if dev is None else torch.device(dev).type


def unknown_device_type(device_type: str) -> str | None:
    """Why ``device_type`` is not a device type of this torch, as one line,
    or ``None`` when it is one: a name with an index (``cuda:1``), a name
    ``torch.device`` does not know (``tpu``; a PrivateUse1 extension that was
    not imported, so its type is not renamed yet), or an alias of another
    type (``privateuseone`` once renamed). Raises nothing."""
    if device_type == "cpu":
        return None
    if ":" in device_type:
        return (
            f"{device_type!r} names a device index; give the device type "
            f"({device_type.split(':')[0]}): the suite runs on its current device"
        )
    try:
        dev = torch.device(device_type)
    except (RuntimeError, ValueError, TypeError):
        return (
            f"{device_type!r} is not a device type of this torch (a built-in type, or the "
            "renamed PrivateUse1 type of an installed extension)"
        )
    if dev.type != device_type:
        return f"{device_type!r} is named {dev.type!r} in this torch: use {dev.type}"
    return None


def device_unavailable(device_type: str) -> str | None:
    """Why the suite cannot run on ``device_type`` here, as one line, or
    ``None`` when it can. ``cpu`` always can.

    Refused: what :func:`unknown_device_type` refuses, a type without a
    device module (``meta``), and a type whose ``is_available()`` is False.
    ``cuda`` is asked through ``torch.cuda.is_available()`` and ``mps``
    through ``torch.backends.mps.is_available()`` (their documented checks),
    the current ``torch.accelerator`` counts as available. Raises nothing."""
    unknown = unknown_device_type(device_type)
    if unknown or device_type == "cpu":
        return unknown
    if device_type == "cuda":
        ok = torch.cuda.is_available()
        return None if ok else "CUDA is not available (torch.cuda.is_available() is False)"
    if device_type == "mps":
        ok = torch.backends.mps.is_available()
        return None if ok else "mps is not available (torch.backends.mps.is_available() is False)"
    if current_accelerator() == device_type:
        return None
    mod = device_module(device_type)
    if mod is None:
        return (
            f"{device_type!r} has no device module in this torch (torch.get_device_module), "
            "so it is no accelerator the suite can run on"
        )
    available = getattr(mod, "is_available", None)
    if available is None:
        return f"torch.{device_type} has no is_available()"
    try:
        ok = bool(available())
    except RuntimeError as e:
        return f"torch.{device_type}.is_available() raised {type(e).__name__}: {e}".splitlines()[0]
    if ok:
        return None
    return f"{device_type} is not available (torch.{device_type}.is_available() is False)"


def parse_devices(raw: str | None) -> list[str]:
    """The device types of a ``--devices`` value (comma-separated, blanks
    and repeats dropped, order kept); ``None`` gives :func:`default_devices`.
    Raises ``ValueError`` with a one-line message for an empty list or an
    unknown device type; availability is :func:`device_unavailable`'s."""
    if raw is None:
        return default_devices()
    devices = list(dict.fromkeys(d.strip() for d in raw.split(",") if d.strip()))
    if not devices:
        raise ValueError(f"--devices: no device in {raw!r}")
    unknown = [(d, why) for d in devices if (why := unknown_device_type(d))]
    if unknown:
        names = ", ".join(d for d, _ in unknown)
        raise ValueError(f"--devices: unknown device(s) {names}: {unknown[0][1]}")
    return devices


def default_devices() -> list[str]:
    """The devices of a run without ``--devices``: ``cpu`` and ``cuda`` (CUDA
    cases are skipped with a reason where it is missing, as before), plus the
    available accelerator of another type per ``torch.accelerator`` (an XPU,
    an MPS, a PrivateUse1 device)."""
    devices = ["cpu", "cuda"]
    acc = current_accelerator()
    if acc and acc not in devices:
        devices.append(acc)
    return devices


def device_allowed(device_type: str, allowed) -> bool:
    """Whether a claim registered ``devices = allowed`` applies on
    ``device_type``: an empty list is every device, ``"accelerator"``
    (:data:`ANY_ACCELERATOR`) any device but the CPU."""
    allowed = set(allowed)
    if not allowed or device_type in allowed:
        return True
    return ANY_ACCELERATOR in allowed and device_type != "cpu"


def synchronize(device) -> None:
    """Wait for the work queued on ``device`` (a type or ``torch.device``) to
    finish: ``torch.<type>.synchronize()`` through :func:`device_module`; a
    no-op on the CPU and on a device module without ``synchronize``."""
    mod = device_module(torch.device(device).type)
    sync = getattr(mod, "synchronize", None) if mod is not None else None
    if sync is not None:
        sync()
