"python -m icml26_lit.gpu_check --dry-run: the GPU window's plan on the CPU (Platform F, item 3)."

import json
import time

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
