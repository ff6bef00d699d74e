"""Chapter 11: couplings, Brownian bridges, the double well and the FFM trainer."""

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from icml26_lit.functional_kl.ffm import FunctionalFlowMatching, VelocityMLP
from icml26_lit.functional_kl.noise import GaussianNoise
from icml26_lit.functional_kl.trajectory import (
    bridge_fill,
    couple_chains,
    coupled_bridge_paths,
    double_well_paths,
    knot_variance,
    ot_pairing,
    w2_squared,
)


@pytest.mark.parametrize("n", [1, 7, 60])
def test_exact_ot_equals_linear_sum_assignment(n):
    rng = np.random.default_rng(n)
    a, b = rng.normal(size=(n, 2)), rng.normal(size=(n, 2)) + 1
    perm = ot_pairing(a, b)
    cost = ((a[:, None] - b[None]) ** 2).sum(-1)
    r, c = linear_sum_assignment(cost)
    # both optimal: equal total cost (the permutation may differ only on ties)
    assert abs(cost[np.arange(n), perm].sum() - cost[r, c].sum()) < 1e-9
    assert sorted(perm.tolist()) == list(range(n))
    # W2^2 of equal-size clouds is the assignment cost / n
    assert abs(w2_squared(a, b) - cost[r, c].sum() / n) < 1e-9


def test_bridge_mean_and_variance():
    n, M, s, T = 40000, 9, 0.8, 2.0
    chains = torch.tensor([[[0.0], [1.0]]], dtype=torch.float64).expand(n, 2, 1).contiguous()
    p = bridge_fill(chains, [0, 8], M, s, T, torch.Generator().manual_seed(0))
    u = torch.linspace(0, 1, M, dtype=torch.float64)
    assert torch.all(p[:, 0] == 0) and torch.all(p[:, -1] == 1)  # pinned
    # mean a + u (b - a), variance s^2 Delta u (1 - u), Delta = T: MC error ~ var * sqrt(2/n) ~ 0.5%
    torch.testing.assert_close(p.mean(0)[:, 0], u, atol=0.01, rtol=0)
    var = s**2 * T * u * (1 - u)
    assert torch.all((p.var(0)[:, 0] - var).abs() <= 0.03 * var.max())


def test_random_coupling_breaks_ot_and_arms_pass_through_snapshots():
    g = torch.Generator().manual_seed(0)
    snaps = [torch.randn(50, 2, generator=g, dtype=torch.float64) + k for k in range(3)]
    ot_c = couple_chains(snaps, "ot")
    rnd = couple_chains(snaps, "random", torch.Generator().manual_seed(1))
    cost = lambda c: ((c[:, 1:] - c[:, :-1]) ** 2).sum().item()
    assert cost(ot_c) < cost(rnd)
    p = coupled_bridge_paths(snaps, [0, 4, 9], 10, 0.5, "ot", g, n_fill=2)
    assert p.shape == (100, 10, 2)
    with pytest.raises(ValueError, match="coupling"):
        coupled_bridge_paths(snaps, [0, 4, 9], 10, 0.5, "sb", g)
    with pytest.raises(ValueError, match="times"):
        coupled_bridge_paths(snaps, [0, 9, 4], 10, 0.5, "ot", g)


def test_double_well_splits_and_is_seeded():
    a = double_well_paths(2000, 17, 0.7, torch.Generator().manual_seed(3), T=2.0)
    b = double_well_paths(2000, 17, 0.7, torch.Generator().manual_seed(3), T=2.0)
    assert torch.equal(a, b)
    left = (a[:, -1, 0] < 0).double().mean().item()
    assert 0.45 < left < 0.55  # symmetric potential, saddle start: binomial sd ~ 0.011
    assert (a[:, -1, 0].abs() > 0.5).double().mean() > 0.8  # most cells have left the saddle
    with pytest.raises(ValueError, match="s must"):
        double_well_paths(3, 17, -1.0)


