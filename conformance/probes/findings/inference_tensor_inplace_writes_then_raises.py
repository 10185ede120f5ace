"""Eager: an in-place op on an inference tensor outside inference_mode writes its
result and then raises; and x.detach() / x.data of an inference tensor accept
in-place writes outside the mode.

with torch.inference_mode():
    x = torch.ones(3)
x.add_(1)     # RuntimeError: Inplace update to inference tensor outside
              # InferenceMode is not allowed... - yet x is now [2., 2., 2.]

with torch.inference_mode():
    y = torch.ones(3)
y.detach().fill_(5)   # no error: y is now [5., 5., 5.] (y.data.fill_ too)

The check runs in VariableVersion::bump(), after the kernel has written (the
design of PR #54403). The C++ InferenceMode note: inference tensors "are
immutable outside InferenceMode". Expected: the refused op leaves x unchanged
([1., 1., 1.]), and writes through detach()/.data of an inference tensor are
refused as well (y unchanged).

Pinned by the registered claims gradmode.inference-inplace-outside-writes-then-raises
(where gradmode.inference-immutable-outside deviates) and graphs.inference-alias-mutable
(where graphs.inference-immutable-outside deviates).
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch, "inference_mode"):
        print(f"NOT APPLICABLE: torch {torch.__version__} has no inference_mode")
        return 3
    bad = []
    with torch.inference_mode():
        x = torch.ones(3)
    try:
        x.add_(1)
    except RuntimeError as e:
        msg = str(e).splitlines()[0]
        if "inference tensor" not in msg:
            raise
        print(f"x.add_(1): RuntimeError: {msg[:80]}; x = {x.tolist()}")
        if x.tolist() != [1.0, 1.0, 1.0]:
            bad.append(f"x.add_(1) raised but x is now {x.tolist()}")
    else:
        raise AssertionError(f"x.add_(1) on an inference tensor was accepted: x = {x.tolist()}")
    for alias in ("detach()", "data"):
        with torch.inference_mode():
            y = torch.ones(3)
        a = y.detach() if alias == "detach()" else y.data
        try:
            a.fill_(5)
        except RuntimeError as e:
            print(f"y.{alias}.fill_(5): RuntimeError: {str(e).splitlines()[0][:80]}")
            continue
        print(f"y.{alias}.fill_(5): accepted, y = {y.tolist()} (is_inference={a.is_inference()})")
        bad.append(f"y.{alias}.fill_(5) accepted, y = {y.tolist()}")
    if bad:
        print("REPRODUCES: inference tensors are written outside inference_mode: " + "; ".join(bad))
        return 1
    print(
        "FIXED: refused in-place updates leave inference tensors unchanged and their "
        "detach()/.data aliases are immutable"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
