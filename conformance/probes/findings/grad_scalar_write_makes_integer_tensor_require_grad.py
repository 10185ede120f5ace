"""Eager CPU: writing a 0-d tensor that requires grad into an int64 tensor leaves
the int64 tensor requiring grad, and later ops on it raise.

t = torch.arange(6).reshape(2, 3)        # int64
v = torch.tensor(17.0, requires_grad=True)
t[0] = v                                 # also t.fill_(v), t.index_fill_(0, idx, v)

The value is written (t[0] == [17, 17, 17]), but on the CPU t comes back with
requires_grad=True and a grad_fn, although an integer tensor can never require
grad (requires_grad_() on it raises "only Tensors of floating point dtype can
require gradients"). Expected: t stays an ordinary int64 tensor that does not
require grad (what CUDA does, observed on 2.11.0+cu130), or the write is refused.
Because t now "requires grad", later differentiable ops on it raise a
RuntimeError instead of computing. torch.compile refuses the same write (every
backend raises while tracing); that is a consequence, not the bug.

Pinned by the registered claim compile.grad-scalar-into-integer-tensor-refused
(its eager half; autograd.requires-grad-integer-raises states the rule broken).
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")

FORMS = {
    "t[0] = v": lambda t, v: t.__setitem__(0, v),
    "t.fill_(v)": lambda t, v: t.fill_(v),
    "t.index_fill_(0, [0], v)": lambda t, v: t.index_fill_(0, torch.tensor([0]), v),
}


def main():
    bad = []
    for name, write in FORMS.items():
        t = torch.arange(6).reshape(2, 3)
        v = torch.tensor(17.0, requires_grad=True)
        try:
            write(t, v)
        except RuntimeError as e:
            print(f"{name}: write refused: {str(e).splitlines()[0][:100]}")
            continue
        grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        try:
            later = f"t * 2 = {(t * 2).detach()[0].tolist()}"
        except RuntimeError as e:
            later = f"t * 2 raised RuntimeError: {str(e).splitlines()[0][:80]}"
        print(
            f"{name}: dtype={t.dtype} row0={t.detach()[0].tolist()} "
            f"requires_grad={t.requires_grad} grad_fn={grad_fn}; {later}"
        )
        if t.requires_grad:
            bad.append(f"{name} -> requires_grad=True, grad_fn={grad_fn}; {later}")
    if bad:
        print(
            f"REPRODUCES: int64 tensor left requiring grad after a write of a 0-d tensor "
            f"that requires grad: {bad[0]} ({len(bad)} of {len(FORMS)} forms)"
        )
        return 1
    print(
        "FIXED: the int64 tensor does not require grad after any of the writes "
        "(or the write is refused)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
