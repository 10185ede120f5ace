"""Eager: torch.asarray(a, copy=False) of a 0-d ndarray silently copies.

a = np.array(1.5)                    # 0-d float64 ndarray (writable)
t = torch.asarray(a, copy=False)     # a copy: t.data_ptr() != a.ctypes.data
t.fill_(7.0)                         # a is still 1.5

The asarray docstring: with copy=False "the returned tensor shares memory with
obj and an error is thrown if it is not possible." A 1-d array is shared as
documented; a 0-d array takes the NumPy-scalar path (PyArray_CheckScalar is true
for 0-d arrays, path added by PR #90914) and is copied without an error.
Expected: t shares a's memory (a write through t is seen in a), or asarray raises.

Pinned by the registered claim numpy.asarray-zero-dim-ndarray-copies (where
numpy.asarray-zero-dim-ndarray deviates).
"""

import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main():
    # control: a 1-d array is shared
    a1 = np.array([1.5])
    t1 = torch.asarray(a1, copy=False)
    assert t1.data_ptr() == a1.ctypes.data, "asarray(1-d array, copy=False) does not share"
    a = np.array(1.5)
    try:
        t = torch.asarray(a, copy=False)
    except (ValueError, RuntimeError) as e:
        print(
            f"FIXED: asarray(0-d array, copy=False) raises {type(e).__name__}: "
            f"{str(e).splitlines()[0]}"
        )
        return 0
    shares = t.data_ptr() == a.ctypes.data
    t.fill_(7.0)
    seen = float(a) == 7.0
    print(f"{torch.__version__} shares={shares} a after t.fill_(7.0): {float(a)}")
    if not (shares and seen):
        print(
            "REPRODUCES: torch.asarray(np.array(1.5), copy=False) returns a copy "
            f"(t.data_ptr() == a.ctypes.data: {shares}); after t.fill_(7.0) the "
            f"array still holds {float(a)} (a 1-d array is shared)"
        )
        return 1
    print("FIXED: asarray(0-d array, copy=False) shares the array's memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
