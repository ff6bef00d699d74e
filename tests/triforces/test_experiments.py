"""The experiments module on a tiny run: data per seed, the Ridge baseline against its closed form,
the lr pick, paired arms (same batches), and bad input."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.triforces.alloys import element_fractions
from icml26_lit.triforces.experiments import (
    ARMS,
    CONFIG,
    fit_arm,
    make_arm,
    make_seed_data,
    make_unlabelled,
    pick_lr,
    ridge_m0,
    run_seed,
)


def _tiny():
    return type(CONFIG.get("ci"))(
        dict(
            CONFIG.get("ci"),
            n_unlabelled=6,
            n_labels=[6, 10],
            n_test=5,
            ssl_steps=2,
            steps=3,
            batch=4,
            d=16,
        )
    )


def test_seed_data_reproducible_and_redrawn():
    cfg = _tiny()
    a, b, c = make_seed_data(3, cfg), make_seed_data(3, cfg), make_seed_data(4, cfg)
    assert [len(a[k]) for k in ("unlabelled", "labelled", "test")] == [6, 10, 5]
    for key in a:
        assert all(torch.equal(x["pos"], y["pos"]) for x, y in zip(a[key], b[key]))
        assert not all(
            x["pos"].shape == y["pos"].shape and torch.equal(x["pos"], y["pos"])
            for x, y in zip(a[key], c[key])
        )  # another seed redraws every set
    assert "energy" not in a["unlabelled"][0]  # pre-training never sees labels


def test_ridge_m0_is_the_closed_form():
    cfg = _tiny()
    d = make_seed_data(0, type(cfg)(dict(cfg, n_labels=[30], n_test=12)))
    X, Xt = element_fractions(d["labelled"]), element_fractions(d["test"])
    y = np.array([s["energy"] / len(s["numbers"]) for s in d["labelled"]])
    yt = np.array([s["energy"] / len(s["numbers"]) for s in d["test"]])
    # Ridge with an unpenalised intercept: centre, solve (Xc^T Xc + I) w = Xc^T yc
    xm, ym = X.mean(0), y.mean()
    w = np.linalg.solve((X - xm).T @ (X - xm) + np.eye(X.shape[1]), (X - xm).T @ (y - ym))
    want = 1000 * np.abs((Xt - xm) @ w + ym - yt).mean()
    assert math.isclose(ridge_m0(d["labelled"], d["test"]), want, rel_tol=1e-9)  # float64 solves
    with pytest.raises(ValueError, match="train"):
        ridge_m0(d["labelled"][:1], d["test"])


def test_pick_lr():
    assert pick_lr({"0.0003": 2.0, "0.001": 1.0, "0.003": 1.5}) == "0.001"
    assert pick_lr({"0.003": 1.0, "0.0003": 1.0}) == "0.0003"  # ties to the smaller rate
    with pytest.raises(ValueError, match="val_mae"):
        pick_lr({})


def test_run_seed_tiny():
    cfg = _tiny()
    r = run_seed(1, cfg, keep_embeddings=True)
    assert set(r["A"]) == {"6", "10"} and set(r["m0"]) == {"6", "10"}
    for kind in ARMS:
        for n in ("6", "10"):
            maes = [r[kind][n][k] for k in ("energy_mae", "force_mae")]
            assert all(math.isfinite(v) and v > 0 for v in maes)
            assert len(r[kind][n]["curve"]) == cfg.steps  # the fine-tuning loss per step
    assert len(r["ssl_curve"]) == cfg.ssl_steps and r["zero_force_mae"] > 0
    assert r["embeddings"]["composition"].shape == (5, cfg.d)
    assert len(r["majority"]) == len(r["lattice"]) == 5
    # B and C share their initial weights; B is pre-trained, so their errors differ
    assert r["B"]["6"] != r["C"]["6"]
    d = make_seed_data(1, cfg)
    again = fit_arm(make_arm("A", 1, cfg), d["labelled"][:6], d["test"], cfg.lr_a, 1, cfg)
    assert again == r["A"]["6"]  # reproducible per seed: same data, weights and batches


def test_arms_and_bad_input():
    cfg = _tiny()
    a, b, c = (make_arm(k, 0, cfg) for k in ARMS)
    assert a.streams == ("interaction",) and b.streams == c.streams
    assert all(torch.equal(p, q) for p, q in zip(b.parameters(), c.parameters()))
    with pytest.raises(ValueError, match="kind"):
        make_arm("D", 0, cfg)
    with pytest.raises(ValueError, match="seed"):
        run_seed(-1, cfg)
    with pytest.raises(TypeError, match="n must be an int"):
        make_unlabelled(2.5, 0)
    with pytest.raises(ValueError, match="max_atoms"):
        make_unlabelled(2, 0, max_atoms=0)
