"""Patches of torch for the gate's self-tests (``tests/test_gate.py``): not
mutants of the catalogue, but applied the same way (a ``sitecustomize``
imports them by module and name; see :func:`conformance.mutants.write_sitecustomize`)."""

from __future__ import annotations


def detach_copies_float64(refuse_int64: bool) -> None:
    """detach() copies float64 tensors (the recorded whole-test deviation of
    the gate test) and, with ``refuse_int64``, refuses int64 ones with an
    error of its own."""
    import torch

    _detach = torch.Tensor.detach

    def detach(self):
        if self.dtype == torch.int64 and refuse_int64:
            raise RuntimeError("detach() refused for int64 (a different regression)")
        out = _detach(self)
        return out.clone() if self.dtype == torch.float64 else out

    torch.Tensor.detach = detach


def copy_returns_clone_float64(rebind_int64: bool) -> None:
    """copy_() returns a clone for a float64 dst (the recorded whole-test
    deviation) and, with ``rebind_int64``, moves an int64 dst to new storage
    (a different violation of the same claim)."""
    import torch

    _copy = torch.Tensor.copy_

    def copy_(self, src, non_blocking=False):
        out = _copy(self, src, non_blocking)
        if self.dtype == torch.int64 and rebind_int64 and self.numel():
            with torch.no_grad():
                self.set_(self.clone())
        return out.clone() if self.dtype == torch.float64 else out

    torch.Tensor.copy_ = copy_
