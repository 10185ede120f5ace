# Does t1.requires_grad_() reach another name of t1 returned by a compiled
# function? (eager: t2 is t1, or a view of it, and requires grad)
import torch

print(torch.__version__)


def same_object(x):
    t1 = x.clone()
    t2 = t1.sub_(x)  # t2 is t1
    t1.requires_grad_()
    return t2


def view_of_it(x):
    t1 = x.clone()
    t2 = t1.view(-1)
    t1.requires_grad_()
    return t2


def own_name(x):
    t1 = x.clone()
    t1.sub_(x)
    t1.requires_grad_()
    return t1


for fn in (same_object, view_of_it, own_name):
    print(fn.__name__, "eager", "requires_grad:", fn(torch.arange(1.0, 5.0)).requires_grad)
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        out = torch.compile(fn, backend=backend)(torch.arange(1.0, 5.0))
        print(fn.__name__, backend, "requires_grad:", out.requires_grad)
