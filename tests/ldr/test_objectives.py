"Dispersion objectives (Chapter 09): zero at the target, VarGrad identity, closed forms, bad input."

import math

import pytest
import torch

from icml26_lit.flows import CouplingFlow
from icml26_lit.ldr import (
    DoubleWell2D,
    ReplayBuffer,
    energy_slope,
    evaluate_flow,
    fit,
    log_dispersion_loss,
    nll_loss,
    temperature_weights,
)


def _gaussian_energy(x):
    return 0.5 * (x**2).sum(1)


@pytest.mark.parametrize("kind", ["var", "mad", "huber"])
def test_loss_is_zero_at_the_target_on_any_reference(fresh_seed, kind):
    g = torch.Generator().manual_seed(fresh_seed)
    target = DoubleWell2D(3.0)
    x = 3 * torch.randn(200, 2, generator=g, dtype=torch.float64)  # off-policy reference
    u = target.energy(x)
    log_p = -u - target.log_Z()
    assert float(log_dispersion_loss(log_p, u, kind)) < 1e-12
    c = torch.tensor(-target.log_Z(), dtype=torch.float64)
    assert float(log_dispersion_loss(log_p, u, kind, center=c)) < 1e-12
    # any non-constant log-ratio is penalised
    assert float(log_dispersion_loss(log_p + 0.1 * x[:, 0], u, kind)) > 0


