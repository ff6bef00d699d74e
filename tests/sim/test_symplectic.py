"""Chapter 03 substrate: Stormer-Verlet and the generalised Stormer-Verlet step (sim.symplectic)."""

import math

import pytest
import torch
from torch.func import jacfwd

from icml26_lit.sim import (
    generalized_leapfrog_step,
    hamiltonian_rollout,
    stormer_verlet_step,
)

F64 = torch.float64


def _omega(n):
    eye = torch.eye(n, dtype=F64)
    zero = torch.zeros(n, n, dtype=F64)
    return torch.cat([torch.cat([zero, eye], 1), torch.cat([-eye, zero], 1)], 0)


def _field(q, p):
    # H = p^T M^-1(q) p / 2 + V(q), M^-1 = diag(1 + sin^2(q) / 2) + 0.1 ones, V = sum(1 - cos q)
    m_inv = 1 + 0.5 * torch.sin(q) ** 2
    cp = p.sum(-1, keepdim=True)
    dq = m_inv * p + 0.1 * cp
    dp = -(0.5 * p**2 * torch.sin(q) * torch.cos(q) + torch.sin(q))
    return dq, dp


def _energy(q, p):
    m_inv = 1 + 0.5 * torch.sin(q) ** 2
    kin = 0.5 * (m_inv * p**2).sum(-1) + 0.05 * p.sum(-1) ** 2
    return kin + (1 - torch.cos(q)).sum(-1)


def test_field_is_the_hamiltonian_gradient():
    # the test system itself: its field must be (dH/dp, -dH/dq), checked by autograd
    g = torch.Generator().manual_seed(1)
    q = torch.randn(5, 3, generator=g, dtype=F64, requires_grad=True)
    p = torch.randn(5, 3, generator=g, dtype=F64, requires_grad=True)
    gq, gp = torch.autograd.grad(_energy(q, p).sum(), (q, p))
    dq, dp = _field(q, p)
    torch.testing.assert_close(dq, gp, rtol=0, atol=1e-14)
    torch.testing.assert_close(dp, -gq, rtol=0, atol=1e-14)


def test_stormer_verlet_matches_the_oscillators_closed_form():
    # for H = (p^2 + w^2 q^2)/2 the leapfrog map is linear with cos(theta) = 1 - (h w)^2 / 2: the
    # numerical solution is q_n = cos(n theta) exactly (q0 = 1, p0 = 0); 2,000 steps to 1e-11
    w, h, n = 2.0, 0.1, 2000
    q = torch.ones(1, 1, dtype=F64)
    p = torch.zeros(1, 1, dtype=F64)
    for _ in range(n):
        q, p = stormer_verlet_step(lambda x: w * w * x, q, p, h)
    theta = math.acos(1 - (h * w) ** 2 / 2)
    assert abs(float(q) - math.cos(n * theta)) < 1e-11


def test_stormer_verlet_energy_bounded_while_euler_grows():
    h, n = 0.05, 4000
    q = qe = torch.tensor([[1.0]], dtype=F64)
    p = pe = torch.tensor([[0.0]], dtype=F64)
    dev = []
    for _ in range(n):
        q, p = stormer_verlet_step(torch.sin, q, p, h)
        qe, pe = qe + h * pe, pe - h * torch.sin(qe)
        dev.append(float(0.5 * p**2 + 1 - torch.cos(q)))
    e0 = 1 - math.cos(1.0)
    dev = [abs(e - e0) for e in dev]
    # leapfrog: |H - H0| = O(h^2) uniformly in time; the last quarter is no worse than the first
    assert max(dev) < h**2
    assert max(dev[-1000:]) < 1.5 * max(dev[:1000])
    e_euler = float(0.5 * pe**2 + 1 - torch.cos(qe))
    assert e_euler > e0 + 0.2  # Euler pumps energy in: measured ~1.4 after 4,000 steps


def test_generalized_leapfrog_equals_stormer_verlet_when_separable():
    g = torch.Generator().manual_seed(2)
    q = torch.randn(6, 4, generator=g, dtype=F64)
    p = torch.randn(6, 4, generator=g, dtype=F64)
    a = generalized_leapfrog_step(lambda q, p: (p, -torch.sin(q)), q, p, 0.2, iterations=3)
    b = stormer_verlet_step(torch.sin, q, p, 0.2)
    # same operations up to (h/2)(p + p) vs h p: a few ulps
    torch.testing.assert_close(a, b, rtol=0, atol=1e-14)


def _reference(q, p, h, n_fine=64):
    # RK4 with 64 substeps: error ~ (h/64)^4, far below the leapfrog's h^3 local error
    qs, ps = hamiltonian_rollout(_field, q, p, h / n_fine, n_fine, method="rk4")
    return qs[-1], ps[-1]


