"""torch.compile, a view argument returned beside a write between two
arguments that alias each other: f(a0, a1, a2) = {t0 = a2.zero_();
a0.copy_(a1); return t0} with a0 = b0[:][:], a1 = b0 and a2 = b1[:].select(0, 1).
Eager returns a2 (storage offset 1, value 0). Does the compiled function return
a view at storage offset 1 holding 0, or one regenerated at offset 0 (b1[0],
15)? Forms: the write reads the other alias (copy_, add_ with it) or only
itself (add_(1), sub_ of itself)."""

import torch

FORMS = {
    "a0.copy_(a1)": lambda a0, a1, a2: (a2.zero_(), a0.copy_(a1))[0],
    "a1.copy_(a0)": lambda a0, a1, a2: (a2.zero_(), a1.copy_(a0))[0],
    "a0.add_(a1)": lambda a0, a1, a2: (a2.zero_(), a0.add_(a1))[0],
    "a0.add_(1)": lambda a0, a1, a2: (a2.zero_(), a0.add_(1))[0],
    "a1.sub_(a1)": lambda a0, a1, a2: (a2.zero_(), a1.sub_(a1))[0],
}


def inputs():
    b0, b1 = torch.arange(1, 5), torch.arange(15, 19)
    return b0[:][:], b0, b1[:].select(0, 1)


print(torch.__version__)
for name, fn in FORMS.items():
    for backend in ("eager", "aot_eager", "inductor"):
        torch._dynamo.reset()
        try:
            call = fn if backend == "eager" else torch.compile(fn, backend=backend)
            out = call(*inputs())
            print(f"{name:13} {backend:9} out={out.item()} storage_offset={out.storage_offset()}")
        except Exception as e:  # report, do not stop: a raise is an outcome too
            print(f"{name:13} {backend:9} {type(e).__name__}: {str(e).splitlines()[0][:80]}")
