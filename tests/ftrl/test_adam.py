"Chapter 12: Adam as discounted FTRL, the ratio bound, and O2NCAdam."

import math

import pytest
import torch

from icml26_lit.ftrl.adam import (
    FTRLAdam,
    O2NCAdam,
    adam_ftrl_step,
    adam_ratio_bound,
    adam_ratio_trace,
    adversarial_gradients,
    ftrl_objective,
)


def _train(opt_cls, seed, steps=20, **kw):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 6), torch.nn.ReLU(), torch.nn.Linear(6, 1)
    ).double()
    X, y = torch.randn(16, 3, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64)
    opt = opt_cls(net.parameters(), **kw)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        (net(X) - y).abs().mean().backward()
        opt.step()
        traj.append(torch.cat([p.detach().flatten() for p in net.parameters()]))
    return torch.stack(traj)


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.0, 0.9), (0.99, 0.9)])
def test_ftrl_form_reproduces_torch_adam(fresh_seed, betas):
    seed = fresh_seed % 10000
    a = _train(FTRLAdam, seed, lr=0.02, betas=betas, eps=1e-8)
    b = _train(torch.optim.Adam, seed, lr=0.02, betas=betas, eps=1e-8)
    torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11)


def test_closed_form_is_the_argmin(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    G = torch.randn(9, 4, generator=g, dtype=torch.float64)
    D = adam_ftrl_step(G, 0.05, (0.8, 0.95))
    f0 = ftrl_objective(D, G, 0.05, (0.8, 0.95))
    for _ in range(20):
        assert (
            ftrl_objective(
                D + 1e-3 * torch.randn(4, generator=g, dtype=torch.float64), G, 0.05, (0.8, 0.95)
            )
            > f0
        )


def test_ratio_bound_random_and_adversarial(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    for b1, b2 in [(0.9, 0.999), (0.5, 0.9), (0.0, 0.99), (0.94, 0.9)]:
        bound = adam_ratio_bound(b1, b2)
        G = torch.randn(300, 50, generator=g, dtype=torch.float64)
        G = G * torch.exp(3 * torch.randn(300, 1, generator=g, dtype=torch.float64))  # bursts
        assert adam_ratio_trace(G, b1, b2).max() <= bound * (1 + 1e-12)
        adv = adam_ratio_trace(adversarial_gradients(b1, b2, 600), b1, b2)
        assert adv.max() <= bound * (1 + 1e-12)
        assert adv[-1] > 0.99 * bound  # tight


def test_closed_form_value():
    assert math.isclose(adam_ratio_bound(0.9, 0.999), 0.1 / math.sqrt(0.001 * (1 - 0.81 / 0.999)))
    assert math.isclose(adam_ratio_bound(0.0, 0.75), 2.0)


@pytest.mark.parametrize("b1,b2", [(0.95, 0.8), (0.9, 0.81), (0.99, 0.9)])
def test_divergent_sequence_beyond_the_bound(b1, b2):
    with pytest.raises(ValueError, match="no finite bound"):
        adam_ratio_bound(b1, b2)
    r = adam_ratio_trace(adversarial_gradients(b1, b2, 800), b1, b2)
    # at beta1 = sqrt(beta2) the ratio grows like sqrt(t) (800/100 -> factor sqrt(8) = 2.83);
    # beyond it, geometrically: either way it has no finite bound
    assert r[-1] > 2.5 * r[99] and bool((r[1:] >= r[:-1] - 1e-12).all())


@pytest.mark.parametrize("betas", [(1.0, 0.9), (0.9, 1.0), (-0.1, 0.9)])
def test_bad_betas(betas):
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\)"):
        O2NCAdam([torch.nn.Parameter(torch.zeros(2))], betas=betas)


def test_o2nc_bookkeeping(fresh_seed):
    c = torch.tensor([1.0, -2.0, 0.5, 0.0], dtype=torch.float64)
    w = torch.nn.Parameter(torch.zeros(4, dtype=torch.float64))
    opt = O2NCAdam(
        [w],
        lr=0.1,
        betas=(0.9, 0.99),
        clip=1.5,
        generator=torch.Generator().manual_seed(fresh_seed),
    )
    m = v = x = torch.zeros(4, dtype=torch.float64)
    ws, ss = [], []
    for _ in range(6):
        ws.append(w.detach().clone())
        opt.zero_grad()
        (c * w).sum().backward()
        opt.step()
        m = 0.9 * m + 0.1 * c
        v = 0.99 * v + 0.01 * c * c
        r = torch.where(v > 0, m / v.sqrt(), torch.zeros_like(m)).clamp(-1.5, 1.5)
        delta = -0.1 * r
        torch.testing.assert_close(w.detach(), x + opt.last_s * delta)
        x = x + delta
        torch.testing.assert_close(opt.state[w]["x"], x)
        ss.append(opt.last_s)
    assert len(set(ss)) == 6 and all(0 <= s <= 1 for s in ss)
    with opt.averaged():
        torch.testing.assert_close(w.detach(), torch.stack(ws).mean(0))
    torch.testing.assert_close(w.detach(), x - delta + opt.last_s * delta)


def test_o2nc_same_generator_same_run():
    def run():
        torch.manual_seed(0)
        net = torch.nn.Linear(3, 1)
        opt = O2NCAdam(net.parameters(), lr=0.01, generator=torch.Generator().manual_seed(5))
        for _ in range(5):
            opt.zero_grad()
            net(torch.ones(2, 3)).abs().sum().backward()
            opt.step()
        return net.weight.detach().clone()

    torch.testing.assert_close(run(), run())


def test_o2nc_clip_free_ratio_within_bound_on_training():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = O2NCAdam(net.parameters(), lr=1e-2, betas=(0.9, 0.99), track_ratio=True)
    for _ in range(50):
        X = torch.randn(8, 4)
        opt.zero_grad()
        net(X).abs().mean().backward()
        opt.step()
    assert 0 < opt.max_ratio <= adam_ratio_bound(0.9, 0.99)


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("clip", [None, 1.0])
def test_nan_gradient_propagates_like_torch_adam(fresh_seed, backend, clip):
    # a NaN gradient must make exactly the affected parameters NaN, as torch.optim.Adam does,
    # instead of leaving them frozen with NaN moments
    g = torch.Generator().manual_seed(fresh_seed)
    init = torch.randn(2, 7, generator=g)
    grad = torch.randn(2, 7, generator=g)
    grad[0, 3] = float("nan")
    grad[1, 5] = float("inf")  # inf / sqrt(inf) = NaN in both optimizers
    grad[1, 0] = 0.0  # a zero gradient is not NaN: that coordinate stays where it is
    ours, ref = torch.nn.Parameter(init.clone()), torch.nn.Parameter(init.clone())
    opt = O2NCAdam(
        [ours],
        lr=0.1,
        clip=clip,
        backend=backend,
        track_ratio=True,
        generator=torch.Generator().manual_seed(fresh_seed),
    )
    ours.grad, ref.grad = grad.clone(), grad.clone()
    opt.step()
    torch.optim.Adam([ref], lr=0.1).step()
    assert torch.equal(torch.isnan(ours.detach()), torch.isnan(ref.detach()))
    assert int(torch.isnan(ours).sum()) == 2 and ours[1, 0] == init[1, 0]
    assert math.isnan(opt.max_ratio)
    with opt.averaged():  # the average holds w_1 = x_0 after one step, then NaN
        assert torch.isfinite(ours).all()
    ours.grad = torch.zeros_like(grad)
    opt.step()
    assert torch.isnan(opt.state[ours]["avg"][0, 3]) and torch.isnan(ours[0, 3])


def _twin_convs(seed, dtype):
    torch.manual_seed(seed)
    conv = torch.nn.Conv2d(3, 5, 3).to(dtype)
    twin = torch.nn.Conv2d(3, 5, 3).to(dtype)
    twin.load_state_dict(conv.state_dict())
    return conv.to(memory_format=torch.channels_last), twin


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_channels_last_conv_matches_contiguous_twin(fresh_seed, backend):
    # the update is elementwise, so a channels_last weight and its contiguous twin fed the same
    # gradients must agree bit for bit, and the layout must survive the steps
    conv, twin = _twin_convs(fresh_seed % 10000, torch.float64)
    assert not conv.weight.is_contiguous()
    opts = [
        O2NCAdam(
            n.parameters(),
            lr=0.05,
            betas=(0.9, 0.99),
            clip=2.0,
            ema=0.5,
            backend=backend,
            generator=torch.Generator().manual_seed(fresh_seed),
        )
        for n in (conv, twin)
    ]
    g = torch.Generator().manual_seed(fresh_seed)
    for _ in range(4):
        for p, q in zip(conv.parameters(), twin.parameters()):
            q.grad = torch.randn(q.shape, generator=g, dtype=q.dtype)
            p.grad = (
                q.grad.contiguous(memory_format=torch.channels_last)
                if p.dim() == 4
                else q.grad.clone()
            )
        for o in opts:
            o.step()
        assert all(torch.equal(p, q) for p, q in zip(conv.parameters(), twin.parameters()))
    assert conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert all(
        t.is_contiguous()
        for k, t in opts[0].state[conv.weight].items()
        if isinstance(t, torch.Tensor)
    )
    with opts[0].averaged(), opts[1].averaged():
        assert all(torch.equal(p, q) for p, q in zip(conv.parameters(), twin.parameters()))
    assert all(torch.equal(p, q) for p, q in zip(conv.parameters(), twin.parameters()))


def test_channels_last_conv_trains():
    # a real forward/backward through a channels_last Conv2d (autograd picks the grad layout)
    conv, _ = _twin_convs(0, torch.float32)
    x = torch.randn(4, 3, 8, 8).contiguous(memory_format=torch.channels_last)
    opt = O2NCAdam(conv.parameters(), lr=1e-2)
    before = conv.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        conv(x).abs().mean().backward()
        opt.step()
    assert torch.isfinite(conv.weight).all() and not torch.equal(conv.weight, before)
    assert conv.weight.is_contiguous(memory_format=torch.channels_last)
