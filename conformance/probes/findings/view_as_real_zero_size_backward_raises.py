"""Eager: backward through torch.view_as_real of a zero-size complex tensor raises.

x = torch.zeros(0, dtype=torch.complex64, requires_grad=True)
torch.view_as_real(x * 1).sum().backward()
# RuntimeError: Tensor must have a last dimension with stride 1

The backward formula of view_as_real calls view_as_complex on the incoming
gradient; for sum() of a zero-size tensor that gradient is an expanded tensor
whose strides are all 0, and view_as_complex refuses a last dimension with
stride 0. The same code on a non-empty tensor works and gives x.grad of x's
shape; expected here: x.grad == torch.zeros(0, dtype=torch.complex64).

Pinned by the registered claim views.view-as-real-zero-size-backward-raises.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def backward_through_view_as_real(n):
    x = torch.zeros(n, dtype=torch.complex64, requires_grad=True)
    torch.view_as_real(x * 1).sum().backward()
    return x.grad


def main():
    g = backward_through_view_as_real(2)  # control: non-empty works
    assert g is not None and g.shape == (2,), "backward of a non-empty tensor failed"
    try:
        g = backward_through_view_as_real(0)
    except RuntimeError as e:
        msg = str(e).splitlines()[0]
        if "stride" not in msg:
            raise
        print(
            "REPRODUCES: torch.view_as_real(x * 1).sum().backward() for x of shape (0,) "
            f"complex64 raises RuntimeError: {msg} (shape (2,) works)"
        )
        return 1
    if g is None or g.shape != (0,) or g.dtype != torch.complex64:
        raise AssertionError(f"unexpected gradient after backward: {g!r}")
    print(f"FIXED: backward through view_as_real of a zero-size tensor gives x.grad = {g!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
