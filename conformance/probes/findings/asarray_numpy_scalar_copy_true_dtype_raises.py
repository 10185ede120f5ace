"""Eager: torch.asarray of a NumPy scalar with copy=True and another dtype raises
an aliasing error, although copy=True asks for a copy.

s = np.float32(1.5)
torch.asarray(s, dtype=torch.float64)              # tensor(1.5, dtype=torch.float64)
torch.asarray(s, dtype=torch.float64, copy=True)   # ValueError: can't alias ...

The asarray docstring: with copy=True "the returned tensor does not share its
memory" - a copy, which can convert the dtype (as the copy=None call above
does). The NumPy-scalar path (PR #90914) runs its alias check whenever copy is
not None. Expected: a 0-d float64 tensor holding 1.5. 0-d ndarrays behave the
same (numpy.asarray-zero-dim-ndarray-copies).

Pinned by the registered claim numpy.asarray-numpy-scalar-copy-true-dtype-raises
(where numpy.asarray-numpy-scalar-copies deviates).
"""

import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main():
    s = np.float32(1.5)
    ref = torch.asarray(s, dtype=torch.float64)  # control: copy=None converts
    assert ref.dtype == torch.float64 and ref.item() == 1.5, f"copy=None gave {ref!r}"
    try:
        t = torch.asarray(s, dtype=torch.float64, copy=True)
    except ValueError as e:
        msg = str(e).splitlines()[0]
        if "alias" not in msg:
            raise
        print(
            "REPRODUCES: torch.asarray(np.float32(1.5), dtype=torch.float64, copy=True) "
            f"raises ValueError: {msg} (copy=None gives {ref!r})"
        )
        return 1
    if t.dtype != torch.float64 or t.dim() != 0 or t.item() != 1.5:
        raise AssertionError(f"unexpected result: {t!r}")
    print(f"FIXED: asarray(np scalar, dtype=float64, copy=True) returns {t!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
