"""A missing CPU kernel raises NotImplementedError from torch 2.8 on, RuntimeError before
(error-type change between releases).

torch.zeros(3, dtype=torch.uint16).add_(1): uint16 (and uint32/uint64) has no CPU add
kernel on every release that has the dtype. Before torch 2.8 the dispatch error
'"add_stub" not implemented for 'UInt16'' is a RuntimeError; from 2.8 it is a
NotImplementedError with the same text (PR #155470 '[BE] Raise NotImplementedError',
marked BC-breaking in its release note). NotImplementedError is a subclass of
RuntimeError, so `except RuntimeError` still catches it; code that tests the exact type
changes behaviour.

Direction (release change): REPRODUCES when the installed torch shows the newer
behaviour - NotImplementedError (torch >= 2.8; so on 2.13); FIXED when it raises the
pre-2.8 plain RuntimeError. NOT APPLICABLE without torch.uint16 (< 2.3) or if uint16 add_
gains a CPU kernel.

Claims: sequences.dtype-support and sequences.inplace-arithmetic (the model predicts
NotImplementedError; recorded deviations for 2.3-2.7 name the RuntimeError).
Related probe: conformance/probes/missing_kernel_error_type.py.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch, "uint16"):
        print("NOT APPLICABLE: this torch has no torch.uint16")
        return 3
    t = torch.zeros(3, dtype=torch.uint16)
    try:
        t.add_(1)
    except RuntimeError as err:  # NotImplementedError is a subclass
        newer = isinstance(err, NotImplementedError)
        kind = type(err).__name__
        first = str(err).splitlines()[0]
    else:
        print(
            f"NOT APPLICABLE: uint16 add_ has a CPU kernel in torch {torch.__version__} (no error to type)"
        )
        return 3
    print(f"{torch.__version__}: torch.zeros(3, dtype=torch.uint16).add_(1) -> {kind}: {first}")
    if newer:
        print(
            f"REPRODUCES: the missing uint16 add_ kernel raises {kind} (the torch >= 2.8 type): {first}"
        )
        return 1
    print(f"FIXED: the missing uint16 add_ kernel raises {kind} (the pre-2.8 type): {first}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
