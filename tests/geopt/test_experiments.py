"""geopt.experiments: labels agree with the panel method, the steps-to-target rule, a smoke step."""

import math

import torch

from icml26_lit.geopt.experiments import CONFIG, label_one, rel_l2, steps_to
from icml26_lit.geopt.geometry import naca4
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
