"""Eager: torch.from_dlpack of a NumPy array with a negative stride aborts the
whole Python process (SIGABRT) instead of raising or copying.

a = np.arange(6.0)[::-1]      # strides (-8,)
torch.from_dlpack(a)          # terminate called after throwing 'c10::Error':
                              # Storage size calculation overflowed ...; SIGABRT

The c10::Error is thrown through the noexcept TensorMaker::computeStorageSize,
so it cannot be caught. torch.from_numpy raises a ValueError for the same array,
and from_dlpack(a, copy=True) (NumPy exports a positive-stride copy) imports
fine. Expected: a catchable exception, or a tensor holding [5, 4, 3, 2, 1, 0].
Reported upstream as pytorch/pytorch#188023; torch 2.14 raises RuntimeError.

The import runs in a child process so the abort does not end this script.

Pinned by the registered claim dlpack.negative-stride-import-aborts (where
dlpack.negative-stride-no-crash deviates).
"""

import signal
import subprocess
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")

CODE = """
import numpy as np, torch
a = np.arange(6.0)[::-1]
try:
    t = torch.from_dlpack(a)
except Exception as e:
    print("EXC", type(e).__name__, str(e).splitlines()[0][:100])
else:
    print("OK", t.tolist())
"""


def main():
    if not hasattr(np.ndarray, "__dlpack__") or not hasattr(torch, "from_dlpack"):
        print(
            f"NOT APPLICABLE: numpy {np.__version__} / torch {torch.__version__} "
            "cannot exchange arrays through DLPack"
        )
        return 3
    p = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, check=False
    )
    out = p.stdout.strip().splitlines()
    if p.returncode < 0:
        sig = signal.Signals(-p.returncode).name
        err = [ln for ln in p.stderr.splitlines() if "overflow" in ln.lower()]
        print(
            f"REPRODUCES: child died with signal {-p.returncode} ({sig}) in "
            f"torch.from_dlpack(np.arange(6.0)[::-1])"
            + (f": {err[0].strip()[:100]}" if err else "")
        )
        return 1
    if p.returncode != 0 or not out:
        raise AssertionError(f"child exited {p.returncode}: {p.stderr[-300:]}")
    last = out[-1]
    if last.startswith("EXC"):
        print(
            f"FIXED: from_dlpack of a negative-stride array raises instead of aborting: {last[4:]}"
        )
        return 0
    if last == "OK [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]":
        print("FIXED: from_dlpack of a negative-stride array imports [5.0, ..., 0.0]")
        return 0
    raise AssertionError(f"unexpected import: {last}")


if __name__ == "__main__":
    sys.exit(main())
