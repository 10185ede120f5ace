"""Eager CPU: growing a shared-memory tensor with resize_ kills the process
with SIGSEGV.

t = torch.arange(4.).share_memory_()
t.resize_(100)                     # Segmentation fault
# also: t.untyped_storage().resize_(n) for any n > 0, its own size included

The docs say storages in shared memory cannot be resized, and a tensor whose
storage is not resizable (torch.from_numpy) raises "Trying to resize storage
that is not resizable". The shared storage reports resizable() True, but its
mapped memory cannot be reallocated. Expected: a RuntimeError, the process
alive. (pytorch/pytorch#184748, closed, was only about resize_(0) being
accepted, which still happens.)

The resize runs in a child process so the crash does not end this script.

Pinned by the registered claim shared_memory.resize-crashes (where
shared_memory.resize-raises deviates).
"""

import signal
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")

CODE = """
import torch
t = torch.arange(4.).share_memory_()
try:
    t.resize_(100)
except RuntimeError as e:
    print("EXC", type(e).__name__, str(e).splitlines()[0][:100])
else:
    print("OK", tuple(t.shape))
"""


def main():
    p = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, check=False
    )
    out = p.stdout.strip().splitlines()
    if p.returncode < 0:
        sig = signal.Signals(-p.returncode).name
        print(
            f"REPRODUCES: child died with signal {-p.returncode} ({sig}) in "
            "torch.arange(4.).share_memory_().resize_(100)"
        )
        return 1
    if p.returncode != 0 or not out:
        raise AssertionError(f"child exited {p.returncode}: {p.stderr[-300:]}")
    if out[-1].startswith("EXC"):
        print(f"FIXED: resize_ of a shared-memory tensor raises: {out[-1][4:]}")
        return 0
    print(
        f"FIXED: resize_ of a shared-memory tensor no longer crashes (it was accepted: "
        f"{out[-1]}; the docs say shared storages cannot be resized)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