def test_dispersion_closed_forms(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    lq, u = (
        torch.randn(31, generator=g, dtype=torch.float64),
        3 * torch.randn(31, generator=g, dtype=torch.float64),
    )
    d = lq + u
    torch.testing.assert_close(log_dispersion_loss(lq, u, "var"), d.var(unbiased=False))
    med = d.median()
    torch.testing.assert_close(log_dispersion_loss(lq, u, "mad"), (d - med).abs().mean())
    z = d - d.mean()  # Huber's batch centre is the mean (gradients sum to zero)
    huber = torch.where(z.abs() <= 0.5, 0.5 * z**2, 0.5 * (z.abs() - 0.25)).mean()
    torch.testing.assert_close(log_dispersion_loss(lq, u, "huber", delta=0.5), huber)
    # a very large Huber threshold is half the squared deviation from the centre
    torch.testing.assert_close(log_dispersion_loss(lq, u, "huber", delta=1e6), 0.5 * (z**2).mean())


def test_on_policy_log_variance_gradient_is_twice_the_reverse_kl_score_gradient(fresh_seed):
    torch.manual_seed(fresh_seed)
    flow = CouplingFlow(2, n_layers=2, hidden=8).double()
    for layer in flow.layers:
        torch.nn.init.normal_(layer.net[-1].weight, std=0.4)
    target = DoubleWell2D()
    x = flow.sample(128, torch.Generator().manual_seed(fresh_seed))
    u = target.energy(x)
    params = list(flow.parameters())
    g_lv = torch.autograd.grad(log_dispersion_loss(flow.log_prob(x), u, "var"), params)
    lq = flow.log_prob(x)
    d = (lq + u).detach()
    g_sf = torch.autograd.grad(((d - d.mean()) * lq).mean(), params)
    for a, b in zip(g_lv, g_sf):
        torch.testing.assert_close(a, 2 * b)


def test_log_dispersion_bad_input():
    lq, u = torch.zeros(4), torch.arange(4.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        log_dispersion_loss(lq, u, "kl")
    with pytest.raises(ValueError, match="at least 2"):
        log_dispersion_loss(lq[:1], u[:1])
    with pytest.raises(ValueError, match="energy must have shape"):
        log_dispersion_loss(lq, u[:3])
    with pytest.raises(ValueError, match="2 non-finite"):
        log_dispersion_loss(lq, torch.tensor([0.0, math.inf, math.nan, 1.0]))
    with pytest.raises(ValueError, match="center"):
        log_dispersion_loss(lq, u, center="median")
    with pytest.raises(ValueError, match="log_q contains NaN"):
        log_dispersion_loss(torch.tensor([0.0, math.nan]), u[:2])
    with pytest.warns(UserWarning, match="dropped 1"):
        val = log_dispersion_loss(lq, torch.tensor([0.0, math.inf, 2.0, 4.0]), nonfinite="drop")
    torch.testing.assert_close(val, torch.tensor([0.0, 2.0, 4.0]).var(unbiased=False))
    with pytest.raises(ValueError, match="at least 2"), pytest.warns(UserWarning):
        log_dispersion_loss(lq[:2], torch.tensor([0.0, math.inf]), nonfinite="drop")


def test_learned_center_estimates_log_Z():
    # the identity flow is exact for the Gaussian target: Delta = -log Z everywhere, so c -> -log Z
    torch.manual_seed(0)
    flow = CouplingFlow(2, n_layers=1, hidden=4).double()
    x = torch.randn(64, 2, dtype=torch.float64)
    out = fit(flow, "ldr", x, _gaussian_energy(x), center="learned", steps=150, lr=0.1, batch=64)
    assert abs(out["log_Z_from_center"] - math.log(2 * math.pi)) < 0.02


def test_weights_buffer_nll():
    w = temperature_weights(torch.tensor([0.0, 2.0]), 4.0)
    torch.testing.assert_close(w[1] / w[0], torch.tensor(math.exp(-1.5)))
    torch.testing.assert_close(w.sum(), torch.tensor(2.0))
    torch.testing.assert_close(temperature_weights(torch.tensor([0.0, 2.0]), 1.0), torch.ones(2))
    torch.testing.assert_close(nll_loss(torch.tensor([-1.0, -2.0])), torch.tensor(1.5))
    with pytest.raises(ValueError, match="non-negative"):
        nll_loss(torch.zeros(2), torch.tensor([1.0, -1.0]))
    buf = ReplayBuffer(3)
    buf.add(torch.arange(8.0).reshape(4, 2), torch.arange(4.0))
    assert len(buf) == 3 and buf.u.tolist() == [1.0, 2.0, 3.0]
    xb, ub = buf.sample(10, torch.Generator().manual_seed(0))
    torch.testing.assert_close(xb[:, 0], 2 * ub)  # pairs stay together
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(1)


def test_fit_methods_run_and_reject_bad_input():
    target = DoubleWell2D()
    x = target.sample(32, torch.Generator().manual_seed(0))
    for method in ("nll", "nll+ldr"):
        h = fit(CouplingFlow(2, n_layers=1, hidden=4), method, x, target.energy(x), steps=3)
        assert len(h["loss"]) == 3 and all(math.isfinite(v) for v in h["loss"])
    for method in ("rkl", "rkl+ldr"):
        h = fit(
            CouplingFlow(2, n_layers=1, hidden=4),
            method,
            energy_fn=target.energy,
            steps=3,
            batch=16,
        )
        assert len(h["loss"]) == 3
    with pytest.raises(ValueError, match="method must be one of"):
        fit(CouplingFlow(2), "fkl", x, target.energy(x))
    with pytest.raises(ValueError, match="needs energy_fn"):
        fit(CouplingFlow(2), "rkl")


def test_evaluate_and_slope_on_an_exact_flow():
    flow = CouplingFlow(2, n_layers=1, hidden=4).double()  # identity = N(0, I)

    class Gauss:  # an exactly matched target
        def energy(self, x):
            return _gaussian_energy(x)

        def log_Z(self):
            return math.log(2 * math.pi)

        def mode_weight(self):
            return 0.5

    x = torch.randn(100, 2, dtype=torch.float64)
    ev = evaluate_flow(flow, Gauss(), 256, torch.Generator().manual_seed(0), x_test=x, x_data=x)
    assert abs(ev["ess"] - 1) < 1e-12 and ev["log_Z_error"] < 1e-12
    assert abs(ev["slope"] - 1) < 1e-12
    assert abs(energy_slope(-3 * _gaussian_energy(x), _gaussian_energy(x)) - 3) < 1e-12


@pytest.mark.parametrize("lam", [math.nan, -1.0, math.inf, "1"])
def test_fit_rejects_a_bad_lam_before_touching_the_parameters(lam):
    target = DoubleWell2D()
    x = target.sample(16, torch.Generator().manual_seed(0))
    flow = CouplingFlow(2, n_layers=1, hidden=4)
    before = {k: v.clone() for k, v in flow.state_dict().items()}
    with pytest.raises(ValueError, match="lam must be a non-negative finite number"):
        fit(flow, "nll+ldr", x, target.energy(x), lam=lam, steps=2)
    assert all(torch.equal(before[k], v) for k, v in flow.state_dict().items())


def test_fit_rejects_bad_optimiser_weights_dtype_and_generator():
    target = DoubleWell2D()
    x = target.sample(16, torch.Generator().manual_seed(0))
    u = target.energy(x)
    flow = CouplingFlow(2, n_layers=1, hidden=4)
    for lr in (0.0, -1e-3, math.nan):
        with pytest.raises(ValueError, match="lr must be a positive finite number"):
            fit(flow, "nll", x, u, lr=lr)
    with pytest.raises(ValueError, match="weight_decay must be"):
        fit(flow, "nll", x, u, weight_decay=-0.1)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        fit(flow, "nll", x, u, batch=0)
    with pytest.raises(ValueError, match="weights must have shape"):
        fit(flow, "nll", x, u, weights=torch.ones(15))
    with pytest.raises(TypeError, match="weights must have dtype"):
        fit(flow, "nll", x, u, weights=torch.ones(16, dtype=torch.float64))
    with pytest.raises(ValueError, match="method='ldr' has none"):
        fit(flow, "ldr", x, u, weights=torch.ones(16))
    with pytest.raises(ValueError, match="trains on flow samples"):
        fit(flow, "rkl", energy_fn=target.energy, weights=torch.ones(16))
    with pytest.raises(TypeError, match="x must have dtype"):
        fit(flow, "nll", x.double(), u.double())
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        fit(flow, "nll", x, u, generator=0)
    with pytest.raises(ValueError, match="kind must be one of"):
        fit(flow, "nll+ldr", x, u, kind="std")
    with pytest.raises(TypeError, match="weights must have dtype"):
        nll_loss(torch.zeros(2), torch.ones(2, dtype=torch.float64))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        ReplayBuffer(4).sample(2, generator=3)


def test_weight_decay_shrinks_the_parameters_and_zero_is_plain_adam():
    target = DoubleWell2D()
    x = target.sample(64, torch.Generator().manual_seed(0))
    u = target.energy(x)
    norms = {}
    for wd in (0.0, 0.5):
        torch.manual_seed(3)
        flow = CouplingFlow(2, n_layers=1, hidden=8)
        fit(
            flow,
            "nll",
            x,
            u,
            steps=30,
            lr=1e-2,
            weight_decay=wd,
            generator=torch.Generator().manual_seed(1),
        )
        norms[wd] = sum(float(p.norm()) for p in flow.parameters())
    assert norms[0.5] < norms[0.0]
    # weight_decay=0 must reproduce torch.optim.Adam step for step (the same update, bit for bit)
    torch.manual_seed(3)
    ref = CouplingFlow(2, n_layers=1, hidden=8)
    opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 5)
    g = torch.Generator().manual_seed(1)
    for _ in range(5):
        i = torch.randperm(len(x), generator=g)[:256]
        loss = -ref.log_prob(x[i]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    torch.manual_seed(3)
    flow = CouplingFlow(2, n_layers=1, hidden=8)
    fit(flow, "nll", x, u, steps=5, lr=1e-2, generator=torch.Generator().manual_seed(1))
    for a, b in zip(flow.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("kind", ["var", "mad", "huber"])
def test_batch_centred_gradients_sum_to_zero(kind, fresh_seed):
    # a normalised flow cannot follow a push common to the whole batch: the batch centre makes
    # the per-point gradients sum to zero (for |z| the median, for an odd batch exactly)
    g = torch.Generator().manual_seed(fresh_seed)
    n = 2 * int(torch.randint(5, 60, (1,), generator=g)) + 1
    lq = torch.randn(n, generator=g, dtype=torch.float64).requires_grad_()
    u = 3 * torch.randn(n, generator=g, dtype=torch.float64).abs()
    log_dispersion_loss(lq, u, kind, delta=0.5).backward()
    assert abs(float(lq.grad.sum())) < 1e-12


def test_huber_around_a_fixed_median_would_push_the_whole_batch():
    # the centre rejected for Huber: z = (-0.1, 0, 4.9) around the median 0.1 gives the
    # gradients (-0.1, 0, 0.5) / 3, a net push of 0.4 / 3; the batch mean removes it
    lq = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    u = torch.tensor([0.0, 0.1, 5.0], dtype=torch.float64)
    c = (lq + u).detach().median()
    z = lq + u - c
    torch.where(z.abs() <= 0.5, 0.5 * z**2, 0.5 * (z.abs() - 0.25)).mean().backward()
    assert float(lq.grad.sum()) == pytest.approx(0.4 / 3)
    lq.grad = None
    log_dispersion_loss(lq, u, "huber", delta=0.5).backward()
    assert abs(float(lq.grad.sum())) < 1e-12
