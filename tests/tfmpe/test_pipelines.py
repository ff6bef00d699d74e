"""Budget-matched pipelines, C2ST (against sbi's) and SBC ranks."""

import pytest
import torch

from icml26_lit.tfmpe.pipelines import (
    c2st,
    fit_direct,
    fit_likelihood_factorised,
    fit_posterior_factorised,
    sbc_coverage,
    sbc_ranks,
    stick_breaking_sizes,
)
from icml26_lit.tfmpe.tasks import HierarchicalGaussian, HierarchicalSIR, SimulationBudget

TINY = dict(latent_dim=16, n_heads=2, n_encoder=1, backend="torch")
FK = dict(n_steps=3, batch_size=16)


def test_c2st_matches_sbi(fresh_seed):
    from sbi.utils.metrics import c2st as sbi_c2st

    g = torch.Generator().manual_seed(fresh_seed)
    a = torch.randn(120, 3, generator=g)
    b = torch.randn(120, 3, generator=g) + torch.tensor([0.5, 0.0, -0.2])
    for seed in (0, 3):
        assert c2st(a, b, seed=seed) == pytest.approx(float(sbi_c2st(a, b, seed=seed)), abs=1e-12)


def test_c2st_bad_input():
    with pytest.raises(ValueError, match="a must be a 2-D tensor"):
        c2st(torch.zeros(5), torch.zeros(5, 1))
    with pytest.raises(ValueError, match="same number of columns"):
        c2st(torch.zeros(5, 2), torch.zeros(5, 1))
    with pytest.raises(ValueError, match="b contains NaN"):
        c2st(torch.zeros(5, 1), torch.full((5, 1), float("nan")))
    import numpy as np

    with pytest.raises(TypeError, match="a must be a torch.Tensor .* got ndarray: convert it"):
        c2st(np.zeros((5, 2)), torch.zeros(5, 2))
    with pytest.raises(TypeError, match="b must be a torch.Tensor"):
        c2st(torch.zeros(5, 2), [[0.0, 0.0]] * 5)


def test_sbc_coverage_and_pipelines_reject_bad_arguments():
    ranks = torch.zeros(10, 2, dtype=torch.long)
    for level in (2, 0, 1.0, -0.1):
        with pytest.raises(ValueError, match=r"level must lie in \(0, 1\)"):
            sbc_coverage(ranks, 9, level=level)
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        sbc_coverage(ranks, 0)
    with pytest.raises(TypeError, match="ranks must be a torch.Tensor"):
        sbc_coverage([1, 2], 9)
    task = HierarchicalGaussian(n_sites=3)
    for fit in (fit_direct, fit_likelihood_factorised, fit_posterior_factorised):
        with pytest.raises(ValueError, match="n_sites must be a positive int, got 0"):
            fit(task, SimulationBudget(100), 0, model_kwargs=TINY, fit_kwargs=FK)
        with pytest.raises(ValueError, match=r"val_fraction must lie in \(0, 1\)"):
            fit(task, SimulationBudget(100), 3, val_fraction=1.5, model_kwargs=TINY, fit_kwargs=FK)
        with pytest.raises(TypeError, match="budget must be a SimulationBudget"):
            fit(task, 100, 3, model_kwargs=TINY, fit_kwargs=FK)
    with pytest.raises(ValueError, match="n_sites must be a positive int"):
        stick_breaking_sizes(10, 0)
    with pytest.raises(ValueError, match="n_tests must be a positive int"):
        sbc_ranks(lambda *a: None, task, 3, n_tests=0, n_samples=9)


def test_star_import_gives_the_public_names():
    import icml26_lit.tfmpe as pkg

    ns = {}
    exec("from icml26_lit.tfmpe import *", ns)
    public = {n for n in ns if not n.startswith("__")}
    assert len(pkg.__all__) >= 15 and public == set(pkg.__all__)
    for name in (
        "TFMPE",
        "HierarchicalGaussian",
        "fit_likelihood_factorised",
        "c2st",
        "token_embedding",
        "sbc_coverage",
    ):
        assert name in public


