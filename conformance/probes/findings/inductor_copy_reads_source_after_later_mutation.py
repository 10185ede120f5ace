"""Inductor copies a source into a destination after a later in-place write to the source
(pytorch/pytorch#198131).

fn(dst, src) = {dst[0:, :] = src[0:, :]; src.add_(1); return src} with dst = zeros(3, 4)
and src = arange(12.).view(3, 4). Eager (the oracle) leaves dst with src's values from
before the add_ (0..11). Inductor's remove_noop_ops replaces the full-slice copy of the
input src by src itself, and the copy into dst runs after the write-back of src.add_(1):
dst silently receives 1..12. aot_eager is correct. Each call gets fresh inputs.

Pinned by the registered claims compile.issue-198131-copy-then-mutate-source (expected
deviation) and compile.issue-198131-pinned.
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


def fn(dst, src):
    dst[0:, :] = src[0:, :]
    src.add_(1)
    return src


def run(call):
    dst = torch.zeros(3, 4)
    src = torch.arange(12.0).view(3, 4).clone()
    call(dst, src)
    return dst.flatten().tolist(), src.flatten().tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    _isolate()
    want = run(fn)
    print(f"eager: dst {want[0]}")
    torch._dynamo.reset()
    got = run(torch.compile(fn, backend="inductor", fullgraph=True))
    torch._dynamo.reset()
    print(f"inductor: dst {got[0]}")
    if got != want:
        print(
            "REPRODUCES: inductor fn(dst, src) = {dst[0:, :] = src[0:, :]; src.add_(1)} leaves "
            f"dst = {got[0][:4]}... (src after its add_); eager dst = {want[0][:4]}..."
        )
        return 1
    print(f"FIXED: inductor leaves dst = {got[0][:4]}... like eager (src before its add_)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
