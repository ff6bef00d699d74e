"""Slepian concentration on a cap: eigenvalues, Shannon number, energy, rotation, oracle."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.slepian import select_modes, shannon_number, slepian_cap
from icml26_lit.slepian.concentration import cap_order_matrices, slepian_synthesis
from icml26_lit.sphere import addition_kernel, angular_distance, real_sph_harm


def _points(n, seed, lat_range=(-90, 90)):
    g = torch.Generator().manual_seed(seed)
    z0, z1 = math.sin(math.radians(lat_range[0])), math.sin(math.radians(lat_range[1]))
    z = z0 + (z1 - z0) * torch.rand(n, generator=g, dtype=torch.float64)
    return torch.rad2deg(torch.asin(z)), torch.rand(n, generator=g, dtype=torch.float64) * 360 - 180


@pytest.mark.parametrize("theta,L", [(10.0, 30), (37.5, 12), (90.0, 9), (180.0, 6), (1.0, 5)])
def test_eigenvalues_in_unit_interval_and_sum_to_shannon(theta, L):
    cap = slepian_cap(theta, L, center=(20.0, -70.0))
    lam = cap.eigenvalues
    assert lam.shape == ((L + 1) ** 2,)
    assert bool((lam >= 0).all() & (lam <= 1).all())
    assert bool((lam[:-1] >= lam[1:]).all())
    assert abs(lam.sum().item() - cap.shannon_number) < 1e-9
    assert abs(cap.shannon_number - (L + 1) ** 2 * (1 - math.cos(math.radians(theta))) / 2) < 1e-12
    if theta == 180.0:
        torch.testing.assert_close(lam, torch.ones_like(lam))


def test_coefficients_orthogonal_and_per_order():
    cap = slepian_cap(12.0, 14, center=(-40.0, 10.0))
    G = cap.coefficients
    assert G.shape == (225, 225)
    torch.testing.assert_close(G @ G.T, torch.eye(225, dtype=torch.float64), atol=1e-12, rtol=0)
    l = torch.floor(torch.sqrt(torch.arange(225.0))).long()
    m = torch.arange(225) - l * l - l
    for a in range(225):  # each function has a single order
        assert bool((G[a, m != cap.orders[a]] == 0).all())


def test_energy_inside_cap_equals_eigenvalue():
    theta, L = 20.0, 16
    cap = slepian_cap(theta, L)
    t, w = np.polynomial.legendre.leggauss(40)
    c = math.cos(math.radians(theta))
    lat = np.rad2deg(np.arcsin((1 + c) / 2 + (1 - c) / 2 * t))
    lon = np.arange(2 * L + 2) * 360.0 / (2 * L + 2)
    LA, LO = np.meshgrid(lat, lon, indexing="ij")
    W = np.repeat((1 - c) / 2 * w[:, None] * (2 * math.pi / lon.size), lon.size, axis=1).ravel()
    g = cap.evaluate(torch.tensor(LA.ravel()), torch.tensor(LO.ravel()))
    inside = (torch.tensor(W)[:, None] * g**2).sum(0)
    torch.testing.assert_close(inside, cap.eigenvalues, atol=1e-11, rtol=0)


def test_pyshtools_oracle_eigenvalues_and_functions():
    pysh = pytest.importorskip("pyshtools")
    theta, L = 15.0, 18
    ours = slepian_cap(theta, L)
    ref = pysh.Slepian.from_cap(theta=theta, lmax=L)
    ref_lam = np.sort(np.asarray(ref.eigenvalues))[::-1]
    np.testing.assert_allclose(ours.eigenvalues.numpy(), ref_lam, atol=1e-10)
    lat, lon = _points(25, 1, lat_range=(60, 90))
    lon360 = np.mod(lon.numpy(), 360)
    g = ours.evaluate(lat, lon)
    for a in range(12):
        vals = (
            ref.to_shcoeffs(a)
            .convert(normalization="ortho")
            .expand(lat=lat.numpy(), lon=lon360, degrees=True)
        )
        vals = vals / math.sqrt(4 * math.pi)  # pyshtools' functions carry energy 4π, ours energy 1
        lam_a = float(ref.eigenvalues[a])
        same = torch.nonzero((ours.eigenvalues - lam_a).abs() < 1e-9).flatten()
        if same.numel() == 1:
            torch.testing.assert_close(
                g[:, same[0]].abs(), torch.tensor(np.abs(vals)), atol=1e-9, rtol=1e-7
            )
        else:  # the reference's function lies in our pair's plane
            proj = torch.linalg.lstsq(g[:, same], torch.tensor(vals)[:, None]).solution
            torch.testing.assert_close(
                g[:, same] @ proj, torch.tensor(vals)[:, None], atol=1e-9, rtol=1e-7
            )


def test_rotation_moves_centre_to_pole_and_is_equivariant(fresh_seed):
    cap = slepian_cap(10.0, 12, center=(36.0, 138.0))
    lat_c, _ = cap.to_cap_frame(
        torch.tensor([36.0], dtype=torch.float64), torch.tensor([138.0], dtype=torch.float64)
    )
    assert abs(lat_c.item() - 90.0) < 1e-9
    # shifting the centre and the points by the same longitude changes nothing
    shifted = slepian_cap(10.0, 12, center=(36.0, 138.0 + 47.0))
    lat, lon = _points(30, fresh_seed, lat_range=(25, 45))
    lon = 138 + (lon / 180) * 12
    torch.testing.assert_close(
        shifted.evaluate(lat, lon + 47.0), cap.evaluate(lat, lon), atol=1e-10, rtol=1e-8
    )
    # and a cap centred on the pole needs no rotation
    polar = slepian_cap(10.0, 12)
    torch.testing.assert_close(
        polar.rotation, torch.eye(3, dtype=torch.float64), atol=1e-15, rtol=0
    )


def test_complete_rotated_basis_keeps_addition_theorem(fresh_seed):
    cap = slepian_cap(25.0, 10, center=(-12.0, 77.0))
    la, oa = _points(40, fresh_seed)
    lb, ob = _points(40, fresh_seed + 7)
    inner = (cap.evaluate(la, oa) * cap.evaluate(lb, ob)).sum(1)
    torch.testing.assert_close(inner, addition_kernel(angular_distance(la, oa, lb, ob), 10))


def test_streaming_synthesis_matches_materialised_reference(fresh_seed):
    cap = slepian_cap(8.0, 30, center=(50.0, 5.0))
    idx = cap.select(0.05)
    lat, lon = _points(50, fresh_seed, lat_range=(35, 65))
    torch.testing.assert_close(
        cap.evaluate(lat, lon, idx), cap.evaluate_reference(lat, lon, idx), atol=1e-12, rtol=1e-9
    )


def test_select_never_splits_pairs_and_counts_near_shannon():
    cap = slepian_cap(10.0, 40)
    n = cap.shannon_number
    for n_max in (int(n), int(n) + 1, int(2 * n)):
        idx = cap.select(0.05, n_max=n_max)
        m = cap.orders[idx]
        assert sorted(m[m > 0].tolist()) == sorted((-m[m < 0]).tolist())
    idx = cap.select(0.05, n_max=int(2 * n))
    assert n <= idx.numel() <= 2 * n + 1
    assert bool((cap.eigenvalues[idx] > 0.05).all())


def test_order_blocks_whole_sphere_identity():
    for m, B in enumerate(cap_order_matrices(180.0, 20)):
        torch.testing.assert_close(B, torch.eye(21 - m, dtype=torch.float64), atol=1e-12, rtol=0)


def test_bad_input():
    with pytest.raises(ValueError, match=r"theta_deg \(the cap radius\) must lie in \(0, 180\]"):
        slepian_cap(0.0, 10)
    with pytest.raises(ValueError, match=r"theta_deg \(the cap radius\) must lie in \(0, 180\]"):
        slepian_cap(181.0, 10)
    with pytest.raises(ValueError, match=r"theta_deg \(the cap radius\) must lie in \(0, 180\]"):
        shannon_number(float("nan"), 10)
    with pytest.raises(ValueError, match="L must be >= 0"):
        slepian_cap(10.0, -2)
    with pytest.raises(ValueError, match=r"center latitude must lie in \[-90, 90\], got 95"):
        slepian_cap(10.0, 4, center=(95.0, 0.0))
    with pytest.raises(ValueError, match="center must hold finite numbers"):
        slepian_cap(10.0, 4, center=(float("nan"), 138.0))
    with pytest.raises(ValueError, match="center must hold finite numbers"):
        slepian_cap(10.0, 4, center=(36.0, float("inf")))
    with pytest.raises(ValueError, match=r"center must be a \(lat, lon\) pair"):
        slepian_cap(10.0, 4, center=(36.0,))
    with pytest.raises(TypeError, match="center must hold two numbers"):
        slepian_cap(10.0, 4, center=("36", 138.0))
    cap = slepian_cap(5.0, 6)
    with pytest.raises(ValueError, match="keeps no mode"):
        cap.select(0.99)
    with pytest.raises(ValueError, match="threshold must be a number in"):
        select_modes(cap.eigenvalues, cap.orders, 1.5)
    with pytest.raises(ValueError, match="orders must have shape"):
        slepian_synthesis(
            torch.zeros(3, dtype=torch.float64),
            torch.ones(3, dtype=torch.float64),
            torch.zeros(3, dtype=torch.float64),
            torch.zeros(2),
            torch.zeros(3, 7, dtype=torch.float64),
        )


def test_global_coefficients_reproduce_rotated_functions(fresh_seed):
    from icml26_lit.slepian.concentration import global_coefficients

    cap = slepian_cap(12.0, 10, center=(36.0, 138.0))
    Gg = global_coefficients(cap)
    la, lo = _points(30, fresh_seed)
    torch.testing.assert_close(
        real_sph_harm(la, lo, 10) @ Gg.T, cap.evaluate(la, lo), atol=1e-12, rtol=1e-9
    )
    # energy inside the rotated cap, from the global coefficients, is still λ (orthogonal rows)
    torch.testing.assert_close(Gg @ Gg.T, torch.eye(121, dtype=torch.float64), atol=1e-12, rtol=0)
    with pytest.raises(ValueError, match="above max_L"):
        global_coefficients(slepian_cap(10.0, 12), max_L=8)
