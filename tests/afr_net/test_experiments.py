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
from icml26_lit.core import repo_root


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
    path = repo_root() / "results" / "afr_net" / "pilot_cpu.json"
    pilot = json.loads(path.read_text())["pilot"]
    cfg = CONFIG.get("ci")
    assert cfg.lr == pilot["lr"] and cfg.effect == pilot["effect"]
    lo, hi = cfg.auc_band
    assert lo <= pilot["lr_auc_by_effect"][str(pilot["effect"])] <= hi
