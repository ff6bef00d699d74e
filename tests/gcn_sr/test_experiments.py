"""Chapter 18: the experiment's configs, smoke step and recovery judge."""

import pytest
import sympy as sp

from icml26_lit.gcn_sr.experiments import (
    CONFIG,
    _gplearn_to_sympy,
    expr_recovered,
    per_seed,
    run_gcnsr,
    run_method,
    smoke_step,
)
from icml26_lit.gcn_sr.fitness import nguyen
from icml26_lit.gcn_sr.spbt import VAR_SYMBOLS


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_smoke_step(scale):
    smoke_step(CONFIG.smoke(scale))


def test_ci_config_is_the_issue_protocol():
    cfg = CONFIG.get("ci")
    assert cfg.tasks == [1] and cfg.n_seeds >= 10 and cfg.budget == 4000
    assert cfg.methods == ["gcn_sr", "sequence_pg", "pg", "pg_equal_updates", "gplearn"]
    cpu = CONFIG.get("cpu")  # the headline's protocol: 30 paired seeds, both new arms
    assert cpu.n_seeds == 30 and cpu.tasks[0] == 1 and 6 in cpu.tasks
    assert {"sequence_pg", "imitation", "pg", "pg_equal_updates", "gcn_sr_gp1"} <= set(cpu.methods)
    for name in ("ci", "cpu", "colab", "full"):
        c = CONFIG.get(name)
        assert c.gplearn_population * (c.budget // c.gplearn_population) == c.budget, name
    for name in ("ci", "cpu"):  # the equal-updates batch (one GCN-SR iteration) divides the budget
        c = CONFIG.get(name)
        assert c.budget % (c.batch_size + c.gp_generations * c.gp_offspring) == 0, name


def test_equal_updates_arm_matches_gcnsr_updates():
    cfg = CONFIG.get("ci")
    cfg.update(budget=600, batch_size=40, gp_offspring=40, gp_generations=4, n_test=50)
    a = run_method("gcn_sr", 2, 0, cfg)  # Nguyen-2 is not recovered this early
    b = run_method("pg_equal_updates", 2, 0, cfg)
    c = run_method("pg", 2, 0, cfg)
    assert a["evals"] == b["evals"] == c["evals"] == 600
    assert a["updates"] == b["updates"] == 600 // 200 and c["updates"] == 600 // 40


def test_recovery_judge():
    x, y = VAR_SYMBOLS[:2]
    Xt, _, truth = nguyen(10, n_points=200, seed=1)
    assert expr_recovered(sp.sin(x + y) + sp.sin(x - y), truth, Xt)  # = 2 sin x cos y
    assert not expr_recovered(2 * sp.sin(x) * sp.cos(1.001 * y), truth, Xt)
    # gplearn's protected division can simplify to complex infinity: no recovery, and no crash
    # (numpy's lambdify printer has no zoo: this raised KeyError in a cpu run)
    for inf in (sp.zoo * x, x + sp.oo, x - sp.oo, sp.nan * y):
        assert not expr_recovered(inf, truth, Xt)
    e = _gplearn_to_sympy("add(mul(X0, X0), div(X0, X0))", 1)
    assert sp.simplify(e - (x**2 + 1)) == 0


def test_run_and_per_seed():
    cfg = CONFIG.get("ci")
    cfg.update(budget=150, batch_size=50, gp_offspring=25, gp_generations=2, n_test=50)
    r = run_gcnsr(1, 0, cfg)
    assert r["evals"] <= 150 and isinstance(r["recovered"], bool)
    rs = [
        dict(seed=0, recovered=True, nrmse=0.0),
        dict(seed=0, recovered=False, nrmse=2.0),
        dict(seed=1, recovered=False, nrmse=float("inf")),
    ]
    assert per_seed(rs, "recovered").tolist() == [0.5, 0.0]
    assert per_seed(rs, "nrmse").tolist() == [1.0, 1000.0]
    rs = [dict(r, task=t) for r, t in zip(rs, (1, 2, 1))]
    assert per_seed(rs, "recovered", task=1).tolist() == [1.0, 0.0]
    assert per_seed(rs, "nrmse", task=2).tolist() == [2.0]
    with pytest.raises(ValueError, match="method must be one of"):
        run_method("dso", 1, 0, cfg)


def test_sequence_arm_is_the_same_pg_on_a_prefix_lstm():
    cfg = CONFIG.get("ci")
    cfg.update(budget=200, batch_size=50, n_test=50)
    s = run_method("sequence_pg", 2, 0, cfg)
    p = run_method("pg", 2, 0, cfg)
    assert s["evals"] == p["evals"] == 200 and s["updates"] == p["updates"] == 4
    assert s["expression"] != p["expression"] or s["nrmse"] != p["nrmse"]  # another generator


def test_headline_is_the_sequence_row_on_the_first_task(tmp_path, monkeypatch):
    from icml26_lit.gcn_sr.experiments import record_claims

    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    cfg = CONFIG.get("ci")
    res = {
        m: [
            dict(task=t, seed=s, recovered=(m == "gcn_sr") or s < 2, nrmse=0.1 + 0.01 * s)
            for t in (1, 6)
            for s in range(8)
        ]
        for m in ("gcn_sr", "sequence_pg", "pg")
    }
    claims = record_claims(res, cfg, "ci")
    heads = [c for c in claims if c.headline]
    assert len(heads) == 1 and "sequence generator on prefix tokens" in heads[0].claim
    assert "Nguyen-1" in heads[0].claim and heads[0].verdict == "holds"  # 6 discordant seeds


@pytest.mark.parametrize("method", ["deap", "pyoperon", "gplearn"])
def test_library_baselines_respect_the_budget(method):
    cfg = CONFIG.get("colab")
    cfg.update(budget=300, gplearn_population=100, n_test=50)
    r = run_method(method, 1, 0, cfg)
    assert r["evals"] <= 300 and r["nrmse"] >= 0 and isinstance(r["recovered"], bool)


def test_run_deap_leaves_the_global_generators_as_they_were():
    "DEAP draws from Python's and NumPy's global generators: run_deap seeds them and restores them."
    import random

    import numpy as np

    from icml26_lit.core import Config
    from icml26_lit.gcn_sr.experiments import run_deap

    cfg = Config(depth=4, n_test=50, budget=60, gplearn_population=20)
    out = []
    for state in (1, 2):
        random.seed(state)
        np.random.seed(state)
        before = random.getstate(), np.random.get_state()[1].copy()
        out.append(run_deap(1, seed=3, cfg=cfg)["nrmse"])
        assert random.getstate() == before[0]
        assert (np.random.get_state()[1] == before[1]).all()
    assert out[0] == out[1]  # the run depends on its seed, not on the caller's global state
