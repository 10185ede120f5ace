"""copy.copy of a uint16 tensor (plain leaf, view): torch 2.5.1 copies it (an
alias); 2.9.1 and 2.13.0 raise AttributeError "'torch.storage.UntypedStorage'
object has no attribute '_untyped_storage'"."""

import copy

import torch

if not hasattr(torch, "uint16"):
    raise SystemExit(f"{torch.__version__}: no torch.uint16")
for state in ("leaf", "view"):
    t = torch.zeros(2, dtype=torch.uint16)
    if state == "view":
        t = t[1:]
    try:
        c = copy.copy(t)
        print(torch.__version__, state, "copy.copy ok, shares:", c.data_ptr() == t.data_ptr())
    except Exception as e:
        print(torch.__version__, state, type(e).__name__, str(e)[:80])
