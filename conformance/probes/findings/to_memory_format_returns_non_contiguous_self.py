"""t.to(memory_format=torch.contiguous_format) returns a non-contiguous t itself
(doc drift; pytorch/pytorch#62027, open since 2021).

Docs page: https://docs.pytorch.org/docs/stable/generated/torch.Tensor.to.html
The docstring says: "memory_format (torch.memory_format, optional): the desired memory
format of returned Tensor. Default: torch.preserve_format."

Expected (documented): x.to(memory_format=torch.contiguous_format) is contiguous.
Observed on torch 2.13: without a dtype/device change, to() returns self whenever
x.suggest_memory_format() equals the requested format (to_will_alias), and below rank 4
that is always contiguous_format: a transposed (2, 3) tensor comes back as the same
object, strides (1, 3), not contiguous. Workaround: x.contiguous(memory_format=...).

REPRODUCES while the result is not contiguous; FIXED when it is.

Claims: to.memory-format-honoured (the docstring, recorded deviation), pinned by
to.memory-format-alias-below-rank-4.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    x = torch.zeros(2, 3).t()
    y = x.to(memory_format=torch.contiguous_format)
    print(
        f"{torch.__version__}: x = zeros(2, 3).t() strides {x.stride()}; "
        f"y = x.to(memory_format=torch.contiguous_format): y is x: {y is x}, strides {y.stride()}, "
        f"is_contiguous {y.is_contiguous()}"
    )
    if y.is_contiguous():
        print(
            f"FIXED: to(memory_format=torch.contiguous_format) returned a contiguous tensor (strides {y.stride()})"
        )
        return 0
    print(
        "REPRODUCES: torch.zeros(2, 3).t().to(memory_format=torch.contiguous_format) returns "
        f"{'the input itself' if y is x else 'a tensor'} with strides {y.stride()} (is_contiguous False)"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
