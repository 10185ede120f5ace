"""Eager CPU: share_memory_() of a tensor made by torch.from_numpy silently ends
its aliasing with the array.

a = np.zeros(3)
t = torch.from_numpy(a)    # shares a's memory (documented)
t.share_memory_()          # copies into new shared memory, no warning
a[0] = 7.0                 # t[0] is still 0.0
t[1] = 5.0                 # a[1] is still 0.0

share_memory_ "moves the underlying storage to shared memory"; for memory torch
does not own (NumPy's buffer) it allocates new shared memory and copies,
although torch.from_numpy documents "The returned tensor and ndarray share the
same memory". The same happens implicitly when such a tensor is put on a
torch.multiprocessing queue. Expected: the tensor keeps aliasing the array, or
share_memory_ refuses (raises) rather than silently breaking the documented
sharing.

Pinned by the registered claim shared_memory.breaks-foreign-aliases.
"""

import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main():
    a = np.zeros(3)
    t = torch.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data, "from_numpy does not share the array"
    try:
        t.share_memory_()
    except RuntimeError as e:
        print(f"FIXED: share_memory_() of a from_numpy tensor raises: {str(e).splitlines()[0]}")
        return 0
    a[0] = 7.0
    t[1] = 5.0
    still = t.data_ptr() == a.ctypes.data
    print(
        f"{torch.__version__} is_shared={t.is_shared()} same address={still} "
        f"t={t.tolist()} a={a.tolist()}"
    )
    if not still or t[0].item() != 7.0 or a[1] != 5.0:
        print(
            "REPRODUCES: after t.share_memory_() (t = torch.from_numpy(a)) the tensor no longer "
            f"aliases the array: a[0] = 7 leaves t = {t.tolist()}, t[1] = 5 leaves a = "
            f"{a.tolist()} (is_shared={t.is_shared()})"
        )
        return 1
    print("FIXED: a from_numpy tensor keeps aliasing its array after share_memory_()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
