"""t[0::1,] (a tuple index holding a whole-dimension slice) has grad_fn AliasBackward0
from torch 2.9 on, SliceBackward0 before (behaviour change between releases).

t = torch.zeros(3, 2, requires_grad=True); v = t[(slice(0, None, 1),)], i.e. t[0::1,].
On torch 2.1.2-2.8.0 v is a slice view with grad_fn SliceBackward0, like t[0::1] without
the tuple; from 2.9 the tuple form is an alias with grad_fn AliasBackward0 while t[0::1]
and t[:] stay SliceBackward0. Storage, geometry, version counter and the view
relationship (_base is t) are the same on both; only the grad_fn class differs, which
code that inspects grad_fn names (and the suite's model) sees. Not documented either way.

Direction (release change): REPRODUCES when the installed torch shows the newer
behaviour - t[0::1,] has an AliasBackward grad_fn (torch >= 2.9; so on 2.13); FIXED when
it is SliceBackward, as t[0::1] is.

Claims: sequences.grad-fn-type (recorded deviation for torch < 2.9; also
sequences.clone-non-dense-contiguous's full_slice region).
Related probe: conformance/probes/full_slice_index_is_alias.py.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    t = torch.zeros(3, 2, requires_grad=True)
    v = t[(slice(0, None, 1),)]
    plain = t[0::1]
    kind = type(v.grad_fn).__name__
    print(
        f"{torch.__version__}: t[0::1,].grad_fn = {kind} (_base is t: {v._base is t}); "
        f"t[0::1].grad_fn = {type(plain.grad_fn).__name__}"
    )
    if kind.startswith("AliasBackward"):
        print(
            f"REPRODUCES: t[0::1,] has grad_fn {kind} (the torch >= 2.9 behaviour; 2.1-2.8 give "
            f"SliceBackward0), while t[0::1] has {type(plain.grad_fn).__name__}"
        )
        return 1
    print(f"FIXED: t[0::1,] has grad_fn {kind}, as t[0::1] does (the torch < 2.9 behaviour)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
