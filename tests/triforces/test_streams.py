"""Composition and structural streams: attention = SDPA on the repeated multiset, the power spectrum
= the Legendre sum (scipy), invariances, and blindness (bit-identical outputs)."""

import math

import numpy as np
import pytest
import torch
from scipy.special import eval_legendre
from torch.nn.functional import scaled_dot_product_attention as sdpa

from icml26_lit.triforces.alloys import collate, make_alloy_dataset
from icml26_lit.triforces.composition import (
    CompositionStream,
    composition_tokens,
    count_weighted_attention,
)
from icml26_lit.triforces.kernels import power_spectrum, radial_basis
from icml26_lit.triforces.structure import StructuralStream


def test_count_weighted_attention_is_sdpa_on_repeated_tokens(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    B, H, T, d = 3, 2, 5, 8
    q, k, v = (torch.randn(B, H, T, d, generator=g, dtype=torch.float64) for _ in range(3))
    counts = torch.randint(1, 5, (B, T), generator=g)
    out = count_weighted_attention(q, k, v, counts)
    for b in range(B):
        rep = torch.repeat_interleave(torch.arange(T), counts[b])
        want = sdpa(q[b : b + 1], k[b : b + 1, :, rep], v[b : b + 1, :, rep])
        # softmax of float64 logits: the log-count shift vs. repeated terms differ by rounding
        torch.testing.assert_close(out[b : b + 1], want, rtol=0, atol=1e-13)


def test_count_weighted_attention_bad_input():
    q = torch.randn(1, 1, 2, 4)
    with pytest.raises(ValueError, match="counts must be positive"):
        count_weighted_attention(q, q, q, torch.tensor([[1, 0]]))
    with pytest.raises(ValueError, match="counts must have shape"):
        count_weighted_attention(q, q, q, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="q must have 4 dimensions"):
        count_weighted_attention(q[0], q, q, torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="numbers must be atomic numbers"):
        composition_tokens(torch.tensor([0, 29]), torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="numbers must be atomic numbers"):
        composition_tokens(torch.tensor([119]), torch.tensor([0]))


def test_composition_blind_to_positions_and_atom_order():
    data = make_alloy_dataset(8, seed=5)
    comp = CompositionStream(generator=torch.Generator().manual_seed(1))
    b = collate(data)
    h = comp(b["numbers"], b["batch"])
    moved = [dict(s, pos=s["pos"] + torch.randn(s["pos"].shape, dtype=torch.float64)) for s in data]
    bm = collate(moved)
    assert torch.equal(comp(bm["numbers"], bm["batch"]), h)  # positions never enter
    perm = torch.cat([torch.randperm(len(s["numbers"])) for s in data])
    offset = torch.repeat_interleave(torch.cumsum(b["n_atoms"], 0) - b["n_atoms"], b["n_atoms"])
    assert torch.equal(comp(b["numbers"][perm + offset], b["batch"]), h)


def test_power_spectrum_one_radial_is_legendre_sum(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    n_edges, l_max, cutoff = 9, 4, 5.0
    vec = torch.randn(n_edges, 3, generator=g, dtype=torch.float64)
    vec = vec / vec.norm(dim=1, keepdim=True) * (torch.rand(n_edges, 1, generator=g) * 4 + 0.5)
    W = torch.zeros(1, 18, dtype=torch.float64)
    W[0, 5] = 1.0  # one radial function (n = 2, full cutoff), no mixing
    p = power_spectrum(vec, torch.zeros(n_edges, dtype=torch.long), 1, W, cutoff, l_max)
    R = radial_basis(vec.norm(dim=1), cutoff, 6)[:, 5].numpy()
    u = (vec / vec.norm(dim=1, keepdim=True)).numpy()
    cos = np.clip(u @ u.T, -1, 1)
    for l in range(l_max + 1):
        want = (2 * l + 1) / (4 * math.pi) * (R[:, None] * R[None, :] * eval_legendre(l, cos)).sum()
        # addition theorem in float64: sums of ~100 order-one terms, 1e-12 relative
        assert abs(float(p[0, l]) - want) <= 1e-12 * max(1.0, abs(want)), (fresh_seed, l)


def test_power_spectrum_bad_input():
    vec, dst, W = torch.randn(3, 3), torch.zeros(3, dtype=torch.long), torch.randn(6, 18)
    with pytest.raises(ValueError, match="cutoff must be"):
        power_spectrum(vec, dst, 1, W, cutoff=0.0)
    with pytest.raises(ValueError, match="backend must be"):
        power_spectrum(vec, dst, 1, W, backend="cuda")
    with pytest.raises(ValueError, match="edge_vec contains NaN"):
        power_spectrum(vec * float("nan"), dst, 1, W)
    with pytest.raises(ValueError, match="radial_weights must have 3 N_r"):
        power_spectrum(vec, dst, 1, W[:, :5])
    with pytest.raises(ValueError, match="edge_dst must index"):
        power_spectrum(vec, dst + 1, 1, W)


def _rotation(g):
    A = torch.randn(3, 3, generator=g, dtype=torch.float64)
    Q, R = torch.linalg.qr(A)
    Q = Q * torch.sign(torch.diagonal(R))
    return Q if torch.linalg.det(Q) > 0 else -Q


def test_structural_stream_invariances(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    data = make_alloy_dataset(5, seed=fresh_seed % 1000)
    st = StructuralStream(generator=torch.Generator().manual_seed(0)).double()
    h = st(collate(data, dtype=torch.float64))[1]
    Rm = _rotation(g)
    rotated = [dict(s, pos=s["pos"] @ Rm.T, cell=s["cell"] @ Rm.T) for s in data]
    shift = torch.randn(3, generator=g, dtype=torch.float64) * 5
    moved = [dict(s, pos=s["pos"] + shift) for s in data]
    perms = [torch.randperm(len(s["numbers"]), generator=g) for s in data]
    permuted = [dict(s, pos=s["pos"][p], numbers=s["numbers"][p]) for s, p in zip(data, perms)]
    for other in (rotated, moved, permuted):  # neighbours recomputed by collate each time
        # float64 sums in a different order: 1e-10 absolute on order-one embeddings
        torch.testing.assert_close(
            st(collate(other, dtype=torch.float64))[1], h, rtol=0, atol=1e-10
        )


def test_structural_stream_blind_to_types():
    data = make_alloy_dataset(6, seed=2)
    st = StructuralStream(generator=torch.Generator().manual_seed(0))
    h_atom, h = st(collate(data))
    rng = np.random.default_rng(0)
    retyped = [
        dict(s, numbers=torch.tensor(rng.choice([13, 29, 47, 79], len(s["numbers"])))) for s in data
    ]
    h_atom2, h2 = st(collate(retyped))
    assert torch.equal(h_atom2, h_atom) and torch.equal(h2, h)
