"""Chapter 17: the experiment's pieces (split, rankings, baselines), the committed pilot picks."""

import json

import numpy as np
import pytest
import torch

from icml26_lit.afr_net.experiments import (
    CONFIG,
    class_difference,
    group_edges,
    make_data,
    pathway_auroc,
    rankings,
    split_indices,
    train_afrnet,
)
from icml26_lit.core import results_dir


def test_split_is_the_official_30_10():
    tr, va, te = split_indices(160, 0)
    assert (len(tr), len(va), len(te)) == (96, 16, 48)
    assert len(set(torch.cat([tr, va, te]).tolist())) == 160
    assert not torch.equal(split_indices(160, 1)[2], te)


def test_pathway_auroc_closed_forms():
    planted = np.array([True, False, False, True])
    assert pathway_auroc([4.0, 1.0, 2.0, 3.0], planted) == 1.0
    assert pathway_auroc([1.0, 4.0, 3.0, 2.0], planted) == 0.0
    assert pathway_auroc([1.0, 1.0, 1.0, 1.0], planted) == 0.5
    with pytest.raises(ValueError, match="planted must mark"):
        pathway_auroc([1.0, 2.0], [True, True])
    with pytest.raises(ValueError, match="one length"):
        pathway_auroc([1.0, 2.0, 3.0], [True, False])


def test_class_difference_reads_the_right_edges():
    ei = torch.tensor([[[0, 1, -1], [1, 2, -1]], [[0, -1, -1], [2, -1, -1]]])
    vals = torch.tensor([[1.0, 2.0, 9.0], [5.0, 9.0, 9.0]])
    edges = np.array([[0, 0, 1], [1, 2, 2]])
    d = class_difference(vals, ei, np.array([1, 0]), edges, 3)
    np.testing.assert_allclose(d, [1.0, -5.0, 2.0])  # pads ignored, missing edges count 0


def test_rankings_and_training_run_on_a_small_cohort():
    cfg = CONFIG.get("ci")
    cfg.update(n_subjects=40, epochs=1)
    data = make_data(cfg, 0, cfg.effect)
    edges, planted = group_edges(data["cohort"])
    assert planted.sum() == data["cohort"].planted_edges.shape[1]
    r = train_afrnet(data, cfg, 0, cfg.lr)
    assert 0 <= r["test_auc"] <= 1 and r["test_masks"].shape[0] == 12
    out = rankings(data, r["test_masks"], cfg)
    assert set(out) == {"dfc", "ds", "routed", "mask"} and all(0 <= v <= 1 for v in out.values())


def test_ci_preset_carries_the_committed_pilot_picks():
    cfg = CONFIG.get("ci")
    pilot = json.loads((results_dir() / "afr_net" / "pilot_cpu.json").read_text())["pilot"]
    assert (cfg.lr, cfg.effect) == (pilot["lr"], pilot["effect"])
    assert (dict(cfg.gnn_lr), cfg.strongest) == (pilot["gnn_lr"], pilot["strongest"])
    # every network's rate: the best mean held-out pilot AUC over the same grid (ties: smaller)
    picked = dict(afr=pilot["lr"], **pilot["gnn_lr"])
    for net, by_lr in pilot["held_out_auc_by_lr"].items():
        by_lr = {float(r): a for r, a in by_lr.items()}
        assert sorted(by_lr) == sorted(cfg.lr_grid), net
        best = max(by_lr.values())
        assert by_lr[picked[net]] == best, net
        assert picked[net] == min(r for r, a in by_lr.items() if a == best), net
    # the calibration: the effects were tried largest first; every one before the pick had an
    # arm above the ceiling, and the pick has none (or is the grid's last value)
    tried = [float(e) for e in pilot["test_auc_by_effect"]]
    assert tried == cfg.effect_grid[: len(tried)] and tried[-1] == pilot["effect"]
    tops = [max(v.values()) for v in pilot["test_auc_by_effect"].values()]
    assert all(t > cfg.ceiling for t in tops[:-1])
    assert tops[-1] <= cfg.ceiling or len(tried) == len(cfg.effect_grid)
    # the stronger graph baseline: the higher mean test AUC at the picked effect
    at = pilot["test_auc_by_effect"][str(pilot["effect"])]
    assert at[pilot["strongest"]] == max(at["gcn"], at["gat"])


def test_rankings_on_a_one_class_test_split_are_chance():
    cfg = CONFIG.get("ci")
    data = make_data(cfg, 0, cfg.effect, n_subjects=40)
    tr, va, te = data["split"]
    one = te[data["y"][te] == data["y"][te][0]]  # the test subjects of one class only
    data["split"] = (tr, va, one)
    assert rankings(data, cfg=cfg) == dict(dfc=0.5, ds=0.5, routed=0.5)


@pytest.mark.parametrize("arm", ["afr", "gcn"])
def test_training_is_seeded_locally(arm):
    "Same numbers under two global RNG states, and the global state is left as it was."
    from icml26_lit.afr_net.experiments import train_gnn

    cfg = CONFIG.get("ci")
    cfg.update(n_subjects=40, epochs=1, gnn_hidden=8)
    data = make_data(cfg, 0, cfg.effect)
    out = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        state = torch.random.get_rng_state()
        if arm == "afr":
            r = train_afrnet(data, cfg, 3, cfg.lr)
        else:
            r = train_gnn(data, cfg, 3, cfg.lr, "gcn")
        assert torch.equal(torch.random.get_rng_state(), state)
        out.append(
            (r["test_auc"], r["curve"], [p.detach().clone() for p in r["model"].parameters()])
        )
    assert out[0][:2] == out[1][:2]
    assert all(torch.equal(p, q) for p, q in zip(out[0][2], out[1][2]))
