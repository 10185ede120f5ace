"""The exception type of a missing CPU kernel: uint16 add_ (no kernel on
every release that has uint16). RuntimeError before torch 2.8,
NotImplementedError from 2.8 (a subclass of RuntimeError)."""

import torch

if not hasattr(torch, "uint16"):
    raise SystemExit(f"{torch.__version__}: no torch.uint16")
t = torch.zeros(3, dtype=torch.uint16)
try:
    t.add_(1)
    print(torch.__version__, "uint16 add_: no error")
except RuntimeError as err:
    print(torch.__version__, "uint16 add_:", type(err).__name__, str(err)[:60])
