"""Writes into t.expand(2, 2) (a stride-0 dimension: elements share memory)
by each in-place form: which raise the internal-overlap RuntimeError?"""

import torch

forms = {
    "e[0] = 1": lambda e: e.__setitem__(0, 1),
    "e[0] = tensor": lambda e: e.__setitem__(0, torch.ones((), dtype=e.dtype)),
    "e.add_(1)": lambda e: e.add_(1),
    "e.mul_(2)": lambda e: e.mul_(2),
    "e.copy_(ones)": lambda e: e.copy_(torch.ones(2, 2, dtype=e.dtype)),
    "e.fill_(1)": lambda e: e.fill_(1),
    "e.zero_()": lambda e: e.zero_(),
    "e[0].fill_(1)": lambda e: e[0].fill_(1),
}
for name, f in forms.items():
    e = torch.zeros(1).expand(2, 2)
    try:
        f(e)
        print(torch.__version__, f"{name:16}", "no error")
    except RuntimeError as err:
        print(torch.__version__, f"{name:16}", "RuntimeError:", str(err).splitlines()[0][:70])
