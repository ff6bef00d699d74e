"""Tests of icml26_lit.md.langevin: BAOAB against closed forms."""

import math

import pytest
import torch

from icml26_lit.md.langevin import BAOAB, KCAL_PER_MOL, kT_at

K = 50.0


def harmonic(r):
    return 0.5 * K * (r * r).sum().reshape(1), -K * r


def test_velocity_verlet_limit_conserves_energy(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    md = BAOAB(harmonic, masses=12.0, dt=0.001, friction=0.0, generator=g)
    s = md.init(torch.randn(32, 3, dtype=torch.float64, generator=g))
    total = lambda s: float(s.energy.sum() + 0.5 * 12.0 * (s.vel**2).sum() / KCAL_PER_MOL)
    e0 = total(s)
    for _ in range(300):
        s = md.step(s)
    assert abs(total(s) - e0) < 1e-3 * abs(e0)


def test_harmonic_period():
    # one particle released at x=1 with no velocity returns after one period 2 pi / omega
    md = BAOAB(harmonic, masses=12.0, dt=0.0005, friction=0.0)
    omega = math.sqrt(K * KCAL_PER_MOL / 12.0)
    n = round(2 * math.pi / omega / 0.0005)
    s = md.run(
        torch.tensor([[1.0, 0.0, 0.0]], dtype=torch.float64),
        n,
        vel=torch.zeros(1, 3, dtype=torch.float64),
    )
    assert abs(float(s.pos[0, 0]) - 1.0) < 5e-3


def test_baoab_samples_boltzmann_positions(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    md = BAOAB(harmonic, masses=12.0, dt=0.02, friction=5.0, kT=0.6, generator=g)
    s, acc = md.init(torch.zeros(2000, 3, dtype=torch.float64)), []
    for t in range(200):
        s = md.step(s)
        if t >= 60:
            acc.append(float((K * s.pos**2).mean()))
    assert abs(sum(acc) / len(acc) - 0.6) < 0.025


def test_bad_input():
    with pytest.raises(ValueError, match="dt must be"):
        BAOAB(harmonic, dt=-1.0)
    with pytest.raises(ValueError, match="friction must be"):
        BAOAB(harmonic, friction=-1.0)
    with pytest.raises(ValueError, match="masses must be positive"):
        BAOAB(harmonic, masses=torch.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="temperature must be positive"):
        kT_at(0.0)
    md = BAOAB(harmonic, masses=torch.ones(3))
    with pytest.raises(ValueError, match="masses must have shape"):
        md.init(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="pos contains NaN"):
        BAOAB(harmonic).init(torch.full((2, 3), float("nan")))
