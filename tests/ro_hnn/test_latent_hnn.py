"""Chapter 03: the latent HNN's explicit derivatives against autograd, and its integration."""

import pytest
import torch
from torch.func import jacrev, vmap

from icml26_lit.ro_hnn.latent_hnn import _MLP, LatentHNN
from icml26_lit.sim import hamiltonian_rollout

F64 = torch.float64


def test_mlp_input_jacobian_equals_jacrev(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    mlp = _MLP(3, 11, 4, g, F64)
    x = torch.randn(6, 3, generator=g, dtype=F64)
    _, d = mlp(x)
    # forward-mode chain rule vs reverse mode: same products in another order, 1e-12
    torch.testing.assert_close(
        d, vmap(jacrev(lambda v: mlp(v[None])[0][0]))(x), atol=1e-12, rtol=1e-12
    )


@pytest.mark.parametrize("n", [1, 2, 3])
def test_vector_field_equals_autograd(n, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    hnn = LatentHNN(n, width=64, generator=g)
    q, p = (2 * torch.randn(2, 9, n, generator=g, dtype=F64)).unbind(0)
    q.requires_grad_(True)
    p.requires_grad_(True)
    gq, gp = torch.autograd.grad(hnn.hamiltonian(q, p).sum(), (q, p))
    fq, fp = hnn.vector_field(q, p)
    torch.testing.assert_close(fq, gp, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(fp, -gq, atol=1e-12, rtol=1e-12)
    # training differentiates the field once: its parameter gradient exists and is finite
    loss = (fq**2).sum() + (fp**2).sum()
    names, params = zip(*hnn.named_parameters())
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    # only V's last bias (a constant added to H) does not reach the field
    unused = [k for k, v in zip(names, grads) if v is None]
    assert unused == ["potential_net.linears.2.bias"], unused
    assert all(bool(torch.isfinite(v).all()) for v in grads if v is not None)


def test_inverse_mass_is_cholesky_spd():
    g = torch.Generator().manual_seed(1)
    hnn = LatentHNN(3, generator=g)
    q = 3 * torch.randn(50, 3, generator=g, dtype=F64)
    L, _ = hnn._cholesky(q)
    assert bool((torch.triu(L, 1) == 0).all())  # lower triangular
    assert bool((torch.diagonal(L, dim1=1, dim2=2) > 0).all())  # softplus diagonal
    m = hnn.inverse_mass(q)
    torch.testing.assert_close(m, m.mT)
    # L L^T + 1e-2 I: eigenvalues >= 1e-2 up to eigvalsh rounding
    assert float(torch.linalg.eigvalsh(m).min()) >= 1e-2 - 1e-12


def test_generalized_leapfrog_keeps_latent_energy_bounded_over_2000_steps():
    g = torch.Generator().manual_seed(0)
    hnn = LatentHNN(2, generator=g)
    q, p = torch.randn(2, 4, 2, generator=g, dtype=F64).unbind(0)

    # a random potential network is unbounded below (near-linear far out), so orbits escape; a
    # harmonic confinement q^2/2 keeps them bounded while the kinetic term stays the network's
    def field(q, p):
        a, b = hnn.vector_field(q, p)
        return a, b - q

    def energy(q, p):
        return hnn.hamiltonian(q, p) + 0.5 * (q * q).sum(-1)

    with torch.no_grad():
        out = {
            m: hamiltonian_rollout(field, q, p, 0.05, 2000, method=m) for m in ("leapfrog", "euler")
        }
        dev = {
            m: (energy(a.flatten(0, 1), b.flatten(0, 1)).view(2001, 4) - energy(q, p)).abs()
            for m, (a, b) in out.items()
        }
    lf = dev["leapfrog"]
    # bounded oscillation: measured 1.3e-3 in both the first and the last 500 steps
    assert float(lf.max()) < 0.05**2
    assert float(lf[-500:].max()) < 1.5 * float(lf[:500].max())
    assert float(dev["euler"][-500:].max()) > 100 * float(lf.max())  # Euler's grows (~900)


def test_bad_input():
    with pytest.raises(ValueError, match="n must be"):
        LatentHNN(0)
    hnn = LatentHNN(2)
    with pytest.raises(ValueError, match="q must have shape"):
        hnn.vector_field(torch.zeros(3, 3, dtype=F64), torch.zeros(3, 3, dtype=F64))
    with pytest.raises(ValueError, match="p contains NaN"):
        hnn.vector_field(torch.zeros(3, 2, dtype=F64), torch.full((3, 2), float("nan"), dtype=F64))


def test_reused_q_terms_change_nothing_but_the_cost(fresh_seed):
    from icml26_lit.sim import generalized_leapfrog_step

    g = torch.Generator().manual_seed(fresh_seed)
    hnn = LatentHNN(2, width=16, generator=g)
    q0, p0 = (0.3 * torch.randn(2, 5, 2, generator=g, dtype=F64)).unbind(0)
    calls = []
    hnn.potential_net.register_forward_hook(lambda *a: calls.append(1))

    def rollout(n_steps):
        q, p = q0, p0
        for _ in range(n_steps):
            q, p = generalized_leapfrog_step(hnn.vector_field, q, p, 0.05, 3)
        loss = (q**2).sum() + (p**2).sum()
        return q, p, torch.autograd.grad(loss, list(hnn.cholesky_net.parameters()))

    plain = rollout(4)
    n_plain, calls[:] = len(calls), []
    with hnn.reuse_q_terms():
        reused = rollout(4)
    # the same operations on the same inputs: bit-identical states
    for a, b in zip(plain[:2], reused[:2]):
        torch.testing.assert_close(a, b, atol=0, rtol=0)
    # the backward sums a shared node's contributions in another order: rounding, 1e-12
    for a, b in zip(plain[2], reused[2]):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-12)
    # per step: 3 half-kick updates + 1 closing kick at 2 networks' Jacobians before, and
    # 1 (at q1, shared with the next step's opening kick) plus the first step's q0 after
    assert (n_plain, len(calls)) == (4 * 4, 4 + 1), (fresh_seed, n_plain, len(calls))
    assert hnn._reuse is None
