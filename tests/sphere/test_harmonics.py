"""Real spherical harmonics: closed forms, quadrature orthonormality, high degree, oracle."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.sphere import (
    addition_kernel,
    angular_distance,
    check_degree,
    degree_order,
    latlon_to_xyz,
    normalized_legendre,
    real_sph_harm,
    sph_harm_index,
    sphere_quadrature,
    xyz_to_latlon,
)


def _random_points(n, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    z = torch.rand(n, generator=g, dtype=dtype) * 2 - 1
    return torch.rad2deg(torch.asin(z)), torch.rand(n, generator=g, dtype=dtype) * 720 - 360


def test_orthonormal_by_exact_quadrature():
    lat, lon, w = sphere_quadrature(30)
    Y = real_sph_harm(lat, lon, 30)
    assert Y.shape == (lat.numel(), 31**2)
    gram = Y.T @ (w[:, None] * Y)
    torch.testing.assert_close(gram, torch.eye(31**2, dtype=torch.float64), atol=1e-11, rtol=0)


def test_closed_forms_low_degree(fresh_seed):
    lat, lon = _random_points(40, fresh_seed)
    Y = real_sph_harm(lat, lon, 2)
    x, y, z = latlon_to_xyz(lat, lon).unbind(1)
    c1, c2 = math.sqrt(3 / (4 * math.pi)), math.sqrt(15 / (4 * math.pi))
    torch.testing.assert_close(Y[:, sph_harm_index(1, -1)], c1 * y)
    torch.testing.assert_close(Y[:, sph_harm_index(1, 0)], c1 * z)
    torch.testing.assert_close(Y[:, sph_harm_index(1, 1)], c1 * x)
    torch.testing.assert_close(Y[:, sph_harm_index(2, -2)], c2 * x * y)
    torch.testing.assert_close(Y[:, sph_harm_index(2, 1)], c2 * x * z)
    torch.testing.assert_close(
        Y[:, sph_harm_index(2, 0)], math.sqrt(5 / (16 * math.pi)) * (3 * z**2 - 1)
    )
    torch.testing.assert_close(Y[:, sph_harm_index(2, 2)], c2 / 2 * (x**2 - y**2))


def test_pyshtools_oracle(fresh_seed):
    pysh = pytest.importorskip("pyshtools")
    L = 25
    lat, lon = _random_points(6, fresh_seed)
    Y = real_sph_harm(lat, lon, L)
    l, m = degree_order(L)
    for n in range(6):
        ref = pysh.expand.spharm(
            L,
            90 - lat[n].item(),
            lon[n].item(),
            normalization="ortho",
            kind="real",
            csphase=1,
            degrees=True,
        )
        want = torch.tensor(
            np.where(
                m.numpy() >= 0,
                ref[0, l.numpy(), m.abs().numpy()],
                ref[1, l.numpy(), m.abs().numpy()],
            )
        )
        torch.testing.assert_close(Y[n], want, atol=1e-11, rtol=1e-9)


def test_per_order_orthonormality_at_high_degree():
    # for every order m, 2π ∫ P̄_l^m P̄_l'^m dz = δ_ll' up to degree 200 (Gauss-Legendre, exact)
    L = 200
    x, w = np.polynomial.legendre.leggauss(L + 1)
    z, w = torch.tensor(x), torch.tensor(w)
    P = normalized_legendre(z, torch.sqrt(1 - z * z), L)
    assert bool(torch.isfinite(P).all())
    for m in (0, 1, 37, 100, 150, 199, 200):
        Pm = P[:, m:, m]
        gram = 2 * math.pi * Pm.T @ (w[:, None] * Pm)
        torch.testing.assert_close(
            gram, torch.eye(L - m + 1, dtype=torch.float64), atol=1e-11, rtol=0
        )


def test_float32_reaches_degree_120():
    lat, lon = _random_points(200, 3)
    Y64 = real_sph_harm(lat, lon, 120)
    Y32 = real_sph_harm(lat.float(), lon.float(), 120)
    assert Y32.dtype == torch.float32 and bool(torch.isfinite(Y32).all())
    assert ((Y32.double() - Y64).abs().max() / Y64.abs().max()).item() < 1e-4


def test_addition_theorem(fresh_seed):
    la, oa = _random_points(60, fresh_seed)
    lb, ob = _random_points(60, fresh_seed + 1)
    for L in (0, 1, 7, 25):
        inner = (real_sph_harm(la, oa, L) * real_sph_harm(lb, ob, L)).sum(1)
        torch.testing.assert_close(inner, addition_kernel(angular_distance(la, oa, lb, ob), L))
    # and the full-basis norm is the same everywhere: (L+1)^2 / 4π
    torch.testing.assert_close(
        (real_sph_harm(la, oa, 12) ** 2).sum(1),
        torch.full((60,), 169 / (4 * math.pi), dtype=torch.float64),
    )


def test_pole_identical_for_every_longitude():
    lon = torch.linspace(-360, 360, 17, dtype=torch.float64)
    for pole in (90.0, -90.0):
        Y = real_sph_harm(torch.full_like(lon, pole), lon, 30)
        assert bool((Y == Y[:1]).all())
        # the pole sees only the m = 0 harmonics
        l, m = degree_order(30)
        assert bool((Y[0, m != 0] == 0).all())


def test_longitude_wrapped_not_rejected():
    lat = torch.tensor([10.0, -33.0], dtype=torch.float64)
    lon = torch.tensor([20.0, 179.0], dtype=torch.float64)
    torch.testing.assert_close(real_sph_harm(lat, lon + 360, 10), real_sph_harm(lat, lon, 10))
    torch.testing.assert_close(real_sph_harm(lat, lon - 720, 10), real_sph_harm(lat, lon, 10))


def test_gradcheck_including_near_pole():
    lat = torch.tensor([12.0, 89.99, -70.0], dtype=torch.float64, requires_grad=True)
    lon = torch.tensor([-100.0, 33.0, 181.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: real_sph_harm(a, b, 5), (lat, lon))


def test_xyz_roundtrip(fresh_seed):
    lat, lon = _random_points(30, fresh_seed)
    la2, lo2 = xyz_to_latlon(latlon_to_xyz(lat, lon))
    torch.testing.assert_close(la2, lat)
    torch.testing.assert_close(
        torch.remainder(lo2 - lon + 180, 360) - 180, torch.zeros_like(lon), atol=1e-9, rtol=0
    )


def test_bad_input():
    with pytest.raises(ValueError, match=r"lat must lie in \[-90, 90\]"):
        real_sph_harm(torch.tensor([90.5]), torch.tensor([0.0]), 3)
    with pytest.raises(ValueError, match="lat contains NaN"):
        real_sph_harm(torch.tensor([float("nan")]), torch.tensor([0.0]), 3)
    with pytest.raises(ValueError, match="lon contains NaN"):
        real_sph_harm(torch.tensor([1.0]), torch.tensor([float("nan")]), 3)
    with pytest.raises(ValueError, match="L must be >= 0"):
        real_sph_harm(torch.tensor([1.0]), torch.tensor([0.0]), -1)
    with pytest.raises(TypeError, match="L must be an int"):
        check_degree(2.5)
    with pytest.raises(ValueError, match="same length"):
        real_sph_harm(torch.zeros(2), torch.zeros(3), 2)
    with pytest.raises(ValueError, match="m must satisfy"):
        sph_harm_index(2, 3)
