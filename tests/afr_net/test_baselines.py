"""Chapter 17: the dual-stream GCN/GAT baselines, the 360-region connectome, the larger presets."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.sparse.csgraph import connected_components

from icml26_lit.afr_net.data import (
    cortical_coordinates,
    distance_rule_connectome,
    load_template,
    simulate_cohort,
)
from icml26_lit.afr_net.experiments import (
    CONFIG,
    DualStreamGNN,
    dense_to_edges,
    smoke_step,
)


def _tiny_batch(n_graphs: int, n: int, generator: torch.Generator):
    "SC and FC (n_graphs, n, n) whose first block is stronger in class 1, and the labels."
    y = torch.arange(n_graphs) % 2
    s = torch.rand(n_graphs, n, n, generator=generator, dtype=torch.float64)
    s = (s + s.mT) / 2 * (1 - torch.eye(n, dtype=torch.float64))
    s[:, :3, :3] += 0.5 * y[:, None, None]  # the class signal
    f = torch.randn(n_graphs, n, n, generator=generator, dtype=torch.float64)
    f = (f + f.mT) / 4
    return dict(sc=s * (s > 0.4), fc=f * (f.abs() > 0.3)), y


def test_dense_to_edges_is_the_disjoint_union():
    adj = torch.zeros(2, 4, 4)
    adj[0, 0, 1] = adj[0, 1, 0] = 3.0
    adj[1, 2, 3] = adj[1, 3, 2] = -1.0
    ei, w, batch = dense_to_edges(adj)
    assert ei.tolist() == [[0, 6, 1, 7], [1, 7, 0, 6]] and w.tolist() == [3.0, -1.0, 3.0, -1.0]
    assert batch.tolist() == [0] * 4 + [1] * 4
    with pytest.raises(ValueError, match="adj contains NaN"):
        dense_to_edges(torch.full((1, 2, 2), float("nan")))
    with pytest.raises(ValueError, match="adj must be"):
        dense_to_edges(torch.ones(3, 3))


@pytest.mark.parametrize("kind", ["gcn", "gat"])
def test_gnn_forward_backward_and_training_reduce_the_loss(kind, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    graphs, y = _tiny_batch(16, 10, g)
    torch.manual_seed(fresh_seed)
    net = DualStreamGNN(10, kind, hidden=16, embed=16, heads=2, dropout=0.0)
    logits = net(graphs)
    assert logits.shape == (16, 2) and torch.isfinite(logits).all(), fresh_seed
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(25):
        loss = F.cross_entropy(net(graphs), y)
        opt.zero_grad()
        loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in net.parameters()), fresh_seed
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], (losses, fresh_seed)
    with pytest.raises(ValueError, match="graphs\\['fc'\\] must be"):
        net(dict(sc=graphs["sc"], fc=graphs["fc"][:, :9, :9]))
    with pytest.raises(ValueError, match="kind must be"):
        DualStreamGNN(10, "sage")


def test_gcn_permutation_invariant_and_negative_fc_finite():
    g = torch.Generator().manual_seed(3)
    graphs, _ = _tiny_batch(2, 8, g)
    graphs["fc"] = -graphs["fc"].abs()  # all-negative demands: |F| keeps the GCN finite
    torch.manual_seed(0)
    net = DualStreamGNN(8, "gcn", hidden=8, embed=8).eval()
    perm = torch.randperm(8, generator=g)
    permuted = {k: v[:, perm][:, :, perm] for k, v in graphs.items()}
    out = net(graphs)
    assert torch.isfinite(out).all()
    # node features are matrix rows, so relabelling the nodes relabels the features' columns
    # too; with the first layer's columns permuted alike, the output must not change
    for stream in (net.fc_stream, net.sc_stream):
        w = stream[0].lin.weight
        w.data = w.data[:, perm]
    torch.testing.assert_close(net(permuted), out)


def test_distance_rule_connectome():
    w = distance_rule_connectome(360, seed=0)
    assert w.shape == (360, 360) and np.allclose(w, w.T) and (w >= 0).all()
    assert (np.diag(w) == 0).all() and w.max() == 1.0
    assert connected_components(w > 0)[0] == 1
    xyz = cortical_coordinates(360, seed=0)
    iu = np.triu_indices(360, 1)
    d = np.linalg.norm(xyz[:, None] - xyz[None], axis=-1)[iu]
    bins = np.quantile(d, np.linspace(0, 1, 6))
    means = [w[iu][(d >= lo) & (d < hi)].mean() for lo, hi in zip(bins[:-1], bins[1:])]
    assert all(a > b for a, b in zip(means[:-1], means[1:])), means  # falls with distance
    assert np.polyfit(d, np.log(w[iu]), 1)[0] == pytest.approx(-0.05, abs=0.005)
    np.testing.assert_array_equal(w, distance_rule_connectome(360, seed=0))
    assert not np.allclose(w, distance_rule_connectome(360, seed=1))
    np.testing.assert_array_equal(load_template("edr360"), w)
    with pytest.raises(ValueError, match="n_regions must be an even"):
        distance_rule_connectome(9)
    with pytest.raises(ValueError, match="noise must be"):
        distance_rule_connectome(10, noise=float("nan"))
    with pytest.raises(ValueError, match="decay must be"):
        distance_rule_connectome(10, decay=-1.0)


def test_cohort_at_360_regions():
    coh = simulate_cohort(6, effect=1.0, seed=2, template="edr360")
    assert coh.sc.shape == coh.fc.shape == (6, 360, 360)
    assert all(connected_components(s > 0)[0] == 1 for s in coh.sc)
    assert coh.planted_edges.shape[0] == 2 and coh.planted_edges.max() < 360
    assert all(coh.group_sc[u, v] > 0 for u, v in coh.planted_edges.T)


def test_presets_carry_the_new_keys_and_ci_is_unchanged():
    ci, cpu, colab, full = (CONFIG.get(s) for s in ("ci", "cpu", "colab", "full"))
    assert all(c.gnn_baselines for c in (ci, cpu, colab, full))
    assert (ci.gnn_hidden, cpu.gnn_hidden, colab.gnn_hidden) == (32, 32, 128)
    assert (ci.template, cpu.template, colab.template, full.template) == (
        "hcp",
        "hcp",
        "hcp",
        "edr360",
    )
    assert full.halve_sc and not colab.halve_sc and colab.ablations
    assert (colab.n_subjects, colab.d, colab.layers, colab.epochs) == (2000, 64, [2, 2], 50)
    # the ci preset as committed: the notebook's numbers depend on every one of these
    expected = dict(n_subjects=160, d=32, layers=[1, 1], batch=16, epochs=8, n_seeds=4)
    assert {k: ci[k] for k in expected} == expected
    assert (ci.run_pilot, ci.ablations, ci.halve_sc) == (False, False, False)
    assert (cpu.n_subjects, cpu.epochs, cpu.n_seeds, cpu.run_pilot) == (320, 12, 10, True)


def test_colab_smoke_step_runs_the_gnn_baselines():
    cfg = CONFIG.smoke("colab")
    assert cfg.gnn_baselines and cfg.n_subjects == 160
    smoke_step(cfg)


def test_overview_scale_table_matches_the_presets():
    import json

    from icml26_lit.core import repo_root

    nb = json.loads((repo_root() / "nbs" / "17_afr_net" / "00_overview.ipynb").read_text())
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    rows = {
        s: [ln for ln in text.splitlines() if ln.startswith(f"| `{s}` |")]
        for s in ("ci", "cpu", "colab", "full")
    }
    for scale, lines in rows.items():
        assert len(lines) == 1, f"the table has {len(lines)} rows for {scale}"
        cells = [c.strip() for c in lines[0].split("|")[1:-1]]
        cfg = CONFIG.get(scale)
        assert cells[1].startswith(f"{cfg.n_subjects:,} subjects"), (scale, cells[1])
        assert cells[5] == str(cfg.n_seeds), (scale, cells[5])
        assert cfg.gnn_baselines
        if "width" in cells[3]:
            assert f"width {cfg.gnn_hidden}" in cells[3], (scale, cells[3])
        assert ("360-region" in cells[1]) == (cfg.template == "edr360")