def test_generalized_leapfrog_is_second_order():
    g = torch.Generator().manual_seed(3)
    q = 0.5 * torch.randn(4, 3, generator=g, dtype=F64)
    p = 0.5 * torch.randn(4, 3, generator=g, dtype=F64)
    errs = []
    for h in (0.2, 0.1, 0.05):
        n = int(round(0.8 / h))
        qs, ps = hamiltonian_rollout(_field, q, p, h, n, method="leapfrog", tol=1e-13)
        qr, pr = _reference(q, p, 0.8, n_fine=400)
        errs.append(float(torch.cat([qs[-1] - qr, ps[-1] - pr]).abs().max()))
    rates = [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
    # global order 2: halving h divides the error by ~4 (rate 2); a first-order method gives ~1
    assert all(1.8 < r < 2.2 for r in rates), (errs, rates)


def test_generalized_leapfrog_is_reversible_and_symplectic():
    g = torch.Generator().manual_seed(4)
    q = 0.7 * torch.randn(3, generator=g, dtype=F64)
    p = 0.7 * torch.randn(3, generator=g, dtype=F64)
    q1, p1 = generalized_leapfrog_step(_field, q, p, 0.1, tol=1e-14)
    # the method is symmetric: the step with -h undoes the step with h (up to the solve's tolerance)
    qb, pb = generalized_leapfrog_step(
        lambda q, p: tuple(-v for v in _field(q, p)), q1, p1, 0.1, tol=1e-14
    )
    assert float(torch.cat([qb - q, pb - p]).abs().max()) < 1e-8

    # J^T Omega J = Omega for the Jacobian; 20 iterations (contraction ~h L / 2 < 0.2) converge
    def step(x):
        a, b = generalized_leapfrog_step(_field, x[:3], x[3:], 0.1, iterations=20)
        return torch.cat([a, b])

    jac = jacfwd(step)(torch.cat([q, p]))
    om = _omega(3)
    torch.testing.assert_close(jac.T @ om @ jac, om, rtol=0, atol=1e-12)


def test_generalized_leapfrog_energy_bounded_over_1000_steps():
    q0 = torch.tensor([[1.0, -0.5, 0.3]], dtype=F64)
    p0 = torch.tensor([[0.2, 0.4, -0.6]], dtype=F64)
    h = 0.1
    qs, ps = hamiltonian_rollout(_field, q0, p0, h, 1000)
    dev = (_energy(qs, ps) - _energy(q0, p0)).abs().squeeze(-1)
    assert float(dev.max()) < h**2  # O(h^2) for all time, no secular growth
    assert float(dev[-250:].max()) < 1.5 * float(dev[:250].max())
    qe, pe = hamiltonian_rollout(_field, q0, p0, h, 1000, method="euler")
    de = (_energy(qe, pe) - _energy(q0, p0)).abs()
    assert float(de.max()) > 10 * float(dev.max())


def test_fixed_point_failure_reports_the_residual():
    q = torch.tensor([[2.0]], dtype=F64)
    p = torch.tensor([[30.0]], dtype=F64)
    with pytest.raises(RuntimeError, match="did not converge.*residual"):
        generalized_leapfrog_step(_field, q, p, 1.0, max_iter=50)


def test_bad_input_is_named():
    z = torch.zeros(2, 3, dtype=F64)
    f = _field
    with pytest.raises(ValueError, match="iterations"):
        generalized_leapfrog_step(f, z, z, 0.1, iterations=0)
    with pytest.raises(ValueError, match="h must be"):
        generalized_leapfrog_step(f, z, z, 0.0)
    with pytest.raises(ValueError, match="h must be"):
        stormer_verlet_step(torch.sin, z, z, float("nan"))
    with pytest.raises(ValueError, match="p contains NaN"):
        generalized_leapfrog_step(f, z, z * float("nan"), 0.1)
    with pytest.raises(ValueError, match="same shape"):
        stormer_verlet_step(torch.sin, z, z[:, :2], 0.1)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        stormer_verlet_step(torch.sin, [0.0], z, 0.1)
    with pytest.raises(ValueError, match="tol"):
        generalized_leapfrog_step(f, z, z, 0.1, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        generalized_leapfrog_step(f, z, z, 0.1, max_iter=0)
    with pytest.raises(ValueError, match="method"):
        hamiltonian_rollout(f, z, z, 0.1, 3, method="verlet")
    with pytest.raises(ValueError, match="n_steps"):
        hamiltonian_rollout(f, z, z, 0.1, 0)
