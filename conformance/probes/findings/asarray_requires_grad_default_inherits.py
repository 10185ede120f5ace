"""torch.asarray(t) of a tensor that requires grad: keeps requires_grad on torch 2.13,
cleared it (on t itself) up to 2.9.1 (behaviour change between releases).

t = torch.zeros(2, requires_grad=True); a = torch.asarray(t). asarray returns t itself
here. With the old default requires_grad=False, torch 2.1.2-2.9.1 returned t with its own
flag cleared (issue #170819: a = asarray(q) makes q stop requiring grad). PR #170897
('Change requires_grad to Optional[bool] in torch.asarray', fixes #170819) made the
default follow the input tensor: on 2.13 t and a (the same object) keep requires_grad,
with a once-per-process UserWarning. The current docstring says "the returned tensor will,
by default, have the same requires_grad as obj (defaulting to False)"; older ones said it
would "by default, not require a gradient". The first release carrying the change is taken
to be 2.12 (unconfirmed: 2.10-2.12 were not run).

Direction (release change): REPRODUCES when the installed torch shows the newer
behaviour - asarray(t) keeps t's requires_grad (so on 2.13); FIXED when it shows the old
default (the result, and t itself, no longer require grad).

Claims: construct.asarray-requires-grad-default-inherits (new default),
construct.asarray-requires-grad-default-warns-once, sequences.asarray (recorded
deviations for torch < 2.12). Related probe: conformance/probes/asarray_keeps_requires_grad.py.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    t = torch.zeros(2, requires_grad=True)
    a = torch.asarray(t)
    print(
        f"{torch.__version__}: a = torch.asarray(t): a is t: {a is t}, "
        f"a.requires_grad: {a.requires_grad}, t.requires_grad: {t.requires_grad}"
    )
    if a.requires_grad and t.requires_grad:
        print(
            "REPRODUCES: torch.asarray(t) of a leaf requiring grad keeps requires_grad "
            f"(a is t: {a is t}; the new default of PR #170897; <= 2.9.1 cleared it on t itself)"
        )
        return 1
    print(
        "FIXED: torch.asarray(t) of a leaf requiring grad gives a.requires_grad "
        f"{a.requires_grad}, t.requires_grad {t.requires_grad} (the old requires_grad=False default)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
