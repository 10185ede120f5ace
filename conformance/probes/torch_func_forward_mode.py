"""Forward-mode torch.func transforms (jvp, jacfwd, hessian) beside reverse mode:

1. an overlapping (expanded, stride-0) primal: accepted or refused, and with
   which error?
2. the dtype of the tangent output / Jacobian of v * 2.0 (a Python float) for
   a 0-d float32 primal, a 1-d one, and through torch.autograd.forward_ad
   directly (pytorch#90065)."""

import torch
import torch.autograd.forward_ad as fwAD
import torch.func as F

v = torch.__version__


def show(name, f):
    try:
        out = f()
        print(v, f"{name:42}", "ok", out)
    except Exception as err:  # the type and message are what this probe reports
        print(v, f"{name:42}", f"{type(err).__name__}:", str(err).splitlines()[0])


x = torch.tensor([[0.5, -1.0, 2.0]]).expand(2, 3)  # stride (0, 1)
t = torch.ones(2, 3)
show("jvp, expanded primal", lambda: F.jvp(torch.sin, (x,), (t,))[1].shape)
show("jacfwd, expanded input", lambda: F.jacfwd(torch.sin)(x).shape)
show("hessian, expanded input", lambda: F.hessian(lambda a: a.sin().sum())(x).shape)
show("jacrev, expanded input", lambda: F.jacrev(torch.sin)(x).shape)
show("grad, expanded input", lambda: F.grad(lambda a: a.sin().sum())(x).shape)
show("vjp, expanded primal", lambda: F.vjp(torch.sin, x)[1](t)[0].shape)
show("jvp, expanded tangent", lambda: F.jvp(torch.sin, (t,), (x,))[1].shape)


def double(a):
    return a * 2.0


for shape in ((), (2,)):
    p = torch.full(shape, 0.5)
    show(f"jvp a * 2.0, {len(shape)}-d float32: out, tangent",
         lambda p=p: [r.dtype for r in F.jvp(double, (p,), (torch.ones_like(p),))])  # fmt: skip
    show(f"jacfwd a * 2.0, {len(shape)}-d float32", lambda p=p: F.jacfwd(double)(p).dtype)
    show(f"jacrev a * 2.0, {len(shape)}-d float32", lambda p=p: F.jacrev(double)(p).dtype)
with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor(0.5), torch.tensor(1.0))
    show("forward_ad a * 2.0, 0-d float32", lambda: fwAD.unpack_dual(double(d)).tangent.dtype)
