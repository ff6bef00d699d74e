"""Chapter 03's experiment code: seeded runs ignore the global generators, arms and pilot grids."""

import numpy as np
import pytest
import torch

from icml26_lit.ro_hnn.experiments import ARMS, CONFIG, run_pilot, run_seed

TINY = dict(
    n_pendula=5,
    dims=[5, 3, 2],
    n_train=3,
    n_test=2,
    train_steps=12,
    test_steps=20,
    batch=4,
    steps=3,
)


def _tiny(**kw):
    cfg = CONFIG.get("ci")
    return type(cfg)(dict(cfg, **TINY, **kw))


def _numbers(r):
    return [r[a][k] for a in ARMS if a in r for k in ("rmse_1x", "rmse_10x", "drift", "final_loss")]


def test_run_seed_neither_reads_nor_moves_the_global_generators(fresh_seed):
    cfg, out = _tiny(), []
    for s in (fresh_seed, fresh_seed + 1):
        torch.manual_seed(s)
        np.random.seed(s % 2**32)
        torch_state, np_state = torch.get_rng_state(), np.random.get_state()[1].copy()
        out.append(_numbers(run_seed(cfg, 0)))
        assert torch.equal(torch.get_rng_state(), torch_state)
        assert np.array_equal(np.random.get_state()[1], np_state)
    assert out[0] == out[1]


def test_arms_subset_and_bad_arms():
    r = run_seed(_tiny(), 1, arms=("rohnn", "node"))
    assert "mlp_hnn" not in r and {"rohnn", "node"} <= set(r)
    with pytest.raises(ValueError, match="arms must be"):
        run_seed(_tiny(), 1, arms=("rohnn", "sindy"))
    with pytest.raises(ValueError, match="arms must be"):
        run_seed(_tiny(), 1, arms=())


def test_pilot_picks_each_arm_from_its_own_grid():
    grids = dict(rohnn=[1e-3, 3e-3], node=[3e-3, 1e-2], mlp_hnn=[1e-3, 3e-3])
    p = run_pilot(_tiny(pod_band=[0.0, 1.0], lr_grids=grids))
    assert all(p["lrs"][a] in grids[a] for a in ARMS)
    assert [s["node"]["lr"] for s in p["lr_sweep"]] == grids["node"]
    assert set(p["at_edge"]) == set(ARMS)  # two rates: every pick is at an edge
    with pytest.raises(ValueError, match="same length"):
        run_pilot(_tiny(pod_band=[0.0, 1.0], lr_grids=dict(grids, node=[1e-2])))


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_presets_give_every_arm_three_rates_with_its_pick_inside(scale):
    cfg = CONFIG.get(scale)
    assert set(cfg.lr_grids) == set(ARMS) == set(cfg.lrs)
    for a in ARMS:
        assert len(cfg.lr_grids[a]) == 3 and cfg.lrs[a] in cfg.lr_grids[a]
    assert 5 <= cfg.n_ablation_seeds <= cfg.n_seeds
