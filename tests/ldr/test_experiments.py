"Experiment plumbing (Chapter 09): configs, one smoke step, a tiny run that learns."
import torch

from icml26_lit.core import SCALE_NAMES
from icml26_lit.ldr import DoubleWell2D, evaluate
from icml26_lit.ldr.experiments import CONFIG, make_flow, run, smoke_step


def test_smoke_step_every_scale():
    for s in SCALE_NAMES:
        smoke_step(CONFIG.smoke(s))


def test_a_short_ldr_run_beats_the_untrained_flow():
    cfg = CONFIG.get("ci")
    cfg.update(steps=60, n_eval=512, n_test=256, n_layers=2, hidden=16)
    target = DoubleWell2D()
    torch.manual_seed(5)
    x_test = target.sample(256, torch.Generator().manual_seed(6))
    r0 = evaluate(make_flow("ours", 2, cfg, torch.device("cpu")), target, 512,
                  torch.Generator().manual_seed(7), x_test)  # the untrained flow is N(0, I)
    r1 = run(target, "nll+ldr", 128, 5, cfg)
    assert r1["test_nll"] < r0["test_nll"] and r1["ess"] > r0["ess"]


def test_colab_code_paths_run_tiny():
    from icml26_lit.ldr import ManyWell, TiltedWell
    from icml26_lit.ldr.experiments import balanced_modes
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
    import pytest
    from icml26_lit.ldr.experiments import balanced_modes
    with pytest.raises(ValueError, match="too few"):
        balanced_modes(torch.ones(10, 2), 4)
