"""geopt.experiments: labels agree with the panel method, the trailing-edge filter, the target
normalisation, the steps-to-target rule, the presets."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.geopt.experiments import (
    CONFIG,
    Normalized,
    label_one,
    label_pool,
    rel_l2,
    steps_to,
    trailing_edge_ok,
)
from icml26_lit.geopt.geometry import load_airfoils, naca4
from icml26_lit.sim.panel import panel_solve


def test_labels_match_panel_method():
    coords = naca4("2412", 41)
    g = torch.Generator().manual_seed(0)
    x, y = label_one(coords, 5.0, 0.5, 50, 10, g)
    assert x.shape == (60, 8) and y.shape == (60, 3)
    a = math.radians(5.0)
    torch.testing.assert_close(
        x[:, 5:], torch.tensor([math.cos(a), math.sin(a), 0.5 / 3]).double().expand(60, 3)
    )
    v = panel_solve(coords, 5.0, 0.5).velocity(x[:50, :2])  # the solver's own PG scaling
    torch.testing.assert_close(y[:50, :2], v - torch.tensor([math.cos(a), math.sin(a)]).double())
    assert (x[50:, 2] == 0).all()  # surface points last, sdf 0


def test_steps_to_and_rel_l2():
    assert steps_to([(10, 0.5), (20, 0.3)], 0.3, 100) == 20
    assert steps_to([(10, 0.5), (20, 0.4)], 0.3, 100) == 200  # twice the budget
    y = torch.ones(2, 4, 3)
    torch.testing.assert_close(rel_l2(2 * y, y), torch.ones(2))


def test_presets():
    ci = CONFIG.get("ci")
    assert ci.labels == [8, 16] and ci.n_seeds >= 3 and ci.margin > 0
    assert CONFIG.get("cpu").labels == [8, 16, 32]


def test_trailing_edge_filter_removes_spurious_vortices():
    # as6095 resamples to a trailing-edge gap of 2e-16 chord: its panel system is nearly
    # singular and puts a vortex pair of strength ~6,000 on the two trailing-edge nodes
    names, shapes = load_airfoils("labelled", limit=80, n_points=41)
    bad = shapes[names.index("as6095")]
    assert not trailing_edge_ok(bad)
    assert panel_solve(bad, 8.0).cp.min() < -1e3  # what its labels would carry
    assert trailing_edge_ok(naca4("2412", 41)) and trailing_edge_ok(naca4("0012", 41))
    kept_names, kept = label_pool(12)
    assert len(kept) == 12 and "as6095" not in kept_names
    assert kept_names == [n for n in names if n in set(kept_names)][:12]  # file order kept
    for c in kept:  # independent of the filter's own code: the solver's midpoint Cp at +-8 deg
        for a in (-8.0, 8.0):
            assert panel_solve(c, a).cp.min() > -60  # |V| < 8 on every panel
    with pytest.raises(ValueError, match="n must"):
        label_pool(0)
    with pytest.raises(ValueError, match="limit"):
        trailing_edge_ok(naca4("2412", 41), limit=0.0)


def test_normalized_is_the_unit_transformer():
    g = torch.Generator().manual_seed(0)
    y = (
        torch.randn(3, 50, 3, generator=g, dtype=torch.float64)
        * torch.tensor([0.05, 0.1, 2.0]).double()
    )
    y = y + torch.tensor([0.0, 1.0, -3.0]).double()
    m = Normalized(torch.nn.Identity(), y)
    flat = y.reshape(-1, 3).numpy()
    mean, std = flat.mean(0), flat.std(0, ddof=1) + 1e-8  # numpy, unbiased as torch.std
    encoded = (flat - mean) / std
    # encoded targets: zero mean, unit std per channel (the 1e-8 of the std moves it by at
    # most 1e-8 / 0.05 = 2e-7); decoding them gives y back (float64 rounding of a subtract,
    # divide, multiply and add: 1e-12)
    np.testing.assert_allclose(encoded.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(encoded.std(0, ddof=1), 1, rtol=1e-6)
    torch.testing.assert_close(
        m(torch.from_numpy(encoded).reshape(3, 50, 3)), y, rtol=1e-12, atol=1e-12
    )
    with pytest.raises(ValueError, match="y must"):
        Normalized(torch.nn.Identity(), torch.zeros(4, 3))
