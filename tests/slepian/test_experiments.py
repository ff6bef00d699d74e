"""The experiment's pieces: R², the training loop learns, smoke steps of every preset."""

import pytest
import torch

from icml26_lit.slepian.experiments import (
    CONFIG,
    converged_epoch,
    knn_predict,
    make_encoder,
    r2_score,
    run_density_experiment,
    run_experiment,
    run_pilot,
    smoke_step,
    train_head,
)


def test_r2_score():
    y = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert r2_score(y, y) == 1.0
    assert abs(r2_score(y, torch.full_like(y, 2.5))) < 1e-12
    assert r2_score(y, -y) < 0


def test_train_head_learns_a_smooth_function(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    f = torch.randn(512, 4, generator=g)
    y = f[:, 0] - 0.5 * f[:, 1]
    sc = train_head(f, y, {"train": (f, y)}, "mlp", epochs=40, batch_size=64, lr=3e-3, seed=0)
    assert sc["train"] > 0.9


def test_make_encoder_names():
    cfg = CONFIG.get("ci")
    assert make_encoder("sh", cfg).out_dim == 100
    with pytest.raises(ValueError, match="encoder 'wavelet' is not known"):
        make_encoder("wavelet", cfg)


@pytest.mark.parametrize("scale", ["ci", "colab"])
def test_smoke_step(scale):
    smoke_step(CONFIG.smoke(scale))


def test_knn_uses_great_circle_distance():
    # across the date line: the neighbour 1° away wins, not the one 9.5° away in raw degrees
    xt = torch.tensor([[0.0, 179.5], [0.0, 170.0]], dtype=torch.float64)
    y = torch.tensor([1.0, 0.0])
    assert knn_predict(xt, y, torch.tensor([[0.0, -179.5]], dtype=torch.float64), k=1).tolist() == [
        1.0
    ]
    # near the pole: (89, 0) and (89, 180) are 2° apart; (80, 0) is 9° away from (89, 0)
    xt = torch.tensor([[89.0, 180.0], [80.0, 0.0]], dtype=torch.float64)
    assert knn_predict(xt, y, torch.tensor([[89.0, 0.0]], dtype=torch.float64), k=1).tolist() == [
        1.0
    ]
    # distance weights 1/d: a point 1° and 3° from two neighbours on the equator gets
    # (1/1 + 0/3)/(1 + 1/3)
    xt = torch.tensor([[0.0, 1.0], [0.0, -3.0]], dtype=torch.float64)
    pred = knn_predict(xt, y, torch.tensor([[0.0, 0.0]], dtype=torch.float64), k=2)
    assert abs(pred.item() - 0.75) < 1e-12  # haversine in float64 is exact to ~1e-16 here
    with pytest.raises(ValueError, match="k must be an int in"):
        knn_predict(xt, y, xt, k=3)


def test_seeds_redraw_the_task_and_the_rows_are_reproducible():
    cfg = CONFIG.get("ci")
    cfg.update(n_train=80, n_test=20, epochs=1, n_seeds=2, encoders="sh,slepian", knn_k=3)
    rows = run_density_experiment(cfg, "cpu", seed=0, verbose=False)
    assert [(r["encoder"], r["seed"]) for r in rows] == [
        ("sh", 0),
        ("slepian", 0),
        ("knn", 0),
        ("sh", 1),
        ("slepian", 1),
        ("knn", 1),
    ]
    knn = [r["r2_cap"] for r in rows if r["encoder"] == "knn"]
    # kNN is deterministic given the data: different values mean different data
    assert knn[0] != knn[1]
    again = run_density_experiment(cfg, "cpu", seed=0, verbose=False)
    assert [r["r2_cap"] for r in again] == [r["r2_cap"] for r in rows]


def test_train_head_leaves_the_global_rng_alone_and_records_a_curve(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    f = torch.randn(128, 4, generator=g)
    y = f[:, 0]
    torch.manual_seed(fresh_seed)
    state = torch.random.get_rng_state()
    a = train_head(f, y, {"t": (f, y)}, "mlp", epochs=3, batch_size=64, seed=5, curve_on="t")
    assert torch.equal(torch.random.get_rng_state(), state), f"seed {fresh_seed}"
    torch.manual_seed(fresh_seed + 1)  # another global state: the same numbers
    b = train_head(f, y, {"t": (f, y)}, "mlp", epochs=3, batch_size=64, seed=5, curve_on="t")
    assert a["t"] == b["t"] and a["curve"] == b["curve"]
    assert [s for s, _ in a["curve"]] == [2, 4, 6] and a["curve"][-1][1] == a["t"]


def test_converged_epoch_waits_for_the_slowest_arm():
    curves = {"fast": [0.5, 0.9, 0.95, 0.95, 0.95], "slow": [0.1, 0.3, 0.6, 0.8, 0.9]}
    assert converged_epoch(curves, grid=(1, 2, 3, 4), tol=0.05) == 5
    assert converged_epoch(curves, grid=(1, 2, 3, 4), tol=0.1) == 4
    assert converged_epoch({"fast": curves["fast"]}, grid=(1, 2, 3, 4), tol=0.0) == 3
    # budgets beyond the pilot's run are ignored: the run's length is the cap
    assert converged_epoch(curves, grid=(2, 30, 200), tol=0.05) == 5
    # a curve that peaks and falls: its best is early, the last epoch is no longer within tol
    assert converged_epoch({"a": [0.2, 0.9, 0.5]}, grid=(1, 2), tol=0.01) == 2
    with pytest.raises(ValueError, match="curves must map"):
        converged_epoch({}, tol=0.1)
    with pytest.raises(ValueError, match="tol must be a number"):
        converged_epoch(curves, tol=-1.0)


def test_the_pilot_fixes_one_budget_for_every_arm_and_seed():
    ci = CONFIG.get("ci")
    cfg = type(ci)(ci, n_train=80, n_test=20, n_seeds=2, epochs=50, encoders="sh,slepian", knn_k=3)
    pilot_cfg = type(cfg)(cfg, pilot=True, max_epochs=4, converged_tol=1.0)
    res = run_experiment(pilot_cfg, 0, "cpu")
    pilot = res["pilot"]
    # tol 1.0: every arm is converged at the first budget, here the whole 4-epoch run
    assert (
        pilot["epochs"] == 4 and pilot["seed"] == 999 and set(pilot["curves"]) == {"sh", "slepian"}
    )
    assert all(len(r["curve"]) == 4 for r in res["density"] if r["encoder"] != "knn")
    assert run_pilot(pilot_cfg, "cpu") == pilot  # the same numbers again
    assert run_experiment(cfg, 0, "cpu")["pilot"] is None  # ci: no pilot, the preset's epochs
    with pytest.raises(ValueError, match="is an evaluation seed"):
        run_pilot(type(cfg)(cfg, pilot_seed=1), "cpu")
