# How torch.compile (aot_eager, inductor; CPU) handles the programs whose 2.1
# and 2.2 behaviour the expectations record for torch >=2.1,<2.3, beside eager
# (issue 28): a 0-d float32 add_ and its returned value, an in-place write into
# an expanded argument, no_grad writes into a leaf that requires grad (alone,
# and through a view), pytorch#191449's resize_ of a view of an intermediate,
# and pytorch#198095's read of an aliased argument after a write.
import torch

print(torch.__version__)


def show(name, fn, make, backends=("aot_eager", "inductor")):
    def one(label, f):
        args = make()
        before = [a._version for a in args]
        try:
            out = f(*args)
        except Exception as e:  # noqa: BLE001 - the probe prints whatever is raised
            lines = [x for x in str(e).splitlines() if x.strip()]
            print(f"{name} {label}: raises {type(e).__name__}: {' '.join(lines[:2])[:170]}")
            return
        outs = out if isinstance(out, tuple) else (out,)
        bumped = [a._version > b for a, b in zip(args, before, strict=True)]
        vals = [a.detach().flatten()[:4].tolist() for a in args]
        o = outs[0]
        print(
            f"{name} {label}: args {vals}, version bumped {bumped}, "
            f"out0 {o.detach().flatten()[:6].tolist()} shape {tuple(o.shape)} "
            f"offset {o.storage_offset()}, out1 is out0: {len(outs) > 1 and outs[1] is outs[0]}"
        )

    one("eager", fn)
    for backend in backends:
        torch._dynamo.reset()
        one(backend, torch.compile(fn, backend=backend))


def zero_dim_add(x):
    x.add_(5)
    return x * 2


show("0-d float32 add_", zero_dim_add, lambda: (torch.tensor(1.0),))


def write_expanded(x):
    return x.add_(1) * 2


show("write into expanded", write_expanded, lambda: (torch.arange(3.0).expand(2, 3),))


def sub_alias(x, y):
    with torch.no_grad():
        x.sub_(y)
    return x + 0


def leaf_alone():
    return (torch.arange(1.0, 5.0).requires_grad_(), torch.arange(1.0, 5.0))


show("no_grad write into a grad leaf", sub_alias, leaf_alone)


def write_then_read(x):
    with torch.no_grad():
        x[...] = 0
    return x + 1


def view_of_leaf():
    return (torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_().t(),)


show("no_grad write into a view of a grad leaf", write_then_read, view_of_leaf)


def resize(x):
    base = x + 1
    alias = base.view(-1)
    alias.resize_(12)
    return base + 1


show("pytorch#191449 resize", resize, lambda: (torch.zeros(1),))


def select(t0, ta):
    t0.add_(100)
    return ta[0]


def aliased():
    t0 = torch.arange(24, dtype=torch.float64).reshape(4, 6).clone()
    return (t0, t0[1:])


show("pytorch#198095 select", select, aliased)