def test_ffm_learns_gaussian_velocity_direction():
    nz = GaussianNoise(16, 4)
    g = torch.Generator().manual_seed(0)
    paths = [torch.ones(128, 16, 1), -torch.ones(128, 16, 1)]
    ffm = FunctionalFlowMatching(nz, 1, 2, width=64, generator=g).fit(paths, 300, 64, g)
    x = torch.zeros(4, 16, 1)
    t = torch.full((4,), 0.5)
    # from x = 0 at t = 0.5 the +1 class must move up and the -1 class down
    assert ffm.velocity(0)(x, t).mean() > 0.3 and ffm.velocity(1)(x, t).mean() < -0.3
    assert sum(p.numel() for p in VelocityMLP(32, 2, 4).parameters()) == 170848
    with pytest.raises(ValueError, match="paths"):
        ffm.fit([paths[0]], 1)


def test_knot_variance_is_scotts_rule():
    x = torch.randn(500, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = x * torch.tensor([2.0, 0.5], dtype=torch.float64)
    # n^(-2/(D+4)) var_j: 500^(-1/3) = 0.12599 times the sample variance, exactly
    torch.testing.assert_close(knot_variance(x), 500 ** (-1 / 3) * x.var(0), rtol=1e-12, atol=0)


def test_jittered_knots_have_a_density_and_fresh_draws_per_filling():
    # knots jittered by N(0, eta^2) per filling: the arm's knot law is a Gaussian mixture, not
    # the observed atoms (the singular design this replaced). OT chains are deterministic, so
    # jittered minus pinned paths at a knot is the jitter itself.
    g = torch.Generator().manual_seed(2)
    n, nf = 400, 25
    snaps = [torch.randn(n, 2, generator=g, dtype=torch.float64) * (1 + k) for k in range(3)]
    pinned = coupled_bridge_paths(snaps, [0, 4, 9], 10, 0.5, "ot", g, jitter=False)
    for k, j in enumerate([0, 4, 9]):  # pinned: the knots are the observed cells (as a set)
        torch.testing.assert_close(pinned[:, j].sort(0).values, snaps[k].sort(0).values)
    p = coupled_bridge_paths(snaps, [0, 4, 9], 10, 0.5, "ot", g, n_fill=nf)
    d = p.reshape(nf, n, 10, 2) - pinned[None]
    for k, j in enumerate([0, 4, 9]):
        # 10,000 draws: the variance's relative sd is sqrt(2/1e4) = 1.4%, so 6% is > 4 sd
        torch.testing.assert_close(d[:, :, j].reshape(-1, 2).var(0), knot_variance(snaps[k]),
                                   rtol=0.06, atol=0)  # fmt: skip
        assert d[:, :, j].reshape(-1, 2).mean(0).abs().max() < 0.05  # centred (sd ~0.004)
    # fillings of one chain draw their own knots: two fillings never share a knot value
    assert (p.reshape(nf, n, 10, 2)[0, :, 4] != p.reshape(nf, n, 10, 2)[1, :, 4]).all()


def test_velocity_is_x_at_t_one_for_every_class():
    # the true FFM velocity at t = 1 is E[X1 - X0 | X1 = x] = x for every law, so class
    # differences vanish where the KL weight t/(1-t) blows up; the network is built to match
    # (official 'vt_from_substraction'). A plain MLP output (the earlier version) fails this.
    nz = GaussianNoise(16, 4)
    g = torch.Generator().manual_seed(0)
    paths = [torch.ones(32, 16, 2), -torch.ones(32, 16, 2), torch.zeros(32, 16, 2)]
    ffm = FunctionalFlowMatching(nz, 2, 3, width=32, generator=g).fit(paths, 5, 16, g)
    x = torch.randn(4, 16, 2, generator=g)
    for c in range(3):  # m(x, 1) - m(x, 1) is exactly 0 in float32
        assert torch.equal(ffm.velocity(c)(x, torch.ones(4)), x)
    # and not trivially: away from t = 1 the classes differ
    t = torch.full((4,), 0.5)
    assert not torch.allclose(ffm.velocity(0)(x, t), ffm.velocity(1)(x, t))
