"""Eager: the legacy torch.utils.dlpack.to_dlpack runs none of Tensor.__dlpack__'s
checks: it exports a tensor that requires grad, and a conjugate view as its
unconjugated storage.

x = torch.ones(2, requires_grad=True)
x.__dlpack__()                                   # BufferError: Can't export tensors that require gradient
torch.from_dlpack(torch.utils.dlpack.to_dlpack(x))   # exports; a leaf sharing x's memory

c = torch.tensor([1 + 2j]).conj()                # value 1-2j, is_conj() True
c.__dlpack__()                                   # BufferError: ... conjugate bit set
torch.from_dlpack(torch.utils.dlpack.to_dlpack(c))   # tensor([1.+2.j]) - the wrong value

to_dlpack is the C++ torch._C._to_dlpack and skips the Python checks of
Tensor.__dlpack__ (PR #57110 added them because "DLPack capsules can't capture
all of PyTorch's semantics"). Expected: the legacy path refuses the same tensors
(or at least resolves the conjugate bit, so the import holds 1-2j).

Pinned by the registered claim dlpack.to-dlpack-skips-checks.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    to_dlpack = getattr(getattr(torch.utils, "dlpack", None), "to_dlpack", None)
    if to_dlpack is None or not hasattr(torch, "from_dlpack"):
        print(f"NOT APPLICABLE: torch {torch.__version__} has no torch.utils.dlpack.to_dlpack")
        return 3
    escapes = []
    # 1. a tensor that requires grad
    x = torch.ones(2, requires_grad=True)
    try:
        x.__dlpack__()
        print("x.__dlpack__() of a tensor requiring grad: exported")
    except (RuntimeError, BufferError) as e:
        print(f"x.__dlpack__(): {type(e).__name__}: {str(e).splitlines()[0][:70]}")
    try:
        d = torch.from_dlpack(to_dlpack(x))
        escapes.append(
            f"to_dlpack(x requiring grad) exported (import requires_grad={d.requires_grad}, "
            f"shares x's memory={d.data_ptr() == x.data_ptr()})"
        )
    except (RuntimeError, BufferError) as e:
        print(f"to_dlpack(x): refused: {str(e).splitlines()[0][:70]}")
    # 2. a conjugate view
    c = torch.tensor([1 + 2j]).conj()
    try:
        c.__dlpack__()
        print("c.__dlpack__() of a conjugate view: exported")
    except (RuntimeError, BufferError) as e:
        print(f"c.__dlpack__(): {type(e).__name__}: {str(e).splitlines()[0][:70]}")
    try:
        d = torch.from_dlpack(to_dlpack(c))
        if d.resolve_conj().tolist() != c.resolve_conj().tolist():
            escapes.append(
                f"to_dlpack(torch.tensor([1+2j]).conj()) imports as {d.resolve_conj().tolist()} "
                f"(value {c.resolve_conj().tolist()})"
            )
    except (RuntimeError, BufferError) as e:
        print(f"to_dlpack(c): refused: {str(e).splitlines()[0][:70]}")
    print(torch.__version__, escapes)
    if escapes:
        print("REPRODUCES: legacy to_dlpack skips __dlpack__'s checks: " + "; ".join(escapes))
        return 1
    print(
        "FIXED: legacy to_dlpack refuses a tensor requiring grad and keeps a conjugate "
        "view's values"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
