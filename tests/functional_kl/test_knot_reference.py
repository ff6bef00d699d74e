"""Chapter 11: the knot-law reference, the OU benchmark's exact KL, checkpoints, exercise 11.4."""

import math

import pytest
import torch

import icml26_lit.functional_kl  # noqa: F401  registers the exercises
from icml26_lit.core import Config
from icml26_lit.core.exercises import EXERCISES, check
from icml26_lit.functional_kl import GaussianNoise, ou_grid_kl, ou_path_kl, sample_importance_times
from icml26_lit.functional_kl.experiments import (
    CONFIG,
    OBSERVED,
    OU_THETAS,
    checkpoint_steps,
    knot_kl_gap,
    knot_log_density,
    ou_pair_kl,
    run_ti_seed,
    ti_data,
)
from icml26_lit.functional_kl.trajectory import couple_chains, knot_variance, snapshot_index


def _tiny(**kw):
    base = dict(n_cells=60, n_fill=2, n_eval=16, n_ref=400, steps=6, batch=16, width=16, n_t=3)
    return Config({**CONFIG.get("ci"), **base, **kw})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_knot_log_density_is_the_gaussian_mixture(seed):
    g = torch.Generator().manual_seed(seed)
    y, c = torch.randn(7, 4, 2, generator=g), torch.randn(5, 4, 2, generator=g)
    eta = torch.rand(4, 2, generator=g) + 0.3
    comp = torch.distributions.Normal(c[None].double(), eta.double())
    want = comp.log_prob(y[:, None].double()).sum((2, 3)).logsumexp(1) - math.log(5)
    torch.testing.assert_close(knot_log_density(y, c, eta), want)


def test_knot_kl_is_positive_under_each_arms_own_law():
    "E_p[log p - log q] = KL(p || q) > 0 for the OT and random knot laws of one seed."
    cfg = _tiny()
    train, *_ = ti_data(0, cfg)
    snaps = [train["true"][: cfg.n_cells, j] for j in snapshot_index(cfg.M)]  # any cells will do
    s_obs = [snaps[k] for k in OBSERVED]
    eta = torch.stack([knot_variance(x) for x in s_obs]).sqrt()
    g = torch.Generator().manual_seed(3)
    ch = {a: couple_chains(s_obs, a, g) for a in ("ot", "random")}
    for a, b in (("ot", "random"), ("random", "ot")):
        y = ch[a][torch.randint(cfg.n_cells, (2000,), generator=g)]
        y = y + eta * torch.randn(y.shape, generator=g, dtype=torch.float64)
        assert (knot_log_density(y, ch[a], eta) - knot_log_density(y, ch[b], eta)).mean() > 0


def test_knot_kl_gap_rebuilds_the_training_chains():
    "The arms' training knots are the rebuilt chains plus N(0, eta^2) jitter."
    cfg = _tiny(n_cells=200)
    train, *_ = ti_data(0, cfg)
    from icml26_lit.functional_kl.experiments import _snapshots

    _, snaps = _snapshots(0, cfg)
    s_obs = [snaps[k] for k in OBSERVED]
    eta = torch.stack([knot_variance(x) for x in s_obs]).sqrt()
    times = [snapshot_index(cfg.M)[k] for k in OBSERVED]
    for arm in ("ot", "random"):
        chains = couple_chains(s_obs, arm, torch.Generator().manual_seed(len(arm)))
        z = (train[arm][: cfg.n_cells, times] - chains) / eta
        assert abs(z.std().item() - 1) < 0.1 and abs(z.mean().item()) < 0.1


def test_knot_kl_gap_is_seeded_and_leaves_the_global_rng_alone():
    cfg = _tiny()
    torch.manual_seed(1)
    state = torch.get_rng_state()
    a = knot_kl_gap(0, cfg)
    assert torch.equal(torch.get_rng_state(), state)
    torch.manual_seed(99)
    assert knot_kl_gap(0, cfg) == a and math.isfinite(a["gap"]) and a["stderr"] > 0


def test_ou_pair_kl_lies_below_the_grid_kl_and_near_girsanov():
    "Projecting onto the noise's modes cannot raise a KL; the modes see most of it."
    noise = GaussianNoise(32, 8)
    proj, grid = ou_pair_kl(noise), ou_grid_kl(*OU_THETAS, 1, 1, 32)
    assert 0 < proj < grid and abs(proj / ou_path_kl(*OU_THETAS, 1, 1) - 1) < 0.06


def test_checkpoints_leave_the_final_estimates_unchanged():
    assert checkpoint_steps(3000, 4) == [750, 1500, 2250, 3000]
    one, three = run_ti_seed(0, _tiny(checkpoints=1)), run_ti_seed(0, _tiny(checkpoints=3))
    for k in ("fkl_fwd_ot", "fkl_fwd_random", "fkl_rev_null", "final_loss"):
        assert one[k] == three[k], k
    steps, curve = three["fkl_curve"]
    assert steps == [2, 4, 6] and all(len(v) == 3 for v in curve.values())


def test_exercise_11_4_checks_the_capped_weight_sampler():
    ex = EXERCISES["11.4"]
    assert check("11.4", ex.reference, quiet=True).status == "correct"
    for wrong in ex.wrong:
        assert check("11.4", wrong, quiet=True).status == "incorrect"
    g = torch.Generator().manual_seed(5)
    u = torch.rand(500, generator=g, dtype=torch.float64).clamp_min(1e-12)
    t = sample_importance_times(500, 0.9, torch.Generator().manual_seed(5))
    torch.testing.assert_close(ex.reference(u, 0.9), t, rtol=1e-12, atol=1e-12)
