"""The torch.func UX Limitations vmap example does not pop the caller's list (doc drift).

Docs page: https://docs.pytorch.org/docs/stable/func.ux_limitations.html
(section "Mutation: Arbitrary mutation of Python data structures"). The page runs

    def f(x, list):
        list.pop()
        print("hello!")
        return x.sum(0)

    x = torch.randn(3, 1)
    lst = [0, 1, 2, 3]
    result = vmap(f, in_dims=(0, None))(x, lst)

and states that it "will print "hello!" once and pop only one element from lst."

Expected (documented): f runs once and the caller's lst loses one element ([0, 1, 2]).
Observed on torch 2.13: f runs once, but vmap flattens and rebuilds pytree arguments
(in_dims=None ones too), so f pops from a rebuilt copy and the caller's lst keeps all four
elements. (x here is a fixed tensor instead of randn; a counter replaces the print.)

REPRODUCES while the caller's list is not popped (or f runs other than once); FIXED when
f runs once and lst becomes [0, 1, 2].

Claims: torch_func.vmap-doc-example-pops-caller-list (the page's example, recorded
deviation), pinned by torch_func.pytree-arguments-rebuilt.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    func = getattr(torch, "func", None)
    if func is None or not hasattr(func, "vmap"):
        print("NOT APPLICABLE: torch.func.vmap does not exist in this torch")
        return 3
    calls = []

    def f(x, items):
        items.pop()
        calls.append(1)
        return x.sum(0)

    x = torch.arange(3.0).reshape(3, 1)
    lst = [0, 1, 2, 3]
    func.vmap(f, in_dims=(0, None))(x, lst)
    print(f"{torch.__version__}: f ran {len(calls)} time(s); caller's lst after vmap = {lst}")
    if len(calls) == 1 and lst == [0, 1, 2]:
        print(
            "FIXED: vmap(f, in_dims=(0, None))(x, lst) ran f once and popped one element from lst"
        )
        return 0
    print(
        "REPRODUCES: vmap(f, in_dims=(0, None))(x, lst) with f popping its list argument: "
        f"f ran {len(calls)} time(s), caller's lst = {lst} (docs: popped once, [0, 1, 2])"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
