"""Which size-0/1 strides does torch's DLPack export rewrite to 1? Three candidate rules,
each checked on 5000 random ``as_strided`` tensors (both export routes):

- ``every``: every tensor with a size-0/1 dimension whose stride is not 1 (2.1-2.8:
  ``toDLPack`` normalizes every export, pytorch#83069);
- ``row-major break``: only a tensor where, walking from the last dimension, a size-1
  dimension's stride differs from the row-major stride of the dimensions after it; then
  every size-0/1 stride becomes 1 (2.9: the cheaper check before normalizing);
- ``none``: no stride is rewritten (2.10 and later).

Prints, per rule, how many exports it mispredicts; the rule with 0 is this release's."""

import random

import torch


def odd_small(shape, stride):
    return any(n < 2 and s != 1 for n, s in zip(shape, stride, strict=True))


def row_major_break(shape, stride):
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride), strict=True):
        if n == 1 and s != expected:
            return True
        expected *= n
    return False


RULES = {
    "every": odd_small,
    "row-major break": lambda sh, st: row_major_break(sh, st) and odd_small(sh, st),
    "none": lambda sh, st: False,
}

random.seed(0)
wrong = dict.fromkeys(RULES, 0)
cases = changed = 0
for _ in range(5000):
    nd = random.randint(0, 4)
    shape = [random.choice([0, 1, 1, 2, 3]) for _ in range(nd)]
    stride = [random.randint(0, 9) for _ in range(nd)]
    t = torch.zeros(200).as_strided(shape, stride, random.randint(0, 3))
    for cap in (torch.utils.dlpack.to_dlpack(t), t.__dlpack__()):
        got = tuple(torch.from_dlpack(cap).stride()) != tuple(t.stride())
        cases += 1
        changed += got
        for name, rule in RULES.items():
            wrong[name] += rule(shape, stride) != got
print(torch.__version__, f"exports {cases}, strides rewritten {changed}")
for name, n in wrong.items():
    print(f"  rule {name!r}: {n} mispredicted")
