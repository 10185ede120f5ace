"""detach() is listed among PyTorch's view ops but its result is not tracked as a view
(doc drift).

Docs page: https://docs.pytorch.org/docs/stable/tensor_view.html
The page says: "For reference, here's a full list of view ops in PyTorch:" and lists
detach() among them (between as_strided() and diagonal()).

Expected (documented): base.detach() is a view of base like the other listed ops:
_is_view() True and _base the base (as for base[0] or base.t()).
Observed on torch 2.13: detach() is a non-differentiable alias (PR #12502): it shares
base's storage and version counter, but _is_view() is False and _base is None, so views of
it have the detached tensor as their base and detach_() on it is allowed.

REPRODUCES while base.detach() is not tracked as a view; FIXED when it is
(_is_view() True, _base is base).

Claims: sequences.detach-is-view (the page's list, recorded deviation), pinned by
sequences.detach-untracked-alias.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    base = torch.zeros(2, 3)
    d = base.detach()
    listed_view = base.t()
    same_storage = d.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    before = base._version
    d.add_(1)
    shares_version = base._version == before + 1
    print(
        f"{torch.__version__}: base.detach(): _is_view()={d._is_view()}, _base is base: {d._base is base}, "
        f"same storage: {same_storage}, shares version counter: {shares_version}; "
        f"base.t(): _is_view()={listed_view._is_view()}, _base is base: {listed_view._base is base}"
    )
    if d._is_view() and d._base is base:
        print("FIXED: base.detach() is tracked as a view of base, like the other listed view ops")
        return 0
    print(
        f"REPRODUCES: base.detach() (listed as a view op) has _is_view()={d._is_view()} and "
        f"_base={d._base!r}, although it shares base's storage ({same_storage}) and version counter "
        f"({shares_version}); base.t() is a view (_is_view()={listed_view._is_view()})"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
