"""Inductor computes a consumer of a dtype view of an input after a later in-place write
to that input (pytorch/pytorch#198101).

fn(x) = {y = x.view(torch.int32) * 2; y.sub_(-4); x[:, 2:5] = 2; return y.view(torch.int64)}
with x = arange(-12, 12, dtype=int64).reshape(4, 6). y is a fresh tensor computed from x
before the write, so eager (the oracle) returns [..., 12884901872, 12884901874,
12884901876, ...] in out[0, 2:5]. Inductor reads x after x[:, 2:5] = 2 and silently
returns 17179869192 (= (4 << 32) + 8) there. aot_eager is correct. Each call gets a
fresh input.

Pinned by the registered claims compile.issue-198101-dtype-view-read-before-write
(expected deviation) and compile.issue-198101-pinned.
"""

import importlib
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


def _isolate():
    for module, name, value in (
        ("torch._functorch.config", "enable_autograd_cache", False),
        ("torch._inductor.config", "fx_graph_cache", False),
        ("torch._inductor.config", "compile_threads", 1),
    ):
        try:
            mod = importlib.import_module(module)
        except Exception:
            continue
        if hasattr(mod, name):
            setattr(mod, name, value)


def fn(x):
    y = x.view(torch.int32) * 2
    y.sub_(-4)
    x[:, 2:5] = 2
    return y.view(torch.int64)


def run(call):
    x = torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6)
    out = call(x)
    return out.tolist(), x.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    _isolate()
    want = run(fn)
    print(f"eager: out[0] = {want[0][0]}")
    torch._dynamo.reset()
    got = run(torch.compile(fn, backend="inductor", fullgraph=True))
    torch._dynamo.reset()
    print(f"inductor: out[0] = {got[0][0]}")
    if got != want:
        print(
            "REPRODUCES: inductor computes y = x.view(int32) * 2 after the later x[:, 2:5] = 2: "
            f"out[0, 2:5] = {got[0][0][2:5]}, eager {want[0][0][2:5]}"
        )
        return 1
    print(f"FIXED: inductor returns eager's out[0, 2:5] = {got[0][0][2:5]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
