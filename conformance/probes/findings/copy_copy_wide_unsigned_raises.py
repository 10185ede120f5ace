"""Eager: copy.copy of a uint16 (also uint32, uint64) tensor raises AttributeError.

t = torch.zeros(2, dtype=torch.uint16)
copy.copy(t)   # AttributeError: 'torch.storage.UntypedStorage' object has no
               # attribute '_untyped_storage'

copy.copy reconstructs a tensor from Tensor.__reduce_ex__, which for these dtypes
(no typed storage class) hands torch._utils._rebuild_tensor_v3 an UntypedStorage
where it expects a typed one. copy.copy of every other dtype works (it returns
an alias), copy.deepcopy of the uint16 tensor works, and torch 2.5.1 copies
uint16 tensors too. Expected: copy.copy(t) returns a tensor equal to t (an alias,
as for int16).

Pinned by the registered claim deepcopy.copy-copy-wide-unsigned-raises (where
deepcopy.copy-copy-aliases deviates).
"""

import copy
import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch, "uint16"):
        print(f"NOT APPLICABLE: torch {torch.__version__} has no torch.uint16")
        return 3
    ref = torch.zeros(2, dtype=torch.int16)  # control: another dtype copies (aliases)
    rc = copy.copy(ref)
    assert rc.dtype == torch.int16 and rc.tolist() == [0, 0], "copy.copy of int16 failed"
    t = torch.zeros(2, dtype=torch.uint16)
    try:
        c = copy.copy(t)
    except AttributeError as e:
        print(
            "REPRODUCES: copy.copy(torch.zeros(2, dtype=torch.uint16)) raises AttributeError: "
            f"{str(e).splitlines()[0]} (int16 copies; aliases: "
            f"{rc.data_ptr() == ref.data_ptr()})"
        )
        return 1
    if c.dtype != torch.uint16 or c.tolist() != [0, 0]:
        raise AssertionError(f"copy.copy gave {c!r}")
    print(f"FIXED: copy.copy of a uint16 tensor works (aliases: {c.data_ptr() == t.data_ptr()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
