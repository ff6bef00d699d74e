"""geopt.experiments: labels agree with the panel method, the trailing-edge filter, the target
normalisation, the steps-to-target rule, the presets."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.geopt.experiments import (
    ARMS,
    CONFIG,
    Normalized,
    channel_mean_floor,
    field_errors,
    field_l2,
    label_one,
    label_pool,
    labelled_data,
    pretrain_data,
    raw_condition,
    rel_l2,
    run_arm,
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
    ci, cpu = CONFIG.get("ci"), CONFIG.get("cpu")
    assert ci.labels == [8, 16] and cpu.labels == [8, 16, 32]
    # the pilot's picks hold for every arm alike: one point count, one budget per preset
    assert cpu.n_volume == cpu.n_surface == 64 and cpu.steps == 1000 and cpu.step_max == 0.4
    for s in ("ci", "cpu", "colab", "full"):
        c = CONFIG.get(s)
        assert set(c.a_labels) <= set(c.labels) and c.pilot_seed == 0 and c.n_seeds >= 2


def test_field_errors_by_hand():
    y = torch.tensor([[[3.0, 4.0, 2.0], [0.0, 1.0, -4.0], [9.0, 9.0, 1.0]]])  # 2 volume, 1 surface
    pred = torch.zeros_like(y)
    # each field predicted as zero: relative L2 exactly 1; the surface (u, v) is not scored
    torch.testing.assert_close(field_errors(pred, y, 2), torch.ones(1, 3))
    pred = y.clone()
    pred[0, 0, 0] = 0.0  # volume velocity off by 3 out of |(3, 4, 0, 1)| = sqrt(26)
    pred[0, 2, :2] = 0.0  # surface velocity: not part of the metric
    want = torch.tensor([[3 / math.sqrt(26), 0.0, 0.0]])
    torch.testing.assert_close(field_errors(pred, y, 2), want)
    torch.testing.assert_close(field_l2(2)(pred, y), want.mean(1))
    for bad in (0, 3, 2.0):
        with pytest.raises(ValueError, match="n_volume"):
            field_errors(pred, y, bad)
    with pytest.raises(ValueError, match="pred and y"):
        field_errors(pred[..., :2], y[..., :2], 2)


def test_channel_mean_floor_is_the_field_metric_of_the_means():
    g = torch.Generator().manual_seed(0)
    y_train, y = torch.randn(4, 10, 3, generator=g), torch.randn(5, 10, 3, generator=g)
    mean = y_train.mean(dim=(0, 1)).expand_as(y)
    want = float(field_l2(6)(mean, y).mean())
    assert abs(channel_mean_floor(y_train, y, 6) - want) < 1e-6  # the same float32 ops


def test_raw_condition_recovers_alpha_and_mach():
    x, _ = label_one(naca4("2412", 41), -6.5, 0.45, 20, 5, torch.Generator().manual_seed(1))
    r = raw_condition(x)
    assert r.shape == (25, 7)
    torch.testing.assert_close(r[:, :5], x[:, :5])
    # atan2 of (sin a, cos a) and 3 x (M / 3) in float64: rounding ~1e-16
    torch.testing.assert_close(r[:, 5], torch.full((25,), math.radians(-6.5)).double())
    torch.testing.assert_close(r[:, 6], torch.full((25,), 0.45).double())


def _tiny():
    c = dict(CONFIG.get("ci"))
    c.update(n_pre_airfoils=1, n_pre_shapes=1, n_walks=2, n_base=1, n_volume=16, n_surface=8)
    c.update(labels=[2], a_labels=[2], n_val=2, n_test=2, steps=2, pre_steps=2)
    return type(CONFIG.get("ci"))(c)


def test_static_pretraining_masks_what_it_predicts():
    cfg = _tiny()
    xl, yl = pretrain_data(cfg, 0, "lifted")
    xs, ys = pretrain_data(cfg, 0, "static")
    assert xl.shape == (4, 24, 8) and yl.shape == (4, 24, 6)  # 2 geometries x 2 walks
    assert xs.shape == (2, 24, 8) and ys.shape == (2, 24, 3)  # one sample per geometry
    torch.testing.assert_close(xs[..., :2], xl[::2, :, :2])  # the same points
    assert (xs[..., 2:] == 0).all()  # sdf, direction and condition hidden from the input
    torch.testing.assert_close(ys, xl[::2, :, 2:5])  # and predicted
    with pytest.raises(ValueError, match="kind"):
        pretrain_data(cfg, 0, "dynamic")


def test_run_arm_checks_its_arm_and_state():
    cfg = _tiny()
    data = labelled_data(cfg, 0, label_pool(6)[1])
    assert ARMS == ("A", "B", "C", "D")
    with pytest.raises(ValueError, match="arm must"):
        run_arm(cfg, data, 2, 0, arm="E")
    with pytest.raises(ValueError, match="arm C needs a state"):
        run_arm(cfg, data, 2, 0, arm="C")
    with pytest.raises(ValueError, match="arm A takes no state"):
        run_arm(cfg, data, 2, 0, arm="A", state={})
    r = run_arm(cfg, data, 2, 0, arm="A")
    assert math.isfinite(r["test"]) and len(r["fields"]) == 3


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
