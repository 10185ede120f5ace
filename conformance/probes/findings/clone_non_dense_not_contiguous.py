"""clone() of a non-dense tensor is dense but not contiguous, although the docstring says
"dense (contiguous)" (doc drift).

Docs page: https://docs.pytorch.org/docs/stable/generated/torch.clone.html
The docstring says: "In addition, when torch.preserve_format is used: If the input tensor
is dense (i.e., non-overlapping strided), its memory format (including strides) is
retained. Otherwise (e.g., a non-dense view like a stepped slice), the output is
converted to the dense (contiguous) format."

Expected (documented): x.clone() of a stepped slice is contiguous (row-major).
Observed on torch 2.13: since PR #59380 (empty_like infers dense strides from the input's
stride permutation) the clone keeps the input's stride order: the clone of
arange(80.).reshape(10, 8).t()[::2, ::2] has strides (1, 4), not (5, 1) (PyTorch's own
test_clone_not_memory_dense pins this). Issue #156644 reported the same contradiction and
was closed with a maintainer asking for a documentation fix; the 2.13 docstring still
says "dense (contiguous)".

REPRODUCES while the clone is not contiguous and the docstring still says
"dense (contiguous)"; FIXED when the clone is contiguous or the wording is gone.

Claims: clone.preserve-format-non-dense-contiguous (the docstring, recorded deviation),
pinned by clone.preserve-format-non-dense-keeps-stride-order.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")

WORDING = "dense (contiguous)"


def main():
    doc = " ".join((torch.clone.__doc__ or WORDING).split())
    x = torch.arange(80.0).reshape(10, 8).t()[::2, ::2]
    c = x.clone()
    print(
        f"{torch.__version__}: x = arange(80.).reshape(10, 8).t()[::2, ::2]: shape {tuple(x.shape)}, "
        f"strides {x.stride()}; x.clone(): strides {c.stride()}, is_contiguous {c.is_contiguous()}"
    )
    if c.is_contiguous():
        print(f"FIXED: clone() of a non-dense view is contiguous (strides {c.stride()})")
        return 0
    if WORDING not in doc:
        print(f"FIXED: the clone docstring no longer says '{WORDING}' (clone strides {c.stride()})")
        return 0
    print(
        "REPRODUCES: clone() of the non-dense view arange(80.).reshape(10, 8).t()[::2, ::2] has "
        f"strides {c.stride()} (is_contiguous False); the docstring says '{WORDING}'"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