def test_stick_breaking_uses_budget_exactly(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    sizes = stick_breaking_sizes(97, 5, g)
    assert sum(sizes) == 97 and min(sizes) >= 1 and max(sizes) <= 5


@pytest.mark.parametrize("fit", [fit_direct, fit_likelihood_factorised, fit_posterior_factorised])
def test_every_simulation_is_charged(fit):
    task = HierarchicalGaussian(n_sites=3)
    bud = SimulationBudget(240)
    out = fit(
        task, bud, 3, model_kwargs=TINY, fit_kwargs=FK, generator=torch.Generator().manual_seed(0)
    )
    assert 240 - 3 < bud.used <= 240
    assert any("validation" in what for what, _ in bud.log)
    post = out[0] if isinstance(out, tuple) else out
    y = task.simulate(task.sample_prior(2))["y"]
    d = post.sample({"y": y}, 4, n_steps=2)
    assert d["mu"].shape == (4, 2, 1) and d["theta"].shape == (4, 2, 3)


def test_lf_synthetic_sets_have_the_right_structure():
    task = HierarchicalGaussian(n_sites=4)
    bud = SimulationBudget(200)
    post, sur = fit_likelihood_factorised(task, bud, 4, model_kwargs=TINY, fit_kwargs=FK)
    params, obs = post.synthetic
    n = params["mu"].shape[0]
    assert params["theta"].shape == (n, 4) and obs["y"].shape == (n, 4, 4)
    assert n == 200 - 10 - 2 * 4  # single-site draws: budget minus both validation sets
    assert sur.targ_names == ["y"] and sur.events["y"] == (1, 4)


def test_budget_smaller_than_one_batch():
    task = HierarchicalGaussian(n_sites=5)
    with pytest.raises(ValueError, match="smaller than one batch"):
        fit_direct(
            task, SimulationBudget(100), 5, model_kwargs=TINY, fit_kwargs=dict(batch_size=64)
        )
    with pytest.raises(ValueError, match="smaller than one batch"):
        fit_likelihood_factorised(
            task, SimulationBudget(50), 5, model_kwargs=TINY, fit_kwargs=dict(batch_size=64)
        )


def test_lf_runs_on_ragged_function_valued_sir():
    task = HierarchicalSIR(n_sites=2, n_steps=30)
    bud = SimulationBudget(120)
    post, sur = fit_likelihood_factorised(task, bud, 2, model_kwargs=TINY, fit_kwargs=FK)
    fi = task.sample_functional_inputs(1, 2)
    y = task.simulate(task.sample_prior(1), fi)["y"]
    d = post.sample({"y": y}, 3, {"y": fi["y"]}, {"y": fi["mask"]}, n_steps=2)
    assert d["log_beta"].shape == (3, 1, 2) and torch.isfinite(d["log_gamma"]).all()


def test_sbc_ranks_uniform_for_exact_posterior():
    task = HierarchicalGaussian(n_sites=2)
    g = torch.Generator().manual_seed(0)

    def exact(obs, f, m, n):
        d = torch.stack([task.sample_posterior(y, n, generator=g) for y in obs["y"]], 1)
        return {"mu": d[..., :1], "theta": d[..., 1:]}

    ranks = sbc_ranks(exact, task, 2, n_tests=400, n_samples=49, generator=g)
    assert ranks.shape == (400, 3) and ranks.min() >= 0 and ranks.max() <= 49
    assert abs(sbc_coverage(ranks, 49, 0.9) - 0.9) < 0.05

    def overconfident(obs, f, m, n):
        d = exact(obs, f, m, n)
        mean = {k: v.mean(0, keepdim=True) for k, v in d.items()}
        return {k: mean[k] + 0.3 * (v - mean[k]) for k, v in d.items()}

    ranks = sbc_ranks(overconfident, task, 2, n_tests=400, n_samples=49, generator=g)
    assert sbc_coverage(ranks, 49, 0.9) < 0.7
