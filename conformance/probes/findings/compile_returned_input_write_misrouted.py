"""torch.compile (aot_eager, inductor) writes one input's mutation into another input.

f(x, y) = {x.fill_(5); y.add_(1); return x} with x = b.t() (b = arange(1., 13.) as 3x4)
and y = leaf * 1 (leaf = arange(41., 53.) as 4x3, requiring grad). Eager leaves y = leaf + 1
(42 ... 53) and x all 5s. On torch 2.13 aot_eager and inductor copy x's new values into y:
y holds 5s (with x and y of different shapes the copy raises 'The size of tensor a (4) must
match the size of tensor b (3)'). With y not requiring grad both inputs are right. The
project's 2.15.0 release run finds it fixed.

Pinned by the registered claim compile.returned-input-write-misrouted (deviations of
compile.input-mutations-match-eager and compile.errors-match-eager).
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")
try:
    import logging

    torch._logging.set_logs(
        dynamo=logging.CRITICAL, aot=logging.CRITICAL, inductor=logging.CRITICAL
    )
except Exception:
    pass


def f(x, y):
    x.fill_(5)
    y.add_(1)
    return x


def run(call):
    b = torch.arange(1.0, 13.0).reshape(3, 4)
    leaf = torch.arange(41.0, 53.0).reshape(4, 3).requires_grad_()
    y = leaf * 1
    out = call(b.t(), y)
    return y.detach().flatten().tolist(), out.detach().flatten().tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: y={want[0]} out={want[1]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: y={got[0]} out={got[1]}")
        assert got[1] == want[1], f"{backend} output differs from eager"
        if got[0] != want[0]:
            bad.append(f"{backend} leaves y={got[0][:4]}...")
    if bad:
        print(
            f"REPRODUCES: x.fill_(5); y.add_(1); return x, y a grad non-leaf: {'; '.join(bad)} "
            f"(eager y={want[0][:4]}...)"
        )
        return 1
    print(f"FIXED: aot_eager and inductor leave y = y + 1 as eager ({want[0][:4]}...)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
