"""t.real and t.imag of a real (non-complex) tensor: is real t itself, and
which exception type does imag raise?"""

import torch

t = torch.ones(2)
print(torch.__version__, "t.real is t:", t.real is t, "| torch.real(t) is t:", torch.real(t) is t)
for name, f in {"t.imag": lambda: t.imag, "torch.imag(t)": lambda: torch.imag(t)}.items():
    try:
        f()
        print(torch.__version__, f"{name:14}", "no error")
    except Exception as err:  # the type is what this probe reports
        print(torch.__version__, f"{name:14}", f"{type(err).__name__}:", str(err).splitlines()[0])
