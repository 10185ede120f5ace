"""Tensor.__dlpack__(stream=-1) of a CPU tensor: rejected on torch 2.9.1, accepted before
and after (behaviour change between releases).

Docs page: https://docs.pytorch.org/docs/stable/generated/torch.Tensor.__dlpack__.html
The docstring says: "For non-CUDA devices, -1 is treated the same as None." (-1 is also
the stream DLPack consumers pass by default). torch 2.9.1 raised AssertionError 'stream
should be None on cpu.' for stream=-1 on a CPU tensor; 2.1.2-2.8.0 accepted any int
stream on the CPU; 2.13.0 accepts None and -1 and rejects other ints with that
AssertionError.

Direction (release change): REPRODUCES when the installed torch shows the undocumented
behaviour - __dlpack__(stream=-1) of a CPU tensor raises (seen on 2.9.1 only); FIXED when
it exports, as the docstring says (so FIXED on 2.13).

Claims: dlpack.stream-argument-cpu (recorded deviation for torch >= 2.9, < 2.10).
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    t = torch.arange(3.0)
    if not hasattr(t, "__dlpack__"):
        print("NOT APPLICABLE: this torch has no Tensor.__dlpack__")
        return 3
    try:
        capsule = t.__dlpack__(stream=-1)
    except AssertionError as err:
        print(f"{torch.__version__}: CPU t.__dlpack__(stream=-1) -> AssertionError: {err}")
        print(
            f"REPRODUCES: CPU tensor __dlpack__(stream=-1) raises AssertionError '{err}' (docs: -1 is treated as None)"
        )
        return 1
    back = torch.from_dlpack(capsule)
    try:
        t.__dlpack__(stream=5)
        other = "exports"
    except AssertionError as err:
        other = f"AssertionError: {err}"
    print(
        f"{torch.__version__}: CPU t.__dlpack__(stream=-1) exports {back.tolist()}; stream=5 -> {other}"
    )
    print(
        f"FIXED: CPU tensor __dlpack__(stream=-1) exports (imported back: {back.tolist()}), as documented"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
