"""copy.deepcopy of an nn.Parameter drops its .grad and its Python attributes (doc drift;
pytorch/pytorch#95711 and #117275, open).

Docs page: https://docs.python.org/3/library/copy.html - "A deep copy constructs a new
compound object and then, recursively, inserts copies into it of the objects found in
the original." torch's own Tensor.__deepcopy__ follows it: a plain tensor leaf's copy
carries a copy of its .grad (PR #50663) and of its __dict__.

Expected: copy.deepcopy(p) of a Parameter with a .grad and an attribute carries a copy of
both, as for a plain tensor leaf. Observed on torch 2.13: Parameter.__deepcopy__ returns
Parameter(p.data.clone(...), p.requires_grad) and copies neither, so copy.deepcopy(model)
drops every gradient and every attribute set on a Parameter.

REPRODUCES while the Parameter's copy lacks the .grad or the attribute (and the plain
tensor's copy keeps both); FIXED when the Parameter's copy keeps both.

Claims: deepcopy.parameter-keeps-grad-and-attrs (recorded deviation), pinned by
deepcopy.parameter-drops-grad-and-attrs; contrast deepcopy.grad-and-attrs-copied-for-tensors.
"""

import copy
import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def state(c):
    grad = None if c.grad is None else c.grad.tolist()
    return f"{type(c).__name__}: .grad={grad}, .tag={getattr(c, 'tag', '<missing>')!r}"


def main():
    p = torch.nn.Parameter(torch.zeros(3))
    p.grad = torch.ones(3)
    p.tag = "kept?"
    t = torch.zeros(3, requires_grad=True)
    t.grad = torch.ones(3)
    t.tag = "kept?"
    cp, ct = copy.deepcopy(p), copy.deepcopy(t)
    print(
        f"{torch.__version__}: deepcopy(Parameter) -> {state(cp)}; deepcopy(plain leaf) -> {state(ct)}"
    )
    if cp.grad is not None and getattr(cp, "tag", None) == "kept?":
        print("FIXED: copy.deepcopy of an nn.Parameter keeps its .grad and its attribute")
        return 0
    print(
        "REPRODUCES: copy.deepcopy of an nn.Parameter with .grad ones(3) and attribute tag -> "
        f"{state(cp)} (a plain tensor leaf's deepcopy -> {state(ct)})"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
