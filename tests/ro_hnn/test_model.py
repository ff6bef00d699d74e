"""Chapter 03: the RO-HNN model, the latent NODE baseline, the loss, training and metrics."""

import math

import pytest
import torch

from icml26_lit.ro_hnn import PendulumChain
from icml26_lit.ro_hnn.latent_hnn import LatentHNN
from icml26_lit.ro_hnn.model import (
    MLPHNN,
    ROHNN,
    LatentNODE,
    energy_drift,
    make_windows,
    relative_rmse,
    train_model,
    window_loss,
)

F64 = torch.float64


def _data(n=5, n_traj=4, steps=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, p = PendulumChain(n).trajectories(n_traj, steps, generator=g)
    return torch.cat([q, p], -1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rollout_starts_at_the_projection_and_conserves_latent_energy(seed):
    # fixed seeds: a random potential is unbounded below, so some random models send a state
    # off to infinity (the bounded-energy theorem is tested with a confined H in
    # test_latent_hnn.py); these three stay in a bounded region over 200 steps
    g = torch.Generator().manual_seed(seed)
    model = ROHNN([5, 3, 2], generator=g)
    x0 = 0.3 * torch.randn(3, 10, generator=g, dtype=F64)
    xs = model.rollout(x0, 20)
    assert xs.shape == (21, 3, 10)
    # decode(encode(.)) is a projection: encode(x^_0) = encode(x0) to rounding of a few layers
    torch.testing.assert_close(model.encode(xs[0]), model.encode(x0), atol=1e-12, rtol=1e-12)
    with torch.no_grad():
        zs = model.latent_rollout(model.encode(x0), 200, train=False)
    e = model.hnn.hamiltonian(zs[..., :2].flatten(0, 1), zs[..., 2:].flatten(0, 1)).view(201, 3)
    rel = (e - e[0]).abs().amax(0) / e.abs().amax(0)
    # a symplectic second-order step: bounded O(h^2) energy error (a few % of |H~| for a random
    # network at h = 0.05; the states wander, so the error's size changes along the way)
    assert float(rel.max()) < 0.1, (seed, rel)


def test_lazy_field_halves_equal_the_full_field(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    hnn = LatentHNN(3, generator=g)
    q, p = torch.randn(2, 7, 3, generator=g, dtype=F64)
    f = hnn.vector_field(q, p)
    dq, dp = hnn.vector_field(q, p)
    torch.testing.assert_close(f[0], dq, atol=0, rtol=0)
    torch.testing.assert_close(f[1], dp, atol=0, rtol=0)
    assert len(f) == 2
    with pytest.raises(IndexError, match="2 parts"):
        f[2]


def test_training_keeps_biorthogonality_and_lowers_the_loss(fresh_seed):
    w = make_windows(_data(seed=fresh_seed % 1000), 8)
    model = ROHNN([5, 3, 2], generator=torch.Generator().manual_seed(fresh_seed))
    g = torch.Generator().manual_seed(fresh_seed + 1)
    with torch.no_grad():  # the loss on every window: minibatch losses differ by their batches
        before = float(window_loss(model, w)[0])
    for _ in range(15):  # one step at a time, checking Psi^T Phi = I after each
        train_model(model, w, 1, batch=16, lr=3e-3, generator=g)
        for layer in model.autoencoder.layers:
            # the retraction solves for Phi: the residual is rounding of an r x r solve
            err = (layer.psi.T @ layer.phi - torch.eye(layer.psi.shape[1], dtype=F64)).abs().max()
            assert float(err) < 1e-10, (fresh_seed, float(err))
    with torch.no_grad():
        after = float(window_loss(model, w)[0])
    # the first and last minibatch losses compared noisy batches: 5 of 60 seeds failed that way
    # (e.g. 264023058: 1.60 -> 1.76) while the loss on all windows fell (1.52 -> 1.37)
    assert after < before, (fresh_seed, before, after)


def test_loss_gradient_is_first_order_and_matches_finite_differences(fresh_seed):
    w = make_windows(_data(), 4)[:, :6]
    # a random Psi with a near-singular Psi^T Psi gives a large Phi and latent momenta in the
    # hundreds (seen: 210 at seed 1344106143), where 3 fixed-point updates at h = 0.05 diverge
    # before any training; such draws are skipped for the next seed (this test is about the
    # gradient, the fixed point's range is tested in tests/sim)
    seed = fresh_seed
    while True:
        model = ROHNN([5, 3, 2], generator=torch.Generator().manual_seed(seed))
        if float(model.encode(w.flatten(0, 1)).abs().max()) < 20:
            break
        seed += 1
    loss, terms = window_loss(model, w)
    assert set(terms) == {"prediction", "reconstruction_q", "reconstruction_p", "latent"}
    torch.testing.assert_close(loss, sum(terms.values()))
    b = model.hnn.potential_net.linears[0].bias
    (grad,) = torch.autograd.grad(loss, b)
    eps, k = 1e-6, 3
    with torch.no_grad():
        b[k] += eps
        up = window_loss(model, w)[0]
        b[k] -= 2 * eps
        down = window_loss(model, w)[0]
        b[k] += eps
    # central difference: O(eps^2) truncation plus loss rounding / eps ~ 1e-10
    torch.testing.assert_close(grad[k], (up - down) / (2 * eps), atol=1e-7, rtol=1e-6)


def test_node_rollout_is_torchdiffeq_rk4_and_trains():
    node = LatentNODE(10, generator=torch.Generator().manual_seed(0))
    x0 = _data()[0]
    z0 = node.encode(x0)
    zs = node.latent_rollout(z0, 2)
    f, h = (lambda z: node.field(0.0, z)), 0.05
    k1 = f(z0)
    k2 = f(z0 + h * k1 / 3)
    k3 = f(z0 + h * (k2 - k1 / 3))
    k4 = f(z0 + h * (k1 - k2 + k3))
    # Kutta's 3/8 rule written out: the same operations up to reassociation
    torch.testing.assert_close(zs[1], z0 + h * (k1 + 3 * (k2 + k3) + k4) / 8, atol=1e-14, rtol=0)
    losses = train_model(node, make_windows(_data(), 8), 30, 16, 3e-3, torch.Generator())
    assert losses[-1] < losses[0]


def test_metrics_against_hand_values():
    truth = torch.ones(5, 2, 3, dtype=F64)
    pred = truth.clone()
    pred[1:] += 0.5
    assert math.isclose(relative_rmse(pred, truth, 2), 0.5, rel_tol=1e-15)
    pred[3] = float("nan")
    assert relative_rmse(pred, truth, 2) == pytest.approx(0.5)
    assert relative_rmse(pred, truth, 4) == 10.0  # NaN counts as the cap
    states = _data(steps=200)
    assert energy_drift(PendulumChain(5).hamiltonian, states) < 1e-2
    scaled = states * torch.linspace(1, 2, 201, dtype=F64)[:, None, None]
    assert energy_drift(PendulumChain(5).hamiltonian, scaled) > 1.0
    steep = states * torch.linspace(1, 100, 201, dtype=F64)[:, None, None]
    assert energy_drift(PendulumChain(5).hamiltonian, steep) == 10.0  # ~1e4 counts as the cap


def test_windows_cut_every_start():
    traj = torch.arange(11 * 2 * 4, dtype=F64).view(11, 2, 4)
    w = make_windows(traj, 3)
    assert w.shape == (4, 8 * 2, 4)
    torch.testing.assert_close(w[:, 2 * 5 + 1], traj[5:9, 1])


def test_bad_input():
    with pytest.raises(ValueError, match="dims"):
        ROHNN([3, 5, 2])
    with pytest.raises(ValueError, match="alpha"):
        ROHNN([5, 3, 2], alpha=1.0)
    with pytest.raises(ValueError, match="h must lie"):
        ROHNN([5, 3, 2], h=0.5)
    with pytest.raises(ValueError, match="iterations"):
        ROHNN([5, 3, 2], iterations=0)
    model = ROHNN([5, 3, 2])
    with pytest.raises(ValueError, match="h must lie"):
        model.rollout(torch.zeros(2, 10, dtype=F64), 3, h=1.0)
    with pytest.raises(ValueError, match="x0"):
        model.rollout(torch.full((2, 10), float("nan"), dtype=F64), 3)
    with pytest.raises(ValueError, match="n_steps"):
        model.rollout(torch.zeros(2, 10, dtype=F64), 0)
    with pytest.raises(ValueError, match="lr"):
        train_model(model, make_windows(_data(), 4), 1, lr=-1.0)
    with pytest.raises(ValueError, match="autoencoder_lr"):
        train_model(model, make_windows(_data(), 4), 1, autoencoder_lr=2.0)
    with pytest.raises(ValueError, match="ROHNN only"):
        train_model(LatentNODE(10), make_windows(_data(), 4), 1, autoencoder_lr=0.05)
    with pytest.raises(ValueError, match="horizon"):
        make_windows(_data(steps=5), 8)
    with pytest.raises(ValueError, match="h must lie"):
        LatentNODE(10, h=0.0)


def test_autoencoder_lr_sets_the_autoencoders_adam_step(fresh_seed):
    # Adam's first step moves every parameter with a nonzero gradient by lr * g / (|g| + eps),
    # i.e. by lr up to eps / |g|: the autoencoder's biases by autoencoder_lr, the HNN's by lr
    model = ROHNN([5, 3, 2], generator=torch.Generator().manual_seed(fresh_seed))
    hnn0 = [p.detach().clone() for p in model.hnn.parameters()]
    bias0 = [layer.bias.detach().clone() for layer in model.autoencoder.layers]
    w = make_windows(_data(seed=fresh_seed % 1000), 4)
    g = torch.Generator().manual_seed(fresh_seed)
    train_model(model, w, 1, batch=8, lr=1e-4, generator=g, autoencoder_lr=1e-2)
    for layer, b0 in zip(model.autoencoder.layers, bias0):
        step = (layer.bias.detach() - b0).abs()
        torch.testing.assert_close(step, torch.full_like(step, 1e-2), rtol=1e-4, atol=0)
    steps = torch.cat(
        [(p.detach() - p0).abs().flatten() for p, p0 in zip(model.hnn.parameters(), hnn0)]
    )
    assert float(steps.max()) <= 1e-4 * (1 + 1e-6), fresh_seed
    assert float(steps.max()) > 0.9e-4, fresh_seed


def test_errors_name_the_argument_the_caller_passed():
    model = ROHNN([5, 3, 2], generator=torch.Generator().manual_seed(0))
    x32 = torch.zeros(2, 10, dtype=torch.float32)
    # float32 states: the error names x0 (the autoencoder's own argument is called y)
    with pytest.raises(TypeError, match="^x0 must have dtype in \\(float64\\)"):
        model.rollout(x32, 3)
    with pytest.raises(ValueError, match="^x0 must have shape"):
        model.rollout(torch.zeros(2, 12, dtype=F64), 3)
    with pytest.raises(TypeError, match="^x must have dtype"):
        model.encode(x32)
    with pytest.raises(ValueError, match="^z must have shape"):
        model.decode(torch.zeros(2, 10, dtype=F64))
    with pytest.raises(TypeError, match="^x0 must have dtype"):
        LatentNODE(10).rollout(x32, 3)
    with pytest.raises(TypeError, match="^x0 must have dtype"):
        MLPHNN(10).rollout(x32, 3)
    # windows of the wrong width: named windows, with the model's width, before any step
    w = make_windows(_data(n=6), 4)  # 12 wide for a model of 10
    for m in (model, LatentNODE(10), MLPHNN(10)):
        with pytest.raises(ValueError, match="^windows must be 10 wide"):
            train_model(m, w, 1)
        with pytest.raises(ValueError, match="^windows must be 10 wide"):
            window_loss(m, w)
    with pytest.raises(TypeError, match="^windows must have dtype"):
        train_model(model, make_windows(_data(), 4).float(), 1)
    # odd-width states have no [q, p] split
    states = _data(steps=20)
    with pytest.raises(ValueError, match="^states must have an even width"):
        energy_drift(PendulumChain(5).hamiltonian, states[..., :9])


def test_ablation_shares_the_latent_hnn_and_leapfrog(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    abl, model = MLPHNN(10, generator=g), ROHNN([5, 3, 2], generator=g)
    assert [p.shape for p in abl.hnn.parameters()] == [p.shape for p in model.hnn.parameters()]
    # the same HNN weights give the same latent rollout: the leapfrog is RO-HNN's
    abl.hnn.load_state_dict(model.hnn.state_dict())
    z0 = 0.3 * torch.randn(3, 4, generator=g, dtype=F64)
    with torch.no_grad():
        za, zr = abl.latent_rollout(z0, 5, train=False), model.latent_rollout(z0, 5, train=False)
    torch.testing.assert_close(za, zr, atol=0, rtol=0)
    # its MLP encoder is no left inverse of its decoder (RO-HNN's is, to rounding)
    with torch.no_grad():
        assert float((abl.encode(abl.decode(z0)) - z0).abs().max()) > 1e-3, fresh_seed
    w = make_windows(_data(seed=fresh_seed % 1000), 8)
    with torch.no_grad():
        before = float(window_loss(abl, w)[0])
    train_model(abl, w, 15, 16, 3e-3, torch.Generator().manual_seed(fresh_seed))
    with torch.no_grad():
        assert float(window_loss(abl, w)[0]) < before, fresh_seed
    with pytest.raises(ValueError, match="n_full"):
        MLPHNN(1)
    with pytest.raises(ValueError, match="ROHNN only"):
        train_model(abl, w, 1, autoencoder_lr=0.05)


def test_building_a_seeded_model_leaves_the_global_generator_alone(fresh_seed):
    torch.manual_seed(fresh_seed)
    state = torch.get_rng_state()
    models = [
        ROHNN([5, 3, 2], generator=torch.Generator().manual_seed(1)),
        LatentNODE(10, generator=torch.Generator().manual_seed(1)),
        MLPHNN(10, generator=torch.Generator().manual_seed(1)),
        LatentHNN(2, generator=torch.Generator().manual_seed(1)),
    ]
    assert torch.equal(torch.get_rng_state(), state)
    torch.manual_seed(fresh_seed + 1)
    again = [
        ROHNN([5, 3, 2], generator=torch.Generator().manual_seed(1)),
        LatentNODE(10, generator=torch.Generator().manual_seed(1)),
        MLPHNN(10, generator=torch.Generator().manual_seed(1)),
        LatentHNN(2, generator=torch.Generator().manual_seed(1)),
    ]
    for a, b in zip(models, again):
        for (name, p), q in zip(a.named_parameters(), b.parameters()):
            torch.testing.assert_close(p, q, atol=0, rtol=0, msg=name)
