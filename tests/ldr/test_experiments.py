"Experiment plumbing (Chapter 09): configs, one smoke step, a tiny run that learns, the pairing."

import json
import math
import pathlib

import pytest
import torch

from icml26_lit.ldr import DoubleWell2D, evaluate_flow
from icml26_lit.ldr.experiments import (
    CONFIG,
    balanced_modes,
    equal_ess_ratio,
    make_flow,
    nll_weight_decay,
    run,
    smoke_step,
    training_data,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_smoke_step_every_scale():
    for s in CONFIG.scales:
        smoke_step(CONFIG.smoke(s))


def test_ci_preset_carries_the_committed_pilot_picks():
    picks = json.loads((ROOT / "results" / "ldr" / "pilot_cpu.json").read_text())
    ci = CONFIG.get("ci")
    assert ci.lam == picks["lam"] and ci.nll_weight_decay == picks["nll_weight_decay"]
    assert picks["n_data"] == ci.n_data and picks["steps"] == ci.steps
    assert ci.n_seeds >= 5


def test_a_short_ldr_run_beats_the_untrained_flow():
    cfg = CONFIG.get("ci")
    cfg.update(steps=60, n_eval=512, n_test=256, n_layers=2, hidden=16)
    target = DoubleWell2D()
    torch.manual_seed(5)
    x_test = target.sample(256, torch.Generator().manual_seed(6))
    untrained = make_flow("ours", 2, cfg, torch.device("cpu"))  # N(0, I)
    r0 = evaluate_flow(untrained, target, 512, torch.Generator().manual_seed(7), x_test)
    r1 = run(target, "nll+ldr", 128, 5, cfg)
    assert r1["test_nll"] < r0["test_nll"] and r1["ess"] > r0["ess"]


def test_runs_are_paired_by_seed_and_nested_across_sizes():
    target = DoubleWell2D()
    small = training_data(target, 64, 11, n_pool=1024)
    big = training_data(target, 256, 11, n_pool=1024)
    torch.testing.assert_close(big[:64], small, rtol=0, atol=0)  # the same first 64 points
    assert not torch.equal(training_data(target, 64, 12, n_pool=1024), small)
    cfg = CONFIG.get("ci")
    cfg.update(steps=3, n_eval=64, n_test=64, n_layers=1, hidden=4)
    a = run(target, "nll", 32, 3, cfg, keep=True)
    b = run(target, "nll+ldr", 32, 3, cfg, keep=True)
    torch.testing.assert_close(a["x"], b["x"], rtol=0, atol=0)  # same data for both methods
    c = run(target, "nll", 32, 3, cfg)
    assert c["ess"] == a["ess"]  # the same seed gives the same numbers
    with pytest.raises(ValueError, match="n_pool must be at least"):
        training_data(target, 64, 0, n_pool=32)


def test_equal_ess_ratio_interpolates_in_log_n():
    assert equal_ess_ratio([64, 256, 1024], [0.2, 0.6, 0.9], 0.4, 64) == pytest.approx(2.0)
    assert equal_ess_ratio([64, 256, 1024], [0.2, 0.6, 0.9], 0.75, 64) == pytest.approx(8.0)
    assert equal_ess_ratio([64, 256], [0.5, 0.6], 0.3, 64) == 1.0  # reached at the first size
    assert equal_ess_ratio([64, 256], [0.5, 0.6], 0.95, 64) == math.inf  # censored
    with pytest.raises(ValueError, match="n_grid must be increasing"):
        equal_ess_ratio([256, 64], [0.5, 0.6], 0.55, 64)


def test_nll_weight_decay_picks_the_nearest_piloted_size():
    cfg = CONFIG.get("ci")
    cfg.update(n_data=[64, 256, 1024], nll_weight_decay=[1.0, 0.1, 0.0])
    assert nll_weight_decay(cfg, 64) == 1.0 and nll_weight_decay(cfg, 200) == 0.1
    assert nll_weight_decay(cfg, 4096) == 0.0


def test_colab_code_paths_run_tiny():
    from icml26_lit.ldr import ManyWell, TiltedWell

    cfg = CONFIG.get("colab")
    cfg.update(steps=2, n_eval=64, n_test=64, n_layers=2, hidden=8, batch=32)
    target = DoubleWell2D()
    for method in ("rkl", "rkl+ldr"):
        assert 0 < run(target, method, 16, 0, cfg)["ess"] <= 1
    r = run(target, "nll", 32, 0, cfg, temperature=2.0, weighted=True)
    assert 0 < r["ess"] <= 1
    tilted = TiltedWell()
    data = balanced_modes(tilted.sample(400, torch.Generator().manual_seed(0)), 40)
    assert (data[:, 0] > 0).sum() == 20 and len(data) == 40
    for kind in ("mad", "huber"):
        run(tilted, "nll+ldr", 40, 0, cfg, kind=kind, data=data)
    assert run(ManyWell(16), "nll+ldr", 32, 0, cfg)["log_Z_error"] >= 0


def test_balanced_modes_rejects_too_few():
    with pytest.raises(ValueError, match="too few"):
        balanced_modes(torch.ones(10, 2), 4)


@pytest.mark.parametrize("model", ["ours", "zuko"])
def test_runs_leave_the_global_rng_alone(model):
    # a run draws from its own seeds only: it neither reseeds nor consumes the global RNG, and
    # gives the same numbers under any global RNG state
    cfg = CONFIG.get("ci")
    cfg.update(steps=2, n_eval=64, n_test=64, n_layers=1, hidden=4)
    target = DoubleWell2D()
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a = run(target, "nll", 32, 3, cfg, model=model)
    assert torch.equal(torch.get_rng_state(), state)
    torch.manual_seed(999)
    b = run(target, "nll", 32, 3, cfg, model=model)
    assert a["ess"] == b["ess"] and a["loss"] == b["loss"] and len(a["loss"]) == cfg.steps


def test_the_weighted_nll_unit_uses_importance_weights():
    # the biased-data unit "weighted nll" trains with temperature_weights: its numbers differ
    # from the unweighted unit's on the same data, initialisation and minibatches
    from icml26_lit.ldr.experiments import run_unit

    cfg = CONFIG.get("cpu")
    cfg.update(steps=3, n_eval=64, n_test=64, n_layers=1, hidden=4, n_biased=32)
    a = run_unit(cfg, dict(case="biased", seed=2, method="nll"))
    b = run_unit(cfg, dict(case="biased", seed=2, method="weighted nll"))
    assert b["method"] == "weighted nll" and a["loss"] != b["loss"]


def test_mode_weights_undo_a_per_mode_resampling(fresh_seed):
    from icml26_lit.ldr import TiltedWell
    from icml26_lit.ldr.experiments import mode_weights

    g = torch.Generator().manual_seed(fresh_seed)
    pool = TiltedWell(4.0, 1.0).sample(1600, g)
    data = balanced_modes(pool, 100)
    w = mode_weights(pool, data)
    right = (data[:, 0] > 0).double()
    f_pool = float((pool[:, 0] > 0).double().mean())
    # the weighted data hold each mode in the pool's proportion, and the weights sum to n
    assert float((w.double() * right).sum() / w.double().sum()) == pytest.approx(f_pool, abs=1e-6)
    assert float(w.sum()) == pytest.approx(len(data), rel=1e-6) and w.dtype == data.dtype
    # constant within a mode: the resampling is uniform within each mode
    assert len(set(w[data[:, 0] > 0].tolist())) == 1 and len(set(w[data[:, 0] <= 0].tolist())) == 1
    with pytest.raises(ValueError, match="both modes"):
        mode_weights(pool, data[data[:, 0] > 0])


def test_run_checks_kind_and_weights_at_entry():
    cfg = CONFIG.get("ci")
    cfg.update(steps=2, n_eval=64, n_test=64, n_layers=1, hidden=4)
    target = DoubleWell2D()
    with pytest.raises(ValueError, match="kind must be one of"):
        run(target, "nll+ldr", 16, 0, cfg, kind="cauchy")
    with pytest.raises(ValueError, match="weights are importance weights of `data`"):
        run(target, "nll", 16, 0, cfg, weights=torch.ones(16))


def test_each_dispersion_gets_its_piloted_lambda():
    # the picks in the presets are the pilot file's, one per dispersion; a run of a dispersion
    # trains with its own lambda (the same run at another lambda gives another loss)
    picks = json.loads((ROOT / "results" / "ldr" / "pilot_cpu.json").read_text())
    assert set(picks["lam"]) == {"var", "mad", "huber"}
    assert set(picks["lam_ess"]) == set(picks["lam"])
    for kind, row in picks["lam_ess"].items():
        assert picks["lam"][kind] == float(max(row, key=row.get))
    cfg = CONFIG.get("ci")
    cfg.update(steps=2, n_eval=64, n_test=64, n_layers=1, hidden=4, lam=dict(var=1.0, mad=7.0))
    target = DoubleWell2D()
    a = run(target, "nll+ldr", 32, 1, cfg, kind="mad")
    b = run(target, "nll+ldr", 32, 1, cfg, kind="mad", lam=7.0)
    c = run(target, "nll+ldr", 32, 1, cfg, kind="mad", lam=1.0)
    assert a["loss"] == b["loss"] and a["loss"] != c["loss"]


def test_the_headline_runs_on_more_seeds_than_the_rest():
    from icml26_lit.ldr.experiments import experiment_units

    cfg = CONFIG.get("cpu")
    cfg.update(n_seeds=2, headline_seeds=4)
    units = experiment_units(cfg, 0)
    late = [u for u in units if u["seed"] >= 1002]
    assert {u["case"] for u in late} == {"unbiased"} and {u["seed"] for u in late} == {1002, 1003}
    assert sorted((u["method"], u["n"]) for u in late if u["seed"] == 1002) == [
        ("nll", 64),
        ("nll", 256),
        ("nll", 1024),
        ("nll+ldr", 64),
    ]
    assert all(u.get("kind", "var") == "var" and u.get("model") is None for u in late)
    assert {u["seed"] for u in units if u["case"] != "unbiased"} == {1000, 1001}


def test_the_tilted_weighted_unit_trains_with_the_mode_weights():
    from icml26_lit.ldr.experiments import run_unit

    cfg = CONFIG.get("cpu")
    cfg.update(steps=3, n_eval=64, n_test=64, n_layers=1, hidden=4, n_biased=32)
    a = run_unit(cfg, dict(case="tilted", seed=2, method="nll"))
    b = run_unit(cfg, dict(case="tilted", seed=2, method="weighted nll"))
    assert b["method"] == "weighted nll" and a["loss"] != b["loss"]
