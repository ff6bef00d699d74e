"Chapter 10's experiment plumbing: seeded runs that leave the global RNG alone, the prior floor."

import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from icml26_lit.tfmpe.experiments import (
    CONFIG,
    PriorPosterior,
    evaluate,
    fit_method,
    methods_for,
    record_claims,
)
from icml26_lit.tfmpe.pipelines import sbc_coverage_error
from icml26_lit.tfmpe.tasks import HierarchicalGaussian


def _tiny(**kw):
    ci = CONFIG.get("ci")
    small = dict(
        ci,
        n_steps=2,
        npe_epochs=1,
        n_test=2,
        n_post=20,
        n_c2st=1,
        n_sbc=0,
        sample_steps=2,
        batch_size=16,
        latent_dim=16,
        n_encoder=1,
    )
    return type(ci)(dict(small, **kw))


def _global_states():
    return torch.get_rng_state(), np.random.get_state()[1].copy(), random.getstate()


def _same_states(a, b) -> bool:
    return torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]


def _reseed_globals(outer: int) -> None:
    torch.manual_seed(outer)
    np.random.seed(outer)
    random.seed(outer)


@pytest.mark.parametrize("method", ["LF-TFMPE", "direct TFMPE", "sbi NPE"])
def test_fit_and_evaluate_leave_the_global_rng_alone(method):
    # fit_method and evaluate draw from local generators (sbi's draws from a forked, seeded
    # global RNG): the caller's torch, numpy and python RNGs are neither reseeded nor consumed,
    # and the numbers do not depend on them
    cfg, task, scores = _tiny(n_sbc=3, sbc_samples=9), HierarchicalGaussian(n_sites=2), []
    for outer in (1, 2):
        _reseed_globals(outer)
        state = _global_states()
        post, _, _ = fit_method(method, task, 2, 100, cfg, seed=3)
        assert _same_states(state, _global_states()), f"{method}: fit_method moved the RNG"
        res = evaluate(post, task, 2, cfg, seed=3)
        assert _same_states(state, _global_states()), f"{method}: evaluate moved the RNG"
        scores.append((res["c2st"], res["rmse"], res["sbc_err"], res["samples"]))
    assert scores[0][:3] == scores[1][:3] and torch.equal(scores[0][3], scores[1][3])


def test_the_prior_floor_is_near_chance_worst():
    # the prior used as the posterior: C2ST far from 0.5 against the exact posterior, and an RMSE
    # above that of the exact posterior's own draws
    cfg = _tiny(n_test=4, n_post=200, n_c2st=2)
    task = HierarchicalGaussian(n_sites=3)
    res = evaluate(PriorPosterior(task, 3, seed=0), task, 3, cfg, seed=0)
    assert res["c2st"] > 0.75 and res["rmse"] > 0.2


def test_the_prior_is_calibrated():
    # why the coverage rows have no floor: the prior as the posterior has SBC ranks that are
    # uniform, so its coverage error is only the noise of 60 test sets x 3 parameters
    cfg = _tiny(n_sbc=60, sbc_samples=99)
    task = HierarchicalGaussian(n_sites=2)
    res = evaluate(PriorPosterior(task, 2, seed=0), task, 2, cfg, seed=0)
    assert res["sbc_err"] < 0.06


def test_the_coverage_error_rejects_no_levels():
    with pytest.raises(ValueError, match="levels must name at least one level"):
        sbc_coverage_error(torch.arange(10), 9, levels=())


def test_importing_the_chapter_leaves_the_global_rng_alone():
    code = (
        "import random, numpy as np, torch\n"
        "torch.manual_seed(0); np.random.seed(0); random.seed(0)\n"
        "s = (torch.get_rng_state(), np.random.get_state()[1].copy(), random.getstate())\n"
        "import icml26_lit.tfmpe, icml26_lit.tfmpe._solutions\n"
        "assert torch.equal(s[0], torch.get_rng_state()), 'import moved the torch RNG'\n"
        "assert (s[1] == np.random.get_state()[1]).all(), 'import moved the numpy RNG'\n"
        "assert s[2] == random.getstate(), 'import moved the python RNG'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _fake_results(cfg, lf, direct, npe=0.7, prior=0.95):
    "Results of every (S, B, seed, method) with fixed scores: LF, direct, NPE and the prior."
    out, score = {}, {"LF-TFMPE": lf, "direct TFMPE": direct, "sbi NPE": npe, "prior": prior}
    for S in cfg.sites:
        for s in range(cfg.n_seeds):
            for m in [*methods_for(cfg), "prior"]:
                v = score[m] + 0.01 * ((s * 7 + S) % 5)  # a paired, seed-to-seed spread
                out[(S, cfg.budgets[0], s, m)] = dict(c2st=v, rmse=v / 3, sbc_err=v / 10)
    return out


def test_the_headline_is_lf_against_direct_at_the_largest_s(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    cfg = CONFIG.get("cpu")
    rows = record_claims(_fake_results(cfg, 0.6, 0.8), cfg, "cpu")
    # every row is stored (a claim's file is named by its first 60 characters)
    assert len(list(tmp_path.glob("10--*.json"))) == len(rows) == 5
    heads = [c for c in rows if c.headline]
    assert len(heads) == 1 and heads[0].claim.startswith(f"S={max(cfg.sites)} sites")
    assert "direct TFMPE" in heads[0].claim and heads[0].verdict == "holds"
    assert any(
        c.claim.startswith(f"S={min(cfg.sites)} sites") for c in rows
    )  # the smaller S beside it
    assert any("calibrated" in c.claim for c in rows) == bool(cfg.n_sbc)
    # direct better than LF: the headline does not hold
    rows = record_claims(_fake_results(cfg, 0.8, 0.6), cfg, "cpu")
    assert [c.verdict for c in rows if c.headline] == ["does not hold"]
