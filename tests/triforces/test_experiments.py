"""The experiments module on a tiny run: data per seed, the Ridge baseline against its closed form,
the lr pick, paired arms (same batches), and bad input."""

import json
import math
import pathlib

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
    pilot_score,
    ridge_m0,
    run_seed,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
    with pytest.raises(ValueError, match="val_score"):
        pick_lr({})


def test_pilot_score_weighs_each_error_by_its_floor():
    # an arm at both floors scores 2; halving one error takes 0.5 off
    assert pilot_score(dict(energy_mae=250.0, force_mae=600.0), 250.0, 600.0) == 2.0
    assert pilot_score(dict(energy_mae=125.0, force_mae=600.0), 250.0, 600.0) == 1.5
    assert pilot_score(dict(energy_mae=250.0, force_mae=300.0), 250.0, 600.0) == 1.5


def test_ci_picks_are_the_committed_pilot():
    path = ROOT / "results" / "triforces" / "pilot_cpu.json"
    pilot = json.loads(path.read_text())
    for scale in ("ci", "cpu"):
        assert CONFIG.get(scale).lr == pilot["lr"]  # cpu re-runs the pilot and gets these
    assert pilot["steps"] == CONFIG.get("cpu").steps
    assert set(pilot["lr"]) == set(CONFIG.get("cpu").arms_big) <= set(ARMS)


def test_run_seed_tiny():
    cfg = _tiny()
    r = run_seed(1, cfg, keep_embeddings=True)
    assert set(r["A"]) == {"6", "10"} and set(r["m0"]) == {"6", "10"}
    assert set(r["C"]) == set(r["A_pyg"]) == {"10"}  # the small budget runs arms_small only
    for name in ARMS:
        for n in r[name]:
            maes = [r[name][n][k] for k in ("energy_mae", "force_mae")]
            assert all(math.isfinite(v) and v > 0 for v in maes)
            assert len(r[name][n]["curve"]) == cfg.steps  # the fine-tuning loss per step
    assert set(r["ssl_curve"]) == {"cfconv", "pyg_schnet"}
    assert all(len(c) == cfg.ssl_steps for c in r["ssl_curve"].values())
    assert r["zero_force_mae"] > 0
    assert r["embeddings"]["composition"].shape == (5, cfg.d)
    assert len(r["majority"]) == len(r["lattice"]) == 5
    # B and C share their initial weights; B is pre-trained, so their errors differ
    assert r["B"]["10"] != r["C"]["10"]
    d = make_seed_data(1, cfg)
    again = fit_arm(make_arm("A", 1, cfg), d["labelled"][:6], d["test"], cfg.lr["A"], 1, cfg)
    assert again == r["A"]["6"]  # reproducible per seed: same data, weights and batches


def test_arms_and_bad_input():
    cfg = _tiny()
    a, b, c = (make_arm(k, 0, cfg) for k in "ABC")
    assert a.streams == ("interaction",) and b.streams == c.streams
    assert all(torch.equal(p, q) for p, q in zip(b.parameters(), c.parameters()))
    with pytest.raises(ValueError, match="kind"):
        make_arm("D", 0, cfg)
    with pytest.raises(ValueError, match="interaction must be"):
        make_arm("A", 0, cfg, backbone="mace")
    with pytest.raises(ValueError, match="seed"):
        run_seed(-1, cfg)
    with pytest.raises(TypeError, match="n must be an int"):
        make_unlabelled(2.5, 0)
    with pytest.raises(ValueError, match="max_atoms"):
        make_unlabelled(2, 0, max_atoms=0)


def test_seeded_code_ignores_and_keeps_the_global_rng():
    cfg = type(_tiny())(dict(_tiny(), n_labels=[6], arms_big=["A", "B_pyg"]))
    runs = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        np.random.seed(global_seed)
        state, np_state = torch.random.get_rng_state(), np.random.get_state()[1].copy()
        r = run_seed(4, cfg)
        assert torch.equal(torch.random.get_rng_state(), state)  # never drawn from nor reseeded
        assert np.array_equal(np.random.get_state()[1], np_state)
        runs.append({k: r[k]["6"]["energy_mae"] for k in cfg.arms_big})
    assert runs[0] == runs[1]  # the same numbers under any global state
