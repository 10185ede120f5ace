"""Eager: a DLPack export of a tensor with the negative bit set returns the
values with their sign flipped, silently.

v = torch.tensor([1 + 2j]).conj().imag   # negative view: tensor([-2.]), is_neg() True
torch.from_dlpack(v)                      # tensor([2.])
np.from_dlpack(v)                         # array([2.], dtype=float32)

DLPack has no negative bit. Tensor.__dlpack__ refuses the conjugate bit ("Can't
export tensors with the conjugate bit set") but not the negative bit, so the
export hands out the view's storage (the un-negated imaginary parts).
Tensor.numpy() refuses the same tensor (PR #61925). Expected: the import holds
-2.0, the value of the exported tensor (the export resolves the bit), or the
export is refused.

Pinned by the registered claim dlpack.neg-bit-export-drops-sign (where
dlpack.export-keeps-values deviates).
"""

import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch.Tensor, "is_neg") or not hasattr(torch, "from_dlpack"):
        print(
            f"NOT APPLICABLE: torch {torch.__version__} has no negative views or torch.from_dlpack"
        )
        return 3
    v = torch.tensor([1 + 2j]).conj().imag
    assert v.is_neg() and v.tolist() == [-2.0], f"not a negative view holding -2: {v!r}"
    got = {}
    for name, imp in (
        ("torch.from_dlpack", torch.from_dlpack),
        ("np.from_dlpack", getattr(np, "from_dlpack", None)),
    ):
        if imp is None:
            continue
        try:
            d = imp(v)
        except (RuntimeError, BufferError, TypeError) as e:
            got[name] = f"refused ({type(e).__name__}: {str(e).splitlines()[0][:60]})"
            continue
        got[name] = [float(x) for x in (d.tolist() if isinstance(d, torch.Tensor) else d)]
    print(torch.__version__, "value -2.0;", got)
    wrong = {k: r for k, r in got.items() if isinstance(r, list) and r != [-2.0]}
    if wrong:
        print(
            "REPRODUCES: DLPack export of the negative view torch.tensor([1+2j]).conj().imag "
            "(value [-2.0]) imports as " + ", ".join(f"{k} -> {r}" for k, r in wrong.items())
        )
        return 1
    print("FIXED: the negative view exports its value or is refused: " + repr(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
