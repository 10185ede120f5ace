"""Eager: whether an in-place op on a view raises depends on whether its
.grad_fn was read before.

def make():
    b = torch.zeros(3)                          # does not require grad
    v = b.select(0, 0)                          # view taken in grad mode: no grad_fn
    b[::2].copy_(torch.tensor(0.5, requires_grad=True))   # b now requires grad
    return v                                    # v.requires_grad is True

v = make(); v.mul_(2)               # RuntimeError: a leaf Variable that requires
                                    # grad is being used in an in-place operation.
v = make(); v.grad_fn; v.mul_(2)    # works (grad_fn regenerated: AsStridedBackward0)

The view's grad_fn is created lazily when Python asks for .grad_fn (or .is_leaf,
or print), while the in-place check tests the stored grad_fn through the C++
is_leaf(); so reading an attribute decides whether the next in-place op raises.
v is not a leaf (it is a view of a tensor with history). Expected: the in-place
op succeeds whether or not grad_fn was read (at least: the same outcome both
ways). Related upstream: #8874 (open; lazily created grad_fn of views) and #99968
(closed; print() changing a no_grad-view error).

Pinned by the registered claim graphs.lazy-view-grad-fn.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def make():
    b = torch.zeros(3)
    v = b.select(0, 0)
    b[::2].copy_(torch.tensor(0.5, requires_grad=True))
    return v


def mul_(v):
    try:
        v.mul_(2)
    except RuntimeError as e:
        msg = str(e).splitlines()[0]
        if "leaf Variable" not in msg:
            raise
        return f"RuntimeError: {msg}"
    return f"ok (grad_fn {type(v.grad_fn).__name__})"


def main():
    v = make()
    assert v.requires_grad, "the view does not require grad"
    unread = mul_(v)
    v = make()
    name = type(v.grad_fn).__name__  # the read
    read = mul_(v)
    print(
        f"{torch.__version__} without reading grad_fn: {unread}; after reading grad_fn "
        f"({name}): {read}"
    )
    if unread != read and unread.startswith("RuntimeError"):
        print(
            f"REPRODUCES: v.mul_(2) on the view raises {unread} unless v.grad_fn was read "
            f"first (then: {read})"
        )
        return 1
    if unread.startswith("RuntimeError"):
        print(f"FIXED: the outcome no longer depends on reading grad_fn (both raise: {unread})")
        return 0
    print(f"FIXED: v.mul_(2) succeeds without reading grad_fn ({unread})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
