"""Tests of icml26_lit.md.graph: exact radius graph, deterministic CSR."""

import pytest
import torch

from icml26_lit.md.graph import build_csr, build_csr_pair, radius_graph


def _brute(pos, r, batch, loop=False):
    n = pos.shape[0]
    return [
        (j, i)
        for i in range(n)
        for j in range(n)
        if (loop or i != j) and batch[i] == batch[j] and float((pos[i] - pos[j]).norm()) < r
    ]


@pytest.mark.parametrize("loop", [False, True])
def test_radius_graph_matches_brute_force(fresh_seed, loop):
    g = torch.Generator().manual_seed(fresh_seed)
    sizes = [7, 1, 13, 4]
    batch = torch.cat([torch.full((s,), k) for k, s in enumerate(sizes)])
    pos = torch.rand(batch.numel(), 3, generator=g, dtype=torch.float64) * 5
    ei = radius_graph(pos, 2.7, batch, loop=loop)
    assert [tuple(e) for e in ei.t().tolist()] == _brute(pos, 2.7, batch, loop)
    assert torch.equal(radius_graph(pos, 2.7, batch, loop=loop, chunk=5), ei)


def test_no_neighbour_cap():
    pos = torch.randn(300, 3) * 0.01  # everyone within r of everyone: 299 neighbours each
    ei = radius_graph(pos, 1.0)
    assert ei.shape[1] == 300 * 299
    assert torch.equal(torch.bincount(ei[1]), torch.full((300,), 299))


def test_radius_graph_bad_input():
    pos = torch.randn(5, 3)
    with pytest.raises(ValueError, match="r must be a positive"):
        radius_graph(pos, 0.0)
    with pytest.raises(ValueError, match="batch must have shape"):
        radius_graph(pos, 1.0, torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="sorted"):
        radius_graph(pos, 1.0, torch.tensor([0, 1, 0, 1, 1]))
    with pytest.raises(ValueError, match="pos contains NaN"):
        radius_graph(torch.full((2, 3), float("nan")), 1.0)
    with pytest.raises(ValueError, match="pos must have shape"):
        radius_graph(torch.randn(5, 2), 1.0)
    assert radius_graph(torch.empty(0, 3), 1.0).shape == (2, 0)


def test_build_csr_segments_and_stability(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    dst = torch.randint(0, 9, (57,), generator=g)
    dst[dst == 4] = 5  # node 4 gets no edge
    ptr, perm = build_csr(dst, 10)
    assert ptr[0] == 0 and ptr[-1] == 57 and ptr[5] == ptr[4]
    for i in range(10):
        seg = perm[ptr[i] : ptr[i + 1]]
        assert bool((dst[seg] == i).all())
        assert torch.equal(seg, torch.sort(seg).values)  # stable: original order within a node
    ptr2, perm2 = build_csr(dst, 10)
    assert torch.equal(perm, perm2)


def test_build_csr_bad_input():
    with pytest.raises(ValueError, match="outside"):
        build_csr(torch.tensor([0, 3]), 3)
    with pytest.raises(TypeError, match="dst must be"):
        build_csr(torch.tensor([0.0]), 3)
    with pytest.raises(ValueError, match="edge_index must have shape"):
        build_csr_pair(torch.zeros(3, 2, dtype=torch.long), 3)


# ---- linked-cell search and bipartite graphs (issue 42) ----


def _cdist_graph(pos, r, batch, loop=False):
    "Brute force with torch.cdist: every ordered pair, sorted by (target, source)."
    # difference-based cdist (no matmul expansion), so lattice distances come out exact
    d = torch.cdist(pos.double(), pos.double(), compute_mode="donot_use_mm_for_euclid_dist")
    keep = (d < r) & (batch[:, None] == batch[None, :])
    if not loop:
        keep.fill_diagonal_(False)
    i, j = keep.nonzero(as_tuple=True)  # row-major: sorted by target i, then source j
    return torch.stack([j, i])


@pytest.mark.parametrize("loop", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16])
def test_cell_search_equals_dense(fresh_seed, loop, dtype):
    g = torch.Generator().manual_seed(fresh_seed)
    sizes = [40, 1, 200, 3, 90]
    batch = torch.cat([torch.full((s,), k) for k, s in enumerate(sizes)])
    pos = (torch.rand(batch.numel(), 3, generator=g, dtype=torch.float64) * 7).to(dtype)
    dense = radius_graph(pos, 1.7, batch, loop=loop, method="dense")
    for chunk in (1 << 24, 50, 1):  # chunk 1: one target per block
        cell = radius_graph(pos, 1.7, batch, loop=loop, chunk=chunk, method="cell")
        assert torch.equal(cell, dense), (fresh_seed, chunk)


