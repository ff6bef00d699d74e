"""The interaction stream is a constructor argument: the backbone contract, PyG's SchNet blocks,
a module of one's own, and the force paths (direct, and -dE/dx under create_graph) through each."""

import sys

import pytest
import torch
from torch import nn

from icml26_lit.triforces.alloys import collate, make_alloy_dataset
from icml26_lit.triforces.model import (
    BACKBONES,
    InteractionStream,
    PygSchNetStream,
    TriForces,
    edge_set,
)


def _batch(n=3, seed=0):
    return collate(make_alloy_dataset(n, seed=seed), 5.0, dtype=torch.float64)


class _Distances(nn.Module):
    "A backbone of one's own: type embedding plus summed Gaussian distances (the contract only)."

    def __init__(self, d):
        super().__init__()
        self.d, self.embed, self.lin = d, nn.Embedding(119, d), nn.Linear(4, d)

    def forward(self, positions, numbers, edges):
        r = edges["vec"].norm(dim=-1, keepdim=True)
        g = torch.exp(-((r - torch.arange(4.0, dtype=r.dtype)) ** 2))
        out = torch.zeros(len(numbers), self.d, dtype=r.dtype)
        return self.embed(numbers) + out.index_add(0, edges["index"][1], self.lin(g))


@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_backbones_keep_the_contract(name):
    b = _batch()
    g = torch.Generator().manual_seed(0)
    net = BACKBONES[name](16, generator=g).double()
    h = net(b["pos"], b["numbers"], edge_set(b))
    assert h.shape == (b["pos"].shape[0], 16) and torch.isfinite(h).all()
    again = BACKBONES[name](16, generator=torch.Generator().manual_seed(0)).double()
    torch.testing.assert_close(again(b["pos"], b["numbers"], edge_set(b)), h, rtol=0, atol=0)
    # invariant: rotating the cell and the positions together leaves the features alone
    q, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64, generator=g))
    rb = dict(b, pos=b["pos"] @ q.T, cell=b["cell"] @ q.T)
    torch.testing.assert_close(net(rb["pos"], rb["numbers"], edge_set(rb)), h)  # float64 round-off


def test_pyg_backbone_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    PygSchNetStream(8, generator=torch.Generator().manual_seed(1))
    assert torch.equal(torch.random.get_rng_state(), state)


def test_pyg_backbone_names_its_extra_when_torch_geometric_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    monkeypatch.setitem(sys.modules, "torch_geometric.nn", None)
    monkeypatch.setitem(sys.modules, "torch_geometric.nn.models.schnet", None)
    with pytest.raises(ImportError, match=r"icml26_lit\[triforces\]"):
        PygSchNetStream(8)


def test_a_module_of_ones_own_is_kept_and_checked():
    own = _Distances(8)
    w = own.lin.weight.clone()
    model = TriForces(d=8, interaction=own, generator=torch.Generator().manual_seed(0)).double()
    assert model.interaction is own and torch.equal(own.lin.weight, w.double())
    e, f = model.energy_and_forces(_batch())
    assert e.shape == (3,) and torch.isfinite(f).all()
    with pytest.raises(ValueError, match="interaction must be"):
        TriForces(d=16, interaction=_Distances(8))  # widths differ
    with pytest.raises(ValueError, match="interaction must be"):
        TriForces(d=8, interaction=lambda p, z, e: p)  # not a module
    assert isinstance(TriForces(d=8).interaction, InteractionStream)  # the default


@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_forces_reach_every_stream_in_both_heads(name):
    b = _batch(2, seed=1)
    model = TriForces(d=8, interaction=name, generator=torch.Generator().manual_seed(2)).double()
    model.train()
    for head in ("direct", "conservative"):
        model.zero_grad()
        _, f = model.energy_and_forces(b, head=head)
        f.pow(2).sum().backward()  # a force-only loss
        for stream in ("interaction", "structure", "composition"):
            grads = [p.grad for p in getattr(model, stream).parameters() if p.grad is not None]
            assert grads and any(g.abs().sum() > 0 for g in grads), (head, stream)


@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_conservative_forces_are_minus_the_energy_gradient(name):
    b = _batch(1, seed=2)
    model = TriForces(d=8, interaction=name, generator=torch.Generator().manual_seed(3)).double()
    model.eval()
    _, f = model.energy_and_forces(b, head="conservative")
    eps, (atom, axis) = 1e-5, (0, 1)
    shifted = []
    for sign in (1, -1):
        pos = b["pos"].clone()
        pos[atom, axis] += sign * eps
        shifted.append(model.energy_and_forces(dict(b, pos=pos), head="conservative")[0].sum())
    # central difference: O(eps^2) truncation, round-off ~1e-16 / eps
    fd = -(shifted[0] - shifted[1]) / (2 * eps)
    torch.testing.assert_close(f[atom, axis], fd.detach(), rtol=1e-5, atol=1e-7)
