"""Combinators that build the patches of the mutant catalogue.

A mutant's :attr:`~conformance.mutants.Mutant.patch` is a function of no
arguments that patches torch. Most follow a handful of shapes - keep the
real function, install a wrapper that calls it and corrupts the call on one
part of the input space - and the combinators here build those, so a typical
mutant names what it replaces and how in a few lines::

    patch=wrap_result("torch.Tensor.detach", _clone, when=_is_0d, also=("torch.detach",))

Targets are dotted paths (``"torch.Tensor.detach"``, ``"torch.nn.Module._apply"``)
resolved when the patch is *applied*, never when the catalogue is imported:
importing a mutant module imports no torch and patches nothing. A patch
built here is a callable object with a :meth:`Patch.describe` (what it
replaces, for reports), and records the names it binds (:attr:`Patch.targets`).
"""

from __future__ import annotations

import importlib

__all__ = ["resolve", "owner_and_name"]


def resolve(path: str):
    """The object at dotted ``path`` (``"torch.Tensor.detach"``): the longest
    importable module prefix, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot resolve {path!r}")


def owner_and_name(path: str) -> tuple[object, str]:
    """``(owner, attribute)`` of dotted ``path``: ``(torch.Tensor, "detach")``."""
    head, _, name = path.rpartition(".")
    return resolve(head), name


def in_grad_mode(mode: str) -> bool:
    """Whether autograd is in grad mode ``mode`` now: ``enabled`` (grad
    enabled), ``no_grad`` (disabled, outside inference mode) or
    ``inference_mode`` (the ``grad_mode`` values of ``conformance/domains.toml``)."""
    import torch

    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
    return {"enabled": grad, "no_grad": not grad and not inference, "inference_mode": inference}[
        mode
    ]
