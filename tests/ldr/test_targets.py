"Double-well targets (Chapter 09): exact log Z against quadrature, exact samplers, mode weights."

import math

import numpy as np
import pytest
import torch
from scipy.integrate import quad

from icml26_lit.ldr import DoubleWell2D, ManyWell, TiltedWell


@pytest.mark.parametrize("a", [0.5, 1.0, 4.0, 9.0])
def test_double_well_log_Z_against_quadrature(a):
    z1 = quad(lambda t: math.exp(-a * (t * t - 1) ** 2), -np.inf, np.inf, epsabs=1e-13)[0]
    z2 = quad(lambda t: math.exp(-0.5 * t * t), -np.inf, np.inf)[0]
    assert abs(DoubleWell2D(a).log_Z() - math.log(z1 * z2)) < 1e-9


def test_tilted_well_log_Z_and_mode_weight_against_quadrature():
    t = TiltedWell(4.0, 1.0)
    f = lambda s: math.exp(-4 * (s * s - 1) ** 2 + s)
    right, left = quad(f, 0, np.inf)[0], quad(f, -np.inf, 0)[0]
    assert abs(t.mode_weight() - right / (right + left)) < 1e-8
    assert abs(t.log_Z() - math.log((right + left) * math.sqrt(2 * math.pi))) < 1e-8
    assert abs(t.mode_weight() - 0.866) < 1e-3


def test_many_well_log_Z_and_energy():
    mw = ManyWell(16, 4.0)
    assert mw.dim == 32 and abs(mw.log_Z() - 16 * DoubleWell2D(4.0).log_Z()) < 1e-10
    x = torch.zeros(1, 32)
    x[0, ::2] = 1.0  # every copy sits in a minimum: energy 0
    assert float(mw.energy(x)) == 0.0


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_sampler_moments_match_quadrature(fresh_seed, temperature):
    a = 4.0
    x = DoubleWell2D(a).sample(
        40000,
        torch.Generator().manual_seed(fresh_seed),
        temperature=temperature,
        dtype=torch.float64,
    )
    dens = lambda s: math.exp(-a * (s * s - 1) ** 2 / temperature)
    z = quad(dens, -np.inf, np.inf)[0]
    m2 = quad(lambda s: s * s * dens(s), -np.inf, np.inf)[0] / z
    m4 = quad(lambda s: s**4 * dens(s), -np.inf, np.inf)[0] / z
    se = math.sqrt((m4 - m2**2) / 40000)
    assert abs(float((x[:, 0] ** 2).mean()) - m2) < 5 * se
    assert abs(float(x[:, 1].var()) - temperature) < 0.05 * temperature


def test_tilted_sampler_mode_weight(fresh_seed):
    t = TiltedWell()
    x = t.sample(20000, torch.Generator().manual_seed(fresh_seed))
    p = t.mode_weight()
    assert abs(float((x[:, 0] > 0).double().mean()) - p) < 5 * math.sqrt(p * (1 - p) / 20000)


def test_sampler_is_reproducible():
    a = DoubleWell2D().sample(10, torch.Generator().manual_seed(5))
    b = DoubleWell2D().sample(10, torch.Generator().manual_seed(5))
    torch.testing.assert_close(a, b)


def test_targets_bad_input():
    with pytest.raises(ValueError, match="a must be"):
        DoubleWell2D(-1.0)
    with pytest.raises(ValueError, match="n must be"):
        DoubleWell2D().sample(0)
    with pytest.raises(ValueError, match="temperature"):
        DoubleWell2D().sample(5, temperature=0.0)
    with pytest.raises(ValueError, match="x must have shape"):
        DoubleWell2D().energy(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="n_copies"):
        ManyWell(0)


def test_sampler_refuses_a_temperature_beyond_its_grid_and_a_bad_generator():
    target = DoubleWell2D(4.0)
    target.sample(5, temperature=15.0)  # edge density e^{-506/15} of the peak: inside the grid
    with pytest.raises(ValueError, match="beyond the sampler's grid"):
        target.sample(5, temperature=25.0)
    with pytest.raises(ValueError, match="beyond the sampler's grid"):
        TiltedWell(4.0, 1.0).sample(5, temperature=40.0)
    with pytest.raises(ValueError, match="beyond the sampler's grid"):
        ManyWell(2, 4.0).sample(5, temperature=30.0)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        target.sample(5, generator=7)