def test_cell_search_ties_at_the_cutoff():
    # an integer lattice with r = 1, 2, 3: many pairs sit exactly at the cutoff (d^2 = 1, 4, 9),
    # where `<` must exclude them in both searches; float64 integers make every distance exact
    ax = torch.arange(6, dtype=torch.float64)
    pos = torch.cartesian_prod(ax, ax, ax)
    for r in (1.0, 2.0, 3.0):
        dense = radius_graph(pos, r, method="dense")
        assert torch.equal(radius_graph(pos, r, method="cell"), dense)
        assert torch.equal(dense, _cdist_graph(pos, r, torch.zeros(216, dtype=torch.long)))
    # r = 1: no neighbours at all (every lattice neighbour is exactly at distance 1)
    assert radius_graph(pos, 1.0, method="cell").shape == (2, 0)
    # the same lattice scaled by 0.1 in float32: ties now decided by rounding, both alike
    p32 = (pos * 0.1).float()
    for r in (0.1, 0.2):
        assert torch.equal(
            radius_graph(p32, r, method="cell"), radius_graph(p32, r, method="dense")
        )


def test_cell_search_awkward_inputs(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    # far-apart clusters (cell key compression), large offsets, all points in one cell
    blobs = [torch.randn(30, 3, generator=g, dtype=torch.float64) + c for c in (0.0, 1e6, -3e9)]
    for pos in (torch.cat(blobs), torch.randn(60, 3, generator=g) * 1e-3 + 1e4):
        for r in (0.5, 2.5, 1e-6):
            assert torch.equal(
                radius_graph(pos, r, method="cell"), radius_graph(pos, r, method="dense")
            )
    one = torch.randn(300, 3, generator=g) * 0.01
    assert radius_graph(one, 1.0, method="cell").shape[1] == 300 * 299
    assert radius_graph(one[:1], 1.0, method="cell").shape == (2, 0)
    assert torch.equal(
        radius_graph(one[:1], 1.0, loop=True, method="cell"), torch.zeros(2, 1).long()
    )


def test_auto_uses_cells_above_4096_and_matches_cdist(fresh_seed):
    from icml26_lit.md import graph

    g = torch.Generator().manual_seed(fresh_seed)
    n = graph.CELL_SEARCH_ABOVE + 904  # 5,000 points: the linked-cell path
    pos = torch.rand(n, 3, generator=g, dtype=torch.float64) * 30
    batch = torch.zeros(n, dtype=torch.long)
    batch[3000:] = 1
    ei = radius_graph(pos, 2.0, batch)
    assert torch.equal(ei, _cdist_graph(pos, 2.0, batch))
    assert torch.equal(ei, graph._cell_search(pos, pos, 2.0, batch, batch, 1 << 24, loop=False))


@pytest.mark.parametrize("method", ["dense", "cell", "auto"])
def test_bipartite_radius_graph_equals_cdist(fresh_seed, method):
    from icml26_lit.md.graph import bipartite_radius_graph

    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.rand(57, 3, generator=g, dtype=torch.float64) * 8
    y = torch.rand(131, 3, generator=g, dtype=torch.float64) * 8
    x[:5] = torch.randint(0, 8, (5, 3), generator=g).double()  # integer points: exact distances
    y[:5] = x[:5] + torch.tensor([2.0, 0.0, 0.0], dtype=torch.float64)  # exact ties at r = 2
    for r in (0.3, 2.0, 4.5):
        keep = torch.cdist(y, x, compute_mode="donot_use_mm_for_euclid_dist") < r
        i, j = keep.nonzero(as_tuple=True)
        want = torch.stack([j, i])
        for chunk in (1 << 24, 7):
            got = bipartite_radius_graph(x, y, r, chunk=chunk, method=method)
            assert torch.equal(got, want), (fresh_seed, r, chunk)
    assert bipartite_radius_graph(x[:0], y, 1.0).shape == (2, 0)


def test_bipartite_large_and_bad_input(fresh_seed):
    from icml26_lit.md.graph import bipartite_radius_graph

    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.rand(5000, 3, generator=g) * 25  # > 4,096: the cell path under "auto"
    y = torch.rand(300, 3, generator=g) * 25
    assert torch.equal(
        bipartite_radius_graph(x, y, 1.5), bipartite_radius_graph(x, y, 1.5, method="dense")
    )
    with pytest.raises(ValueError, match="y must have shape"):
        bipartite_radius_graph(x, y[:, :2], 1.0)
    with pytest.raises(ValueError, match="x contains NaN"):
        bipartite_radius_graph(torch.full((2, 3), float("nan")), y, 1.0)
    with pytest.raises(TypeError, match="share dtype"):
        bipartite_radius_graph(x.double(), y, 1.0)
    with pytest.raises(ValueError, match="r must be a positive"):
        bipartite_radius_graph(x, y, -1.0)
    with pytest.raises(ValueError, match="method must be"):
        radius_graph(y, 1.0, method="kd")
