"""Index assignment of a negative Python int into an unsigned tensor: does
``t[...] = -1`` wrap (as ``fill_(-1)`` does), or raise?"""

import torch

for dt in [getattr(torch, n) for n in ("uint8", "uint16", "uint32", "uint64") if hasattr(torch, n)]:
    t = torch.zeros((), dtype=dt)
    try:
        t[...] = -1
        got = f"wraps to {t.item()}"
    except Exception as err:  # the type is what this probe reports
        got = f"{type(err).__name__}: {str(err).splitlines()[0]}"
    f = torch.zeros(1, dtype=dt).fill_(-1).item()
    print(torch.__version__, f"{str(dt):13}", f"t[...] = -1: {got:45}", f"| fill_(-1): {f}")
