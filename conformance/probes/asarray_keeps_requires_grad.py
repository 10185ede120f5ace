"""torch.asarray(t) of a leaf that requires grad, where asarray returns t
itself (copy=None/False, dtype None or t's own): does t keep requires_grad?
(torch 2.1 resets the flag on t itself; later releases keep it.)"""

import torch

for dt in (torch.float16, torch.float32):
    for copy in (None, False, True):
        for same in (None, "same"):
            for layout in ("contiguous", "transposed"):
                t = torch.zeros(2, 3, dtype=dt).requires_grad_()
                if layout == "transposed":
                    t = t.detach().t().requires_grad_()
                a = torch.asarray(t, copy=copy, dtype=dt if same else None)
                print(
                    torch.__version__,
                    dt,
                    f"copy={copy!s:5}",
                    f"dtype={same!s:4}",
                    f"{layout:10}",
                    "same object:",
                    a is t,
                    "t.requires_grad:",
                    t.requires_grad,
                    "a.requires_grad:",
                    a.requires_grad,
                )

# to a dtype that cannot require grad: 2.13 raises, 2.1 returns a plain copy
t = torch.zeros(2, dtype=torch.float16).requires_grad_()
try:
    a = torch.asarray(t, dtype=torch.bool)
    print(torch.__version__, "asarray(t, dtype=bool): no error; requires_grad:", a.requires_grad)
except RuntimeError as err:
    print(torch.__version__, "asarray(t, dtype=bool): RuntimeError:", str(err)[:80])

# a non-leaf that requires grad: 2.13 returns it as itself, 2.1 a detached alias
leaf = torch.zeros(4, 2).requires_grad_()
v = leaf[::2]
a = torch.asarray(v)
print(
    torch.__version__,
    "asarray(non-leaf view): same object:",
    a is v,
    "requires_grad:",
    a.requires_grad,
)
