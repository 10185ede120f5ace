# Does backward through a compiled t0.copy_(t0) of a non-contiguous tensor that
# requires grad run as in eager? (thorough seed 2 on 2.13 at edebd72: inductor's
# backward raised AssertionError 'expected size 3==3, stride 1==2 at dim=0'.)
import torch

print(torch.__version__)


def self_copy(a0):
    t0 = a0 + a0
    return t0.copy_(t0)


def then_product(a0):
    t0 = a0 + a0
    t0.copy_(t0)
    return t0 * 1


FORMS = [
    ("transposed-self-copy", self_copy, lambda leaf: leaf.t()),
    ("contiguous-self-copy", self_copy, lambda leaf: leaf * 1),
    ("transposed-self-copy-then-product", then_product, lambda leaf: leaf.t()),
]

for name, fn, view in FORMS:
    for backend in ("eager-mode", "aot_eager", "inductor"):
        torch._dynamo.reset()
        leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
        f = fn if backend == "eager-mode" else torch.compile(fn, backend=backend)
        try:
            out = f(view(leaf))
        except Exception as e:  # noqa: BLE001 - a probe reports what happens
            print(name, backend, "forward raised", type(e).__name__, str(e).splitlines()[0][:120])
            continue
        try:
            out.sum().backward()
            print(
                name,
                backend,
                "out",
                out.flatten().tolist(),
                "leaf.grad",
                leaf.grad.flatten().tolist(),
            )
        except Exception as e:  # noqa: BLE001
            print(name, backend, "backward raised", type(e).__name__, str(e).splitlines()[0][:120])
