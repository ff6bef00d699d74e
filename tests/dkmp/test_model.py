"""DKMP: forces, symmetries, smoothness across shell edges, range, backends, bad input."""

import math

import pytest
import torch

from icml26_lit.core import HAS_TRITON
from icml26_lit.dkmp.experiments import SchNetArm
from icml26_lit.dkmp.model import DKMP, region_hubs, star_edges


def _system(n=60, box=30.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    pos = box * torch.rand(n, 3, generator=g, dtype=torch.float64)
    z = torch.randint(0, 20, (n,), generator=g)
    return z, pos


def _model(pos, backend="torch", seed=0, **kw):
    m = DKMP(backend=backend, generator=torch.Generator().manual_seed(seed), **kw).double()
    return m.freeze_regions(pos)


def test_forces_are_minus_gradient_central_differences():
    z, pos = _system()
    m = _model(pos)
    e, f = m.energy_and_forces(z, pos)
    h = 1e-5  # float64: central-difference error ~h^2 |E'''| + eps |E| / h, about 1e-9 here
    for atom, axis in ((0, 0), (17, 1), (59, 2)):
        x = pos.clone()
        x[atom, axis] += h
        ep = m.energy(z, x)
        x[atom, axis] -= 2 * h
        em = m.energy(z, x)
        torch.testing.assert_close(-(ep - em) / (2 * h), f[atom, axis], rtol=1e-6, atol=1e-7)


def test_invariances_and_zero_net_force():
    z, pos = _system()
    m = _model(pos)
    e, f = m.energy_and_forces(z, pos)
    # float64 sums of O(1e2) terms: rounding ~1e-13 relative
    torch.testing.assert_close(f.sum(0), torch.zeros(3, dtype=torch.float64), atol=1e-10, rtol=0)
    q, _ = torch.linalg.qr(
        torch.randn(3, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    )
    e2, f2 = m.energy_and_forces(
        z, pos @ q.T + torch.tensor([3.0, -7.0, 11.0], dtype=torch.float64)
    )
    torch.testing.assert_close(e2, e, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(f2, f @ q.T, rtol=1e-8, atol=1e-10)


def test_permutation_of_atoms_and_region_labels():
    z, pos = _system()
    m = _model(pos)
    e, f = m.energy_and_forces(z, pos)
    perm = torch.randperm(pos.shape[0], generator=torch.Generator().manual_seed(2))
    labels = [lab.clone() for lab in m.labels]
    m.labels = [lab[perm] for lab in labels]  # the same regions, atoms listed in a new order
    e2, f2 = m.energy_and_forces(z[perm], pos[perm])
    torch.testing.assert_close(e2, e, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(f2, f[perm], rtol=1e-8, atol=1e-10)
    relabel = [torch.randperm(k, generator=torch.Generator().manual_seed(3)) for k in m.n_regions]
    m.labels = [r[lab] for r, lab in zip(relabel, labels)]  # regions renamed
    e3, f3 = m.energy_and_forces(z, pos)
    torch.testing.assert_close(e3, e, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(f3, f, rtol=1e-8, atol=1e-10)


def test_energy_continuous_across_a_shell_edge():
    z, pos = _system()
    m = _model(pos)
    hub, _ = region_hubs(pos, m.labels[0], m.n_regions[0])
    d = (pos[:, None, :] - hub[None]).norm(dim=-1)
    d[m.labels[0][:, None] == torch.arange(m.n_regions[0])[None]] = 1e9  # not the atom's own hub
    atom, k = divmod(int((d - 9.5).abs().argmin()), m.n_regions[0])
    u = (pos[atom] - hub[k]) / d[atom, k]
    members = int((m.labels[0] == m.labels[0][atom]).sum())
    for edge in (9.0, 10.0, 19.0, 20.0):  # where level-1 edges appear and each ramp ends
        delta = edge - float(d[atom, k])  # the hub does not move with this atom (other region)
        es = []
        for s in (-1e-6, 1e-6):
            x = pos.clone()
            x[atom] += (delta + s) * u
            es.append(m.energy(z, x))
        assert abs(float(es[1] - es[0])) < 1e-5, (edge, members, float(es[1] - es[0]))


def _two_clusters(gap=30.0):
    g = torch.Generator().manual_seed(4)
    a = 3 * torch.rand(12, 3, generator=g, dtype=torch.float64)
    b = torch.tensor([[gap, 0.0, 0.0]], dtype=torch.float64) + 1.5
    pos = torch.cat([a, b])
    return torch.randint(1, 10, (13,), generator=g), pos


def _force_sensitivity(energy_fn, pos):
    pos = pos.clone().requires_grad_()
    e = energy_fn(pos)
    (g,) = torch.autograd.grad(e.sum(), pos, create_graph=True)
    (gg,) = torch.autograd.grad(g[0].sum(), pos)  # d F_0 / d x_j for all j
    return gg[-1].abs().max()


def test_range_dkmp_sees_30_angstrom_schnet_does_not():
    z, pos = _two_clusters(30.0)
    m = _model(pos)
    assert _force_sensitivity(lambda p: m.energy(z, p), pos) > 1e-8
    s = SchNetArm(z, cutoff=5.0, n_interactions=4).double()
    assert float(_force_sensitivity(lambda p: s.energy(p[None]), pos)) == 0.0


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
def test_triton_backend_matches_torch_at_n20():
    z, pos = _system(n=20, box=25.0, seed=5)
    ma, mb = _model(pos, "triton", seed=6), _model(pos, "torch", seed=6)
    ea, fa = ma.energy_and_forces(z, pos)
    eb, fb = mb.energy_and_forces(z, pos)
    torch.testing.assert_close(ea, eb, rtol=1e-10, atol=1e-10)  # float64, same sums reordered
    torch.testing.assert_close(fa, fb, rtol=1e-9, atol=1e-10)
    grads = []
    for m in (ma, mb):
        e, f = m.energy_and_forces(z, pos, create_graph=True)
        loss = e.pow(2) + 100 * f.pow(2).mean()
        grads.append(torch.autograd.grad(loss, list(m.parameters()), allow_unused=True))
    for a, b in zip(*grads):
        if a is None or b is None:
            assert a is None and b is None
            continue
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10)


def test_star_edges_equal_brute_force():
    z, pos = _system(n=80, box=40.0)
    hubs = pos[::7] + 0.3
    e = star_edges(pos, hubs, 10.0, 20.0)
    d = torch.cdist(pos, hubs)
    want = ((d > 9.0) & (d < 20.0)).nonzero()  # sorted by atom then hub
    torch.testing.assert_close(e.flip(0).T, want)


def test_bad_input():
    z, pos = _system()
    with pytest.raises(RuntimeError, match="freeze_regions"):
        DKMP().double().energy(z, pos)
    m = _model(pos)
    with pytest.raises(ValueError, match="pos"):
        m.energy(z, pos[:10])  # another atom count
    bad = pos.clone()
    bad[3, 1] = math.nan
    with pytest.raises(ValueError, match="pos"):
        m.energy(z, bad)
    with pytest.raises(ValueError, match="z"):
        m.energy(z[:5], pos)
    for kw, name in (
        (dict(n_levels=-1), "n_levels"),
        (dict(r0=0.0), "r0"),
        (dict(ramp=-1.0), "ramp"),
        (dict(region_size=0.0), "region_size"),
        (dict(backend="gpu"), "backend"),
    ):
        with pytest.raises(ValueError, match=name):
            DKMP(**kw)
    with pytest.raises(ValueError, match="labels"):
        region_hubs(pos, torch.zeros(pos.shape[0], dtype=torch.long) + 5, 3)
