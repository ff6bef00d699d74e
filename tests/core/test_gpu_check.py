"python -m icml26_lit.gpu_check --dry-run: the GPU window's plan on the CPU (Platform F, item 3)."

import functools
import json
import time

import torch

from icml26_lit.gpu_check import main, run


def test_dry_run_runs_every_step_under_60s(tmp_path):
    t = time.perf_counter()
    path = main(["--dry-run", "--budget-s", "45", "--out", str(tmp_path)])
    assert time.perf_counter() - t < 60
    res = json.loads(path.read_text())
    steps = res["steps"]
    assert set(steps) == {"agreement", "benchmark", "ladder", "smoke"}
    assert steps["agreement"], "importing the kernels registers benchmarks"
    assert "dry run" in steps["benchmark"]
    assert steps["ladder"]["file"].startswith(str(tmp_path)), steps["ladder"]
    smoke = steps["smoke"]
    assert len(smoke) >= 19
    failed = {k: v for k, v in smoke.items() if isinstance(v, dict) and not v["ok"]}
    assert not failed, failed


def test_budget_stops_cleanly_and_keeps_results(tmp_path):
    path = run(budget_s=0.0, dry_run=True, out=tmp_path)
    res = json.loads(path.read_text())
    assert res["steps"]["ladder"] == "skipped: budget spent"
    assert res["steps"]["smoke"] and all(
        v == "skipped: budget" for v in res["steps"]["smoke"].values()
    )


def test_dry_run_ladder_writes_only_beside_its_results(tmp_path):
    from icml26_lit.gpu_check import _ladder

    ladder = _ladder(False, tmp_path / "flashschnet-full.json")
    assert ladder["file"] == str(tmp_path / "flashschnet-full.json")
    full = json.loads((tmp_path / "flashschnet-full.json").read_text())
    assert full["scale"] == "full (dry run)" and len(full["claims"]) == 1  # no peak memory on CPU
    assert len(full["samples"]["calls_per_s"]["triton"]) == 3


def _fake_benchmark(device="cpu"):
    "Variants built as registered benchmarks build them: closures, defaults, a module, a partial."
    x = torch.linspace(-1, 1, 7, device=device)
    w = torch.nn.Linear(7, 3).to(device)
    return {
        "torch": lambda: w(x.exp()),
        "triton": functools.partial(lambda x, eps=1e-12: w(torch.exp(x)) + eps, x),
    }


def test_fp64_agreement_casts_every_input():
    from icml26_lit.gpu_check import agreement_fp64

    row = agreement_fp64(_fake_benchmark())
    # float64 resolves the planted 1e-12 offset (about 1e-12 over outputs of order 1); float32's
    # 2**-24 ~ 6e-8 spacing cannot, so a row this small proves both sides ran in float64
    assert 1e-14 < row["triton"]["rel_diff"] < 1e-10, row


def test_fp64_agreement_says_when_it_does_not_apply():
    from icml26_lit.gpu_check import agreement_fp64

    def built_inside(device="cpu"):
        return {"torch": lambda: torch.ones(3).exp(), "triton": lambda: torch.ones(3).exp()}

    assert "not applicable" in agreement_fp64(built_inside())


def test_peak_memory_is_measured_above_the_inputs(monkeypatch):
    from icml26_lit.core import bench

    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: 5 * 2**20)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: calls.append("reset"))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: 8 * 2**20)
    assert bench._peak_mib(lambda: calls.append("call")) == 3.0
    assert calls == ["reset", "call"]
