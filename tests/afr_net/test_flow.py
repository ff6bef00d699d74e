"""Chapter 17: the routed edge energy against closed forms, networkx and autograd; the mask."""

import networkx as nx
import pytest
import torch

from icml26_lit.afr_net.flow import (
    check_edge_index,
    conductance_laplacian,
    edge_energy,
    mask_from_energy,
    task_laplacian,
)
from icml26_lit.afr_net.kernels import edge_energy_loop

D = torch.float64


def _demand(n, pairs):
    f = torch.zeros(n, n, dtype=D)
    for a, b in pairs:
        f[a, b] = f[b, a] = 1.0
    return f


def _random_graph(seed, n=10):
    G = nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=seed % 2**31)
    g = torch.Generator().manual_seed(seed)
    edges = torch.tensor(sorted((min(a, b), max(a, b)) for a, b in G.edges())).T
    cond = torch.rand(edges.shape[1], generator=g, dtype=D) + 0.2
    for (a, b), c in zip(edges.T.tolist(), cond.tolist()):
        G[a][b]["g"] = c
    return G, edges, cond, torch.randn(n, n, generator=g, dtype=D)


def test_path_graph_closed_form():
    path = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    f = _demand(5, [(0, 4)])
    # unit current through every edge: E = 2 * 100 * g * (1/g)^2; ridge 1e-6 shifts ~1e-6 relative
    e = edge_energy(path, torch.ones(4, dtype=D), f)
    torch.testing.assert_close(e, torch.full((4,), 200.0, dtype=D), rtol=1e-5, atol=0)
    e = edge_energy(path, torch.tensor([1.0, 1.0, 0.5, 1.0], dtype=D), f)
    torch.testing.assert_close(e, torch.tensor([200.0, 200, 400, 200], dtype=D), rtol=1e-5, atol=0)


def test_four_cycle_and_pendant():
    # cycle 0-1-2-3-0, demand 0 <-> 2: half a unit current on each edge -> 2 s g (1/2)^2 = 50;
    # the pendant edge 0-4 carries no current (only the ridge's ~1e-6 leak)
    edges = torch.tensor([[0, 1, 2, 0, 0], [1, 2, 3, 3, 4]])
    e = edge_energy(edges, torch.ones(5, dtype=D), _demand(5, [(0, 2)]))
    torch.testing.assert_close(e[:4], torch.full((4,), 50.0, dtype=D), rtol=1e-5, atol=0)
    assert abs(float(e[4])) < 1e-3


def test_total_energy_is_demand_weighted_effective_resistance(fresh_seed):
    G, edges, cond, fc = _random_graph(fresh_seed)
    T = (0.5 * (fc + fc.T)).abs().fill_diagonal_(0)
    n = fc.shape[0]
    want = sum(
        T[i, j].item() * nx.resistance_distance(G, i, j, weight="g", invert_weight=False)
        for i in range(n)
        for j in range(i + 1, n)
    )
    got = edge_energy(edges, cond, fc).sum().item() / 200
    assert abs(got - want) <= 1e-4 * want, (got, want, fresh_seed)  # ridge 1e-6 and float64


def test_energy_is_minus_log_conductance_gradient(fresh_seed):
    _, edges, cond, fc = _random_graph(fresh_seed)
    n, ridge = fc.shape[0], 1e-3  # the direct inverse is accurate at this ridge (see notebook)
    ei = check_edge_index(edges, n)

    def J(logg):
        lg = conductance_laplacian(ei, logg.exp()[None], n, ridge)
        return torch.diagonal(
            task_laplacian(fc[None], ridge) @ torch.linalg.inv(lg), dim1=-2, dim2=-1
        ).sum()

    logg = cond.log().requires_grad_(True)
    (grad,) = torch.autograd.grad(J(logg), logg)
    e = edge_energy(edges, cond, fc, ridge=ridge)
    torch.testing.assert_close(e, -200 * grad, rtol=1e-8, atol=1e-10)
    # central finite differences, step 1e-5 in log g: truncation ~1e-10, rounding ~1e-11 / 1e-5
    gk = torch.Generator().manual_seed(fresh_seed)
    k = int(torch.randint(0, edges.shape[1], (1,), generator=gk))
    step = torch.zeros_like(cond)
    step[k] = 1e-5
    with torch.no_grad():
        fd = (J(cond.log() + step) - J(cond.log() - step)) / 2e-5
    assert abs(float(e[k]) + 200 * float(fd)) <= 1e-5 * abs(float(e[k])) + 1e-8, fresh_seed


