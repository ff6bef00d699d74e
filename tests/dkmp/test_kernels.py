"""star_message: Triton (interpreter, conftest sets TRITON_INTERPRET=1) vs the reference."""

import math

import pytest
import torch

from icml26_lit.core import HAS_TRITON, check_kernel
from icml26_lit.dkmp.kernels import star_message, star_message_reference

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def _inputs(size, dtype, g, lo=10.0, hi=20.0):
    n, h, e, k, f = size
    pos = (40 * torch.rand(n, 3, generator=g, dtype=torch.float64)).to(dtype)
    hub_pos = (40 * torch.rand(h, 3, generator=g, dtype=torch.float64)).to(dtype)
    hub_feat = torch.randn(h, f, generator=g, dtype=torch.float64).to(dtype)
    src = torch.randint(0, h, (e,), generator=g)
    dst = torch.randint(0, max(n // 2, 1), (e,), generator=g)  # atoms above n/2: empty rows
    mu = torch.linspace(lo - 1, hi, k, dtype=dtype)
    weight = (torch.randn(k, f, generator=g, dtype=torch.float64) / math.sqrt(k)).to(dtype)
    gamma = 0.5 / float(mu[1] - mu[0]) ** 2 if k > 1 else 1.0
    par = torch.tensor([gamma, lo, hi, 1.0], dtype=dtype)
    return pos, hub_pos, hub_feat, torch.stack([src, dst]), mu, weight, par


def _triton(pos, hub_pos, hub_feat, edge, mu, weight, par):
    g, lo, hi, w = (float(v) for v in par)
    return star_message(pos, hub_pos, hub_feat, edge, mu, weight, g, lo, hi, w, backend="triton")


def test_star_message_matches_reference(fresh_seed):
    # odd sizes (not block multiples), one edge, no edges, K and F not powers of two, empty rows;
    # default tolerances: fp32 1e-5/1e-4 for sums of ~10 products of O(1) terms
    check_kernel(
        _triton,
        star_message_reference,
        _inputs,
        sizes=[(7, 5, 30, 16, 32), (1, 1, 1, 3, 5), (13, 9, 0, 16, 32), (20, 11, 97, 7, 17)],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
    )


def test_star_message_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    pos, hub_pos, hub_feat, edge, mu, weight, par = _inputs((6, 4, 40, 5, 3), torch.float64, g)
    # shell 0..30 A: most random pairs in a 40 A box get a nonzero window; a small ramp region
    gamma = float(par[0])

    def f(p, hp, hf, w):
        return star_message(p, hp, hf, edge, mu, w, gamma, 0.0, 30.0, 2.0, backend="triton")

    xs = [t.clone().requires_grad_() for t in (pos, hub_pos, hub_feat, weight)]
    assert torch.autograd.gradcheck(f, xs, eps=1e-6, atol=1e-6), f"seed={fresh_seed}"
    # the force-loss path (create_graph=True): second derivatives equal the reference's
    # hubs move with the atoms (centroids) and hub features come from parameters, as in DKMP:
    # the backward must not count the pos -> hub_pos path twice
    mix = torch.randn(3, 3, generator=g, dtype=torch.float64)
    grads = []
    for backend in ("triton", "torch"):
        p1, w1, a1 = (t.clone().requires_grad_() for t in (pos, weight, mix))
        hp, hf = 0.5 * hub_pos + 0.5 * p1[:4], hub_feat @ a1
        out = star_message(p1, hp, hf, edge, mu, w1, gamma, 0.0, 30.0, 2.0, backend=backend)
        (gp,) = torch.autograd.grad(torch.tanh(out).sum(), p1, create_graph=True)
        grads.append((gp.detach(), *torch.autograd.grad(gp.pow(2).sum(), [w1, a1])))
    for a, b in zip(*grads):  # float64: the same sums in another order, ~1e-15 relative
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)


def test_star_message_bad_input():
    g = torch.Generator().manual_seed(0)
    pos, hub_pos, hub_feat, edge, mu, weight, par = _inputs((5, 3, 8, 4, 6), torch.float32, g)
    args = (pos, hub_pos, hub_feat, edge, mu, weight)
    with pytest.raises(ValueError, match="backend"):
        star_message(*args, 1.0, 10.0, 20.0, backend="cuda")
    with pytest.raises(ValueError, match="pos"):
        star_message(pos[:, :2], *args[1:], 1.0, 10.0, 20.0)
    bad = pos.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="pos"):
        star_message(bad, *args[1:], 1.0, 10.0, 20.0)
    with pytest.raises(ValueError, match="edge_index"):
        star_message(*args[:3], edge + 50, *args[4:], 1.0, 10.0, 20.0)
    with pytest.raises(ValueError, match="weight"):
        star_message(*args[:5], weight[:2], 1.0, 10.0, 20.0)
    with pytest.raises(ValueError, match="r_inner"):
        star_message(*args, 1.0, 30.0, 20.0)
    with pytest.raises(ValueError, match="width"):
        star_message(*args, 1.0, 10.0, 20.0, width=0.0)


def test_auto_keeps_every_gradient_on_the_reference(monkeypatch, fresh_seed):
    # auto on a GPU: the Triton forward only where no gradient is needed; with one needed (forces,
    # create_graph training) the reference runs under autograd, so no Triton backward is relied on
    import icml26_lit.dkmp.kernels as K

    calls = []

    def fake_triton(pos, hub_pos, hub_feat, edge, mu, weight, par):  # the kernel's argument order
        calls.append(1)
        return star_message_reference(pos, hub_pos, hub_feat, edge, mu, weight, par)

    monkeypatch.setattr(K, "resolve_backend", lambda backend, *t: "triton")  # as on CUDA
    monkeypatch.setattr(K, "_star_message_triton", fake_triton)
    g = torch.Generator().manual_seed(fresh_seed)
    pos, hub_pos, hub_feat, edge, mu, weight, par = _inputs((9, 6, 40, 5, 4), torch.float64, g)
    gm, lo, hi, w = (float(v) for v in par)
    args = (edge, mu, weight, gm, lo, hi, w)
    out = K.star_message(pos, hub_pos, hub_feat, *args)  # no gradient needed: the kernel
    assert calls == [1] and out.grad_fn is None
    p = pos.clone().requires_grad_()
    out = K.star_message(p, hub_pos, hub_feat, *args)  # forces: the reference under autograd
    assert calls == [1] and "StarMessageFunction" not in type(out.grad_fn).__name__
    (gp,) = torch.autograd.grad(out.pow(2).sum(), p, create_graph=True)
    assert gp.requires_grad  # twice differentiable, as force training needs
    out = K.star_message(p, hub_pos, hub_feat, *args, backend="triton")  # explicit: the kernel
    assert calls == [1, 1] and "StarMessageFunction" in type(out.grad_fn).__name__
    with torch.no_grad():  # no gradient recorded: the kernel again
        K.star_message(p, hub_pos, hub_feat, *args)
    assert calls == [1, 1, 1]
