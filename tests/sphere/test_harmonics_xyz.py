"""Cartesian real spherical harmonics: the lat/lon harmonics off the poles, orthonormality,
scipy's complex harmonics, and finite gradients at the poles."""

import math

import numpy as np
import pytest
import torch
from scipy.special import sph_harm_y

from icml26_lit.sphere import (
    degree_order,
    latlon_to_xyz,
    real_sph_harm,
    real_sph_harm_xyz,
    sphere_quadrature,
    xyz_to_latlon,
)


def test_equals_latlon_harmonics_off_the_poles(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    u = torch.randn(2000, 3, generator=g, dtype=torch.float64)
    u = u[(u[:, :2].norm(dim=1) / u.norm(dim=1)) > 1e-3]  # off the poles
    lat, lon = xyz_to_latlon(u)
    # both are sums of order-one float64 products: agreement to 1e-12 (about 1e4 ulp)
    scale = torch.rand(u.shape[0], 1, generator=g, dtype=torch.float64) * 10 + 0.1
    torch.testing.assert_close(
        real_sph_harm_xyz(u * scale, 8), real_sph_harm(lat, lon, 8), rtol=0, atol=1e-12
    )


def test_orthonormal_on_quadrature():
    lat, lon, w = sphere_quadrature(10)  # exact for degree <= 20 products
    Y = real_sph_harm_xyz(latlon_to_xyz(lat, lon), 10)
    gram = Y.T @ (w[:, None] * Y)
    torch.testing.assert_close(gram, torch.eye(121, dtype=torch.float64), rtol=0, atol=1e-12)


def test_matches_scipy_complex_harmonics(fresh_seed):
    # real Y_lm from scipy's complex ones: sqrt2 (-1)^m Re Y_l^m (m > 0), sqrt2 (-1)^m Im Y_l^|m|
    # (m < 0); scipy carries the Condon-Shortley phase (-1)^m, the book's harmonics do not
    g = torch.Generator().manual_seed(fresh_seed)
    u = torch.randn(300, 3, generator=g, dtype=torch.float64)
    un = (u / u.norm(dim=1, keepdim=True)).numpy()
    theta = np.arccos(np.clip(un[:, 2], -1, 1))
    phi = np.arctan2(un[:, 1], un[:, 0])
    ls, ms = (t.numpy() for t in degree_order(5))
    ref = np.empty((un.shape[0], ls.size))
    for k, (l, m) in enumerate(zip(ls, ms)):
        y = sph_harm_y(l, abs(m), theta[:, None], phi[:, None])[:, 0]
        if m == 0:
            ref[:, k] = y.real
        elif m > 0:
            ref[:, k] = math.sqrt(2) * (-1) ** abs(m) * y.real
        else:
            ref[:, k] = math.sqrt(2) * (-1) ** abs(m) * y.imag
    np.testing.assert_allclose(real_sph_harm_xyz(u, 5).numpy(), ref, rtol=0, atol=1e-12)


def test_poles_finite_gradient_and_continuity():
    pole = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]], dtype=torch.float64)
    p = pole.clone().requires_grad_(True)
    w = torch.linspace(-1, 1, 25, dtype=torch.float64)
    (real_sph_harm_xyz(p, 4) * w).sum().backward()
    assert bool(torch.isfinite(p.grad).all())
    # at the pole only m = 0 survives: Y_l0 = sqrt((2l+1)/4pi) (+-1)^l
    Y = real_sph_harm_xyz(pole, 4)
    l, m = degree_order(4)
    want = torch.where(m == 0, torch.sqrt((2 * l.double() + 1) / (4 * math.pi)), 0.0)
    torch.testing.assert_close(Y[0], want, rtol=0, atol=1e-14)
    torch.testing.assert_close(Y[1], want * (-1.0) ** l, rtol=0, atol=1e-14)
    # the gradient near the pole equals the gradient at it (smooth, no atan2 branch)
    eps = torch.tensor([[1e-7, -2e-7, 1.0]], dtype=torch.float64, requires_grad=True)
    (real_sph_harm_xyz(eps, 4) * w).sum().backward()
    torch.testing.assert_close(eps.grad[0], p.grad[0], rtol=0, atol=1e-5)


def test_gradcheck():
    g = torch.Generator().manual_seed(0)
    u = torch.randn(6, 3, generator=g, dtype=torch.float64)
    u[0] = torch.tensor([0.0, 0.0, 2.0])
    torch.autograd.gradcheck(lambda x: real_sph_harm_xyz(x, 4), (u.requires_grad_(True),))


def test_bad_input():
    with pytest.raises(ValueError, match="zero vector"):
        real_sph_harm_xyz(torch.zeros(2, 3), 2)
    with pytest.raises(ValueError, match="u must have shape"):
        real_sph_harm_xyz(torch.ones(2, 2), 2)
    with pytest.raises(ValueError, match="u contains NaN"):
        real_sph_harm_xyz(torch.tensor([[float("nan"), 0.0, 1.0]]), 2)
    with pytest.raises(ValueError, match="L must be >= 0"):
        real_sph_harm_xyz(torch.ones(2, 3), -1)
    assert real_sph_harm_xyz(torch.ones(0, 3), 3).shape == (0, 16)
    assert real_sph_harm_xyz(torch.ones(2, 3, dtype=torch.float32), 0).dtype == torch.float32
