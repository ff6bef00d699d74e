"""Chapter 05: the EMFormer model, the composite loss, metrics, fine-tuning and the experiment."""

import math

import pytest
import torch

from icml26_lit.emformer import (
    EMFormer,
    acc,
    composite_loss,
    finetune_emformer,
    forecast,
    latitude_weights,
    weighted_rmse,
)
from icml26_lit.emformer.experiments import CONFIG, smoke_step


def _tiny(backend="torch", seed=1):
    return EMFormer(
        3,
        (8, 16),
        patch=2,
        dim=16,
        heads=2,
        depth=(1, (1, 2, 1), 1),
        window=(2, 2),
        generator=torch.Generator().manual_seed(seed),
        backend=backend,
    )


def test_hourglass_token_counts():
    m = EMFormer(3, (32, 64), patch=4, dim=64, heads=4, depth=(1, (1, 4, 1), 1), window=(4, 4))
    assert m.token_grid == (8, 16)  # 128 tokens
    assert m.hourglass.inner_grid == (8, 8)  # 64
    assert m.hourglass.inner.inner_grid == (8, 4)  # 32 valley tokens
    kinds = [b.kind for b in m.hourglass.inner.inner.blocks]
    assert kinds == ["conv-window", "conv-global"] * 2 and m.n_global == 2


def test_empty_cache_is_plain_forward():
    m = _tiny()
    x = torch.randn(2, 3, 8, 16, generator=torch.Generator().manual_seed(0))
    y, kv = m(x, return_kv=True)
    assert torch.equal(m(x, cache=[[] for _ in range(m.n_global)]), y)
    assert not torch.allclose(m(x, cache=[[c] for c in kv]), y)


def test_triton_backend_equals_torch_forward_and_backward():
    x = torch.randn(2, 3, 8, 16, generator=torch.Generator().manual_seed(0))
    outs = []
    for backend in ("torch", "triton"):
        m = _tiny(backend)
        y = m(x)
        y.square().mean().backward()
        outs.append((y.detach(), [p.grad.clone() for p in m.parameters() if p.grad is not None]))
    # fp32: the kernel sums the same 25 products in another order; errors grow through 8 layers
    torch.testing.assert_close(outs[0][0], outs[1][0], rtol=1e-4, atol=1e-5)
    for a, b in zip(outs[0][1], outs[1][1]):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-5)


def test_phase_gradient_formula():
    g = torch.Generator().manual_seed(0)
    p, t = (torch.randn(2, 3, 4, 5, generator=g, dtype=torch.float64) for _ in range(2))
    for w0 in (-1.0, 0.2, 1.3):
        w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
        loss, parts = composite_loss(p, t, w, torch.randn(3, generator=g, dtype=torch.float64))
        (gw,) = torch.autograd.grad(loss, w)
        want = 0.5 * math.cos(w0) * float(parts["wrmse"] - parts["gen"])
        assert abs(float(gw) - want) < 1e-12  # fp64 of O(1) terms
    w = torch.tensor(-math.pi / 2, dtype=torch.float64, requires_grad=True)
    (gw,) = torch.autograd.grad(composite_loss(p, t, w, torch.zeros(3, dtype=torch.float64))[0], w)
    assert abs(float(gw)) < 1e-15  # cos(-pi/2) = 6e-17: the released start is flat


def test_uncertainty_term_minimal_at_log_mse():
    g = torch.Generator().manual_seed(1)
    p, t = (torch.randn(2, 3, 4, 5, generator=g, dtype=torch.float64) for _ in range(2))
    mse = ((p - t) ** 2).mean(dim=(0, 2, 3))
    s = mse.log().clone().requires_grad_()
    w = torch.tensor(-math.pi / 2, dtype=torch.float64)
    (gs,) = torch.autograd.grad(composite_loss(p, t, w, s)[0], s)
    assert float(gs.abs().max()) < 1e-12
    for d in (-0.1, 0.1):
        assert float(composite_loss(p, t, w, s.detach() + d)[0]) > float(
            composite_loss(p, t, w, s.detach())[0]
        )


def test_rmse_and_acc_by_hand():
    z = torch.zeros(2, 3, 4, 5)
    torch.testing.assert_close(weighted_rmse(z - 1.5, z), torch.full((3,), 1.5))
    lat = torch.tensor([-45.0, 0.0, 45.0, 60.0])
    torch.testing.assert_close(
        weighted_rmse(z + 2.0, z, lat), torch.full((3,), 2.0)
    )  # weights mean 1
    g = torch.Generator().manual_seed(0)
    y, clim = torch.randn(2, 3, 4, 5, generator=g), torch.randn(3, 4, 5, generator=g)
    torch.testing.assert_close(acc(y, y, clim), torch.ones(3))
    torch.testing.assert_close(acc(2 * clim - y, y, clim), -torch.ones(3))
    c = torch.cos(torch.deg2rad(lat.double()))
    torch.testing.assert_close(latitude_weights(lat).double(), c / c.mean(), rtol=1e-6, atol=0)


def test_bad_input():
    with pytest.raises(ValueError, match="not divisible by patch"):
        EMFormer(3, (30, 64), patch=4)
    with pytest.raises(ValueError, match="divisible by 2\\*\\*2"):
        EMFormer(3, (32, 40), patch=4)
    with pytest.raises(ValueError, match="lat_deg must lie in"):
        latitude_weights(torch.tensor([-91.0]))
    with pytest.raises(ValueError, match="zero anomaly"):
        y = torch.randn(1, 3, 4, 5)
        acc(y, y, y[0])
    m = _tiny()
    train = torch.randn(2, 5, 3, 8, 16)
    with pytest.raises(ValueError, match="K must be an int >= 1"):
        finetune_emformer(m, train, "accumulative", K=0)
    with pytest.raises(ValueError, match="mode must be one of"):
        finetune_emformer(m, train, "teacher-forcing")
    with pytest.raises(ValueError, match="x contains NaN"):
        m(torch.full((1, 3, 8, 16), float("nan")))
    with pytest.raises(ValueError, match="leads must be"):
        forecast(m, train[:, 0], [0])


def test_finetune_modes_count_updates_and_seed():
    train = torch.randn(3, 6, 3, 8, 16, generator=torch.Generator().manual_seed(0))
    runs = []
    for _ in range(2):
        m = _tiny()
        h = finetune_emformer(
            m,
            train,
            "accumulative",
            K=3,
            rollouts=2,
            rollout_len=3,
            batch=2,
            generator=torch.Generator().manual_seed(5),
        )
        runs.append([r["loss"] for r in h])
    assert runs[0] == runs[1] and len(runs[0]) == 6  # same seed, same numbers


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_smoke_step(scale):
    smoke_step(CONFIG.smoke(scale))
