"""Chapter 17: templates, preprocessing and the cohort simulator."""

import numpy as np
import pytest
import torch
from scipy.sparse.csgraph import dijkstra, shortest_path

from icml26_lit.afr_net.data import (
    filter_fc,
    load_template,
    prepare_graphs,
    preprocess_sc,
    simulate_cohort,
    template_names,
)


def test_templates():
    names = template_names()
    assert len(names) == 12 and "hcp/101309" in names
    s = load_template("gw/NAP_001")
    assert s.shape == (94, 94) and np.allclose(s, s.T) and s.max() == 1 and (np.diag(s) == 0).all()
    with pytest.raises(ValueError, match="name must be"):
        load_template("abcd")


def test_preprocess_and_filter(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    s = preprocess_sc(torch.rand(3, 10, 10, generator=g, dtype=torch.float64) * 1e4)
    assert torch.allclose(s.amin((1, 2)), torch.zeros(3, dtype=torch.float64))
    assert torch.allclose(s.amax((1, 2)), torch.ones(3, dtype=torch.float64))
    n = 40
    f = torch.randn(n, n, generator=g, dtype=torch.float64)  # distinct magnitudes
    kept = float((filter_fc(f) != 0).double().mean())
    assert abs(kept - 0.3) <= 1 / n**2, (kept, fresh_seed)
    with pytest.raises(ValueError, match="sc must be non-negative"):
        preprocess_sc(-torch.ones(3, 3))
    with pytest.raises(ValueError, match="keep must lie"):
        filter_fc(f, keep=1.5)
    with pytest.raises(ValueError, match="fc must be square"):
        filter_fc(torch.ones(2, 3))
    with pytest.raises(ValueError, match="sc contains"):
        preprocess_sc(torch.full((3, 3), float("inf")))


def test_planted_edges_lie_on_paths_between_planted_pairs():
    coh = simulate_cohort(12, effect=0.5, seed=3, paths="strongest")
    group = coh.group_sc
    inv = np.where(group > 0, 1 / np.maximum(group, 1e-300), 0)
    dist = dijkstra(inv, directed=False)
    pe = coh.planted_edges
    assert pe.shape[0] == 2 and (pe[0] < pe[1]).all() and 2 <= pe.shape[1] <= 12
    for u, v in pe.T:
        assert group[u, v] > 0  # an SC edge
        # on the strongest path of some planted pair: d(a,u) + w(u,v) + d(v,b) = d(a,b)
        on = [
            min(dist[a, u] + inv[u, v] + dist[v, b], dist[a, v] + inv[u, v] + dist[u, b])
            <= dist[a, b] * (1 + 1e-9)
            for a, b in coh.planted_pairs
        ]
        assert any(on), (u, v)
    for a, b in coh.planted_pairs:
        assert group[a, b] == 0  # not SC-adjacent


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_median_paths_join_the_pairs_through_middle_weights(seed):
    coh = simulate_cohort(4, effect=0.5, seed=seed)  # paths="median", the default
    group, pe = coh.group_sc, coh.planted_edges
    w = group[np.triu_indices_from(group, 1)]
    q1, q3 = np.quantile(w[w > 0], [0.25, 0.75])
    assert ((group[pe[0], pe[1]] >= q1) & (group[pe[0], pe[1]] <= q3)).all()
    # each pair is joined by planted edges alone, in 2 to 4 hops, and is not SC-adjacent
    adj = np.zeros_like(group, dtype=bool)
    adj[pe[0], pe[1]] = adj[pe[1], pe[0]] = True
    hops = shortest_path(adj, unweighted=True, directed=False)
    for a, b in coh.planted_pairs:
        assert group[a, b] == 0 and 2 <= hops[a, b] <= 4
    with pytest.raises(ValueError, match="paths must be"):
        simulate_cohort(4, effect=0.5, paths="weakest")


def test_cohort_shapes_effect_and_seeds():
    coh = simulate_cohort(40, effect=1.0, seed=0)
    assert coh.sc.shape == coh.fc.shape == (40, 94, 94) and set(np.unique(coh.y)) <= {0, 1}
    density = (coh.sc > 0).mean((1, 2))
    assert (density > 0.28).all() and (density < 0.36).all()  # 30 % plus a spanning tree
    a, b = coh.planted_pairs[0]
    assert coh.fc[coh.y == 1, a, b].mean() > coh.fc[coh.y == 0, a, b].mean() + 0.1
    other = simulate_cohort(40, effect=1.0, seed=1)
    assert not np.array_equal(other.planted_pairs, coh.planted_pairs) or not np.allclose(
        other.fc, coh.fc
    )
    with pytest.raises(ValueError, match="n_subjects"):
        simulate_cohort(0, 1.0)
    with pytest.raises(ValueError, match="effect"):
        simulate_cohort(10, float("nan"))


def test_prepare_graphs():
    coh = simulate_cohort(4, effect=0.5, seed=0)
    b = prepare_graphs(coh.sc, coh.fc)
    ei = b["edge_index"]
    for k in range(4):
        n_e = int((ei[k, 0] >= 0).sum())
        assert n_e == int((np.triu(coh.sc[k], 1) > 0).sum())
        assert (ei[k, 0, :n_e] < ei[k, 1, :n_e]).all()
    assert b["x"].dtype == torch.float32 and b["spd"].max() < 94
