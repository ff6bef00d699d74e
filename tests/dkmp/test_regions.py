"""Tests of icml26_lit.dkmp.regions: shell windows (partition of unity, C^1, support)."""

import pytest
import torch

from icml26_lit.dkmp.regions import shell_windows

F64 = torch.float64


def test_windows_sum_to_one_and_are_nonnegative(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    r = torch.rand(5000, generator=g, dtype=F64) * 50
    for n_levels, r0, width in ((3, 5.0, 1.0), (0, 5.0, 1.0), (2, 3.0, 0.5)):
        w = shell_windows(r, n_levels, r0, width)
        inside = r <= r0 * 2**n_levels - width
        # each window is a difference of two cosines in [0, 1]: rounding of a few ulp
        assert float((w[inside].sum(1) - 1).abs().max()) < 1e-12, fresh_seed
        assert bool((w >= -1e-15).all())
        assert bool((w[r >= r0 * 2**n_levels] == 0).all())  # exactly zero past r_L


def test_windows_support():
    r = torch.tensor([2.0, 7.0, 15.0, 30.0], dtype=F64)  # deep inside ball, shells 1, 2, 3
    w = shell_windows(r, 3)
    torch.testing.assert_close(w, torch.eye(4, dtype=F64), rtol=0, atol=0)


def test_windows_are_c1_and_energy_moves_little():
    # derivative by autograd on both sides of every ramp end: equal (zero slope at both ends)
    edges = [4.0, 5.0, 9.0, 10.0, 19.0, 20.0, 39.0, 40.0]
    for e in edges:
        r = torch.tensor([e - 1e-9, e + 1e-9], dtype=F64, requires_grad=True)
        w = shell_windows(r, 3)
        for k in range(4):
            (gk,) = torch.autograd.grad(w[:, k].sum(), r, retain_graph=True)
            assert float(gk.abs().max()) < 1e-6  # slope ~ pi^2/2 * 1e-9 next to an end
    # a weighted sum moves < 1e-5 when r crosses a shell edge by 1e-6 A
    coef = torch.tensor([3.0, -7.0, 11.0, 5.0], dtype=F64)
    for e in edges:
        a, b = shell_windows(torch.tensor([e - 1e-6, e + 1e-6], dtype=F64), 3) @ coef
        assert abs(float(a - b)) < 1e-5


def test_windows_bad_input():
    r = torch.ones(3)
    with pytest.raises(ValueError, match="n_levels must be"):
        shell_windows(r, -1)
    with pytest.raises(ValueError, match="r0 must be a positive"):
        shell_windows(r, 2, r0=0.0)
    with pytest.raises(ValueError, match="width must be a positive"):
        shell_windows(r, 2, width=-1.0)
    with pytest.raises(ValueError, match="r contains NaN"):
        shell_windows(torch.tensor([float("nan")]), 2)


def test_farthest_point_regions_cover_and_voronoi(fresh_seed):
    from icml26_lit.dkmp.regions import farthest_point_regions

    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.rand(300, 3, generator=g, dtype=F64) * 25
    for s in (4.0, 8.0, 16.0):
        c, lab = farthest_point_regions(x, s)
        d = torch.cdist(x, x[c])
        assert float(d.min(1).values.max()) <= s / 2, fresh_seed  # every atom within s/2
        assert torch.equal(d[torch.arange(300), lab], d.min(1).values)  # nearest centre
        assert len(set(c.tolist())) == len(c)
    with pytest.raises(ValueError, match="size must be a positive"):
        farthest_point_regions(x, 0.0)
