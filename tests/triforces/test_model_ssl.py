"""TriForces heads (direct head equivariance, -dE/dx = central differences), SIGReg (Gaussian vs
uniform, one slice = scipy.integrate.quad), pre-training moves the loss down."""

import math

import numpy as np
import pytest
import torch
from scipy.integrate import quad

from icml26_lit.triforces.alloys import collate, make_alloy_dataset
from icml26_lit.triforces.model import TriForces
from icml26_lit.triforces.ssl import epps_pulley, pretrain, random_rotation, sigreg


@pytest.fixture(scope="module")
def model64():
    return TriForces(generator=torch.Generator().manual_seed(0)).double()


def test_direct_head_rotation_equivariant(model64, fresh_seed):
    data = make_alloy_dataset(3, seed=fresh_seed % 1000)
    rot = random_rotation(torch.Generator().manual_seed(fresh_seed))
    rotated = [dict(s, pos=s["pos"] @ rot.T, cell=s["cell"] @ rot.T) for s in data]
    e, f = model64.energy_and_forces(collate(data, dtype=torch.float64))
    e2, f2 = model64.energy_and_forces(collate(rotated, dtype=torch.float64))
    # float64, neighbours recomputed in another order: 1e-10 on order-one outputs
    torch.testing.assert_close(e2, e, rtol=0, atol=1e-10)
    torch.testing.assert_close(f2, f @ rot.T, rtol=0, atol=1e-10)


def test_conservative_forces_are_minus_gradient(model64):
    data = make_alloy_dataset(2, seed=3)
    b = collate(data, dtype=torch.float64)
    model64.eval()
    _, f = model64.energy_and_forces(b, head="conservative")
    h = 1e-6  # central differences in float64: error ~ h^2 E''' + 1e-16 E / h, about 1e-9
    for i, a in [(0, 0), (1, 2), (int(b["pos"].shape[0]) - 1, 1)]:
        dp = torch.zeros_like(b["pos"])
        dp[i, a] = h
        e_plus = model64.energy_and_forces(b, head="direct", pos=b["pos"] + dp)[0].sum()
        e_minus = model64.energy_and_forces(b, head="direct", pos=b["pos"] - dp)[0].sum()
        fd = -float((e_plus - e_minus).detach()) / (2 * h)
        assert abs(fd - float(f[i, a])) < 1e-6 * max(1.0, abs(fd))


def test_triforces_bad_input():
    with pytest.raises(ValueError, match="fusion must be"):
        TriForces(fusion="add")
    with pytest.raises(ValueError, match="backend must be"):
        TriForces(backend="cuda")
    with pytest.raises(ValueError, match="streams must hold"):
        TriForces(streams=("composition",))
    model = TriForces(generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="head must be"):
        model.energy_and_forces(make_alloy_dataset(1), head="both")


def test_sigreg_gaussian_small_uniform_large():
    g = torch.Generator().manual_seed(0)
    gauss = torch.randn(100_000, 8, generator=g, dtype=torch.float64)
    unif = torch.rand(100_000, 8, generator=g, dtype=torch.float64)
    # a Gaussian sample's statistic is O(1/N) = 1e-5; U[0, 1]^8 is far from N(0, I)
    assert float(sigreg(gauss, 64, scale_by_n=False, generator=g)) < 1e-4
    assert float(sigreg(unif, 64, scale_by_n=False, generator=g)) > 1e-3
    scaled = sigreg(gauss[:1000], 64, generator=torch.Generator().manual_seed(1))
    plain = sigreg(gauss[:1000], 64, scale_by_n=False, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(scaled, 1000 * plain)  # the same directions: scaled by N


def test_epps_pulley_one_slice_is_quad(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    z = rng.standard_t(4, size=50)

    def integrand(t):
        return math.exp(-t * t / 2) * (
            (np.cos(t * z).mean() - math.exp(-t * t / 2)) ** 2 + np.sin(t * z).mean() ** 2
        )

    exact, _ = quad(integrand, 0, 3, epsabs=1e-14, epsrel=1e-12)
    zt = torch.tensor(z)[:, None]
    fine = float(epps_pulley(zt, n_nodes=4001)[0])
    assert abs(fine - exact) < 1e-6 * exact + 1e-12  # trapezoid error ~ h^2 f'' / 12 ~ 1e-7 rel
    coarse = float(epps_pulley(zt)[0])  # the paper's 17 nodes: h = 0.1875
    assert abs(coarse - exact) < 0.05 * exact + 1e-9


def test_sigreg_bad_input():
    with pytest.raises(ValueError, match="at least two samples"):
        sigreg(torch.randn(1, 4))
    with pytest.raises(ValueError, match="x must have 2 dimensions"):
        sigreg(torch.randn(4))
    with pytest.raises(ValueError, match="x contains NaN"):
        sigreg(torch.full((3, 2), float("nan")))


def test_pretrain_lowers_loss():
    model = TriForces(generator=torch.Generator().manual_seed(0))
    hist = pretrain(
        model,
        make_alloy_dataset(32, seed=0),
        steps=12,
        batch_size=8,
        generator=torch.Generator().manual_seed(0),
    )
    assert np.mean([h["loss"] for h in hist[-3:]]) < np.mean([h["loss"] for h in hist[:3]])
