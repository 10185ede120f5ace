"""torch.from_dlpack of a bool ndarray (DLPack type code 6, kDLBool): does the
import work, and do negative strides still abort the process for other dtypes?
Each import runs in its own child process (an abort must not end the probe)."""

import subprocess
import sys

import torch

CASES = {
    "bool, positive stride": "np.array([True, False, True])",
    "bool, reversed": "np.array([True, False, True])[::-1]",
    "float64, positive stride": "np.arange(3.0)",
    "float64, reversed": "np.arange(3.0)[::-1]",
}
CHILD = (
    "import numpy as np, torch\n"
    "try:\n"
    "    print('OK', torch.from_dlpack({}).tolist())\n"
    "except Exception as e:\n"
    "    print('EXC', type(e).__name__, e)\n"
)
print(torch.__version__)
for name, expr in CASES.items():
    p = subprocess.run([sys.executable, "-c", CHILD.format(expr)], capture_output=True,
                       text=True, check=False)  # fmt: skip
    out = p.stdout.strip() or f"exit {p.returncode}"
    print(f"{name}: {out}")