def test_batched_energy_equals_official_loop(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    graphs = [_random_graph(fresh_seed + k, n=9) for k in range(3)]
    E = max(e.shape[1] for _, e, _, _ in graphs)
    ei = torch.full((3, 2, E), -1, dtype=torch.long)
    cond = torch.zeros(3, E, dtype=D)
    for k, (_, e, c, _) in enumerate(graphs):
        ei[k, :, : e.shape[1]], cond[k, : e.shape[1]] = e, c
    fc = torch.stack([f for *_, f in graphs]) + 0.01 * torch.randn(3, 9, 9, generator=g, dtype=D)
    # the loop inverts L_g with ridge 1e-6 directly: ~eps / delta^2 = 1e-4 relative cancellation
    torch.testing.assert_close(
        edge_energy(ei, cond, fc), edge_energy_loop(ei, cond, fc), rtol=2e-4, atol=1e-9
    )


def test_mask_range_top_edge_and_ties(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    e = torch.rand(50, generator=g, dtype=D) * 100
    s = torch.rand(50, generator=g, dtype=D) + 0.01
    m = mask_from_energy(e, s)
    assert bool(((m > 0) & (m < 1)).all())
    m0 = mask_from_energy(e, s, lam=0.0, theta=0.0)
    assert abs(float(m0.max()) - 0.99966) < 1e-5 and int(m0.argmax()) == int(e.argmax())
    flat = mask_from_energy(torch.full((5,), 2.0), torch.ones(5))  # equal energies: finite
    assert torch.isfinite(flat).all() and torch.allclose(flat, torch.full((5,), 0.5))


def test_bad_inputs():
    path = torch.tensor([[0, 1], [1, 2]])
    f = _demand(3, [(0, 2)])
    one = torch.ones(2, dtype=D)
    with pytest.raises(ValueError, match="u < v"):
        edge_energy(path.flip(0), one, f)
    with pytest.raises(ValueError, match="out of range"):
        edge_energy(torch.tensor([[0, 1], [1, 3]]), one, f)
    with pytest.raises(ValueError, match="fc must be square"):
        edge_energy(path, one, torch.ones(3, 4, dtype=D))
    with pytest.raises(ValueError, match="fc contains"):
        edge_energy(path, one, f * float("nan"))
    with pytest.raises(ValueError, match=r"disconnected .*\[\[3\]\]"):
        edge_energy(path, one, _demand(4, [(0, 2)]))
    with pytest.raises(ValueError, match="conductance must be positive"):
        edge_energy(path, -one, f)
    with pytest.raises(ValueError, match="tau must be positive"):
        mask_from_energy(one, one, tau=0.0)


def test_mask_rejects_negative_energy(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    e = torch.rand(2, 20, generator=g, dtype=D) * 100
    s = torch.rand(2, 20, generator=g, dtype=D) + 0.01
    bad = e.clone()
    bad[1, 3] = -1.0  # an all-NaN mask before the check
    with pytest.raises(ValueError, match="energy must be non-negative"):
        mask_from_energy(bad, s)
    valid = torch.ones(2, 20, dtype=torch.bool)
    valid[1, 3] = False  # a padded entry is not read
    assert torch.isfinite(mask_from_energy(bad, s, valid=valid)).all()
    with pytest.raises(ValueError, match="sc_weight must be non-negative"):
        mask_from_energy(e, -s)
    # rounding-level negatives of the closed form read as zero energy
    tiny = e.clone()
    tiny[0, 0] = -1e-12
    zero = e.clone()
    zero[0, 0] = 0.0
    torch.testing.assert_close(mask_from_energy(tiny, s), mask_from_energy(zero, s))
