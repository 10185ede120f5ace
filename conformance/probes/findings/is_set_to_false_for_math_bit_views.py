"""Eager: Tensor.is_set_to returns False for a conjugate view or a negative view,
even when it is asked about itself.

t = torch.zeros(2, 3, dtype=torch.complex64)
c = t.conj()          # conjugate view: same storage, offset, sizes, strides as t
n = c.imag            # negative view (is_neg() is True)
c.is_set_to(c)        # False
n.is_set_to(n)        # False
t.is_set_to(c)        # False (same storage, offset, sizes and strides)

The is_set_to docstring: "Returns True if both tensors are pointing to the exact
same memory (same storage, offset, size and stride)." A tensor always points to
its own memory, so c.is_set_to(c) must be True. is_set_to is not in the math-bit
fallthrough lists (aten/src/ATen/native/MathBitFallThroughLists.h), so the
conjugate/negative fallback materializes the math-bit arguments into fresh
tensors before comparing them. Plain views (t[...], t.imag) give True.

Pinned by the registered claim views.is-set-to-false-for-math-bit-views (where
views.is-set-to deviates).
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch.Tensor, "is_neg"):
        print(f"NOT APPLICABLE: torch {torch.__version__} has no negative views (Tensor.is_neg)")
        return 3
    t = torch.zeros(2, 3, dtype=torch.complex64)
    c = t.conj()
    n = c.imag
    assert c.is_conj() and n.is_neg(), "no math-bit views"
    same = (
        c.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
        and c.storage_offset() == t.storage_offset()
        and c.stride() == t.stride()
        and c.shape == t.shape
    )
    assert same, "t.conj() does not have t's storage, offset, sizes and strides"
    # control: plain views of the same memory
    assert t.is_set_to(t[...]) and t.imag.is_set_to(t.imag), "is_set_to of a plain view is False"
    got = {
        "t.conj().is_set_to(itself)": c.is_set_to(c),
        "t.conj().imag.is_set_to(itself)": n.is_set_to(n),
        "t.is_set_to(t.conj())": t.is_set_to(c),
    }
    print(torch.__version__, got)
    if not (got["t.conj().is_set_to(itself)"] and got["t.conj().imag.is_set_to(itself)"]):
        print(
            "REPRODUCES: is_set_to of a math-bit view against itself is False: "
            + ", ".join(f"{k} = {v}" for k, v in got.items())
            + " (t[...] and t.imag give True)"
        )
        return 1
    print(
        "FIXED: a conjugate/negative view is_set_to itself "
        f"(t.is_set_to(t.conj()) = {got['t.is_set_to(t.conj())']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
