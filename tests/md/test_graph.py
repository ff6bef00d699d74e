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
