"""torch.from_numpy accepts uint16/uint32/uint64, which its docstring's dtype list omits
(doc drift).

Docs page: https://docs.pytorch.org/docs/stable/generated/torch.from_numpy.html
The docstring says: "It currently accepts ndarray with dtypes of numpy.float64,
numpy.float32, numpy.float16, numpy.complex64, numpy.complex128, numpy.int64,
numpy.int32, numpy.int16, numpy.int8, numpy.uint8, and bool."

Expected (documented): exactly these dtypes are accepted; a uint16/uint32/uint64 array
is rejected like any other dtype. Observed on torch 2.13: the list predates the wide
unsigned dtypes (torch 2.3), and from_numpy accepts uint16, uint32 and uint64 arrays
(sharing memory), as the TypeError text for unsupported dtypes already says.

REPRODUCES while a wide unsigned array is accepted and the docstring still lacks uint16;
FIXED when the docstring lists the wide unsigned dtypes (or they are rejected).
NOT APPLICABLE before torch has torch.uint16 (< 2.3).

Claims: numpy.from-numpy-documented-dtypes (the docstring's list, recorded deviation),
pinned by numpy.from-numpy-dtype-set.
"""

import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch, "uint16"):
        print("NOT APPLICABLE: this torch has no uint16/uint32/uint64 dtypes")
        return 3
    doc = torch.from_numpy.__doc__
    accepted = []
    for name in ("uint16", "uint32", "uint64"):
        a = np.array([1, 2], dtype=name)
        try:
            t = torch.from_numpy(a)
        except TypeError:
            continue
        accepted.append(f"{name} -> {t.dtype} (shares memory: {t.data_ptr() == a.ctypes.data})")
    print(f"{torch.__version__}: from_numpy accepted: {accepted or 'none of uint16/32/64'}")
    if not accepted:
        print("FIXED: from_numpy rejects uint16/uint32/uint64 arrays, as its dtype list says")
        return 0
    if doc is not None and "uint16" in doc:
        print(
            f"FIXED: the from_numpy docstring now lists the wide unsigned dtypes (accepted: {accepted})"
        )
        return 0
    print(
        "REPRODUCES: torch.from_numpy accepts arrays outside its documented dtype list: "
        + "; ".join(accepted)
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
