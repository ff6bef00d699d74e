"""Chapter 03: the activation pair, the biorthogonal manifold and its RiemannianAdam steps."""

import math

import geoopt
import pytest
import torch

from icml26_lit.ro_hnn.biorthogonal import (
    Biorthogonal,
    BiorthogonalLayer,
    activation_constants,
    sigma_d,
    sigma_d_prime,
    sigma_e,
    sigma_e_prime,
    sylvester_spd,
)

F64 = torch.float64


@pytest.mark.parametrize("alpha", [math.pi / 10, math.pi / 8, 0.05, 0.75])
def test_activations_are_inverse_and_derivatives_match_autograd(alpha):
    z = torch.linspace(-30, 30, 4001, dtype=F64, requires_grad=True)
    # sigma_e o sigma_d = id up to rounding: terms of size (t1 + t3 t4)|z| cancel, so 64 ulps of
    # that scale (1e-12 at alpha = pi/10, where the scale is ~60; 14x more near pi/4)
    t1, _, t3, t4, _, _ = activation_constants(alpha)
    tol = 64 * 2.2e-16 * (t1 + t3 * t4) * 31
    err = float((sigma_e(sigma_d(z, alpha), alpha) - z).abs().max())
    assert err < max(tol, 1e-12 if alpha == math.pi / 10 else 0.0), (err, tol)
    if alpha == math.pi / 10:
        assert err < 1e-12
    for f, fp in ((sigma_e, sigma_e_prime), (sigma_d, sigma_d_prime)):
        (g,) = torch.autograd.grad(f(z, alpha).sum(), z)
        torch.testing.assert_close(fp(z.detach(), alpha), g, rtol=1e-13, atol=1e-13)
    s = sigma_e_prime(z.detach(), alpha)
    # a smoothed leaky ReLU: slopes t1 -+ t3 t4 = (1 -+ sin 2a) / cos 2a at -+infinity, that is
    # tan(pi/4 - a) and cot(pi/4 - a); inside on this range, close to them at its ends
    lo, hi = math.tan(math.pi / 4 - alpha), 1 / math.tan(math.pi / 4 - alpha)
    assert lo < float(s.min()) < 1.01 * lo and hi / 1.01 < float(s.max()) < hi
    assert bool((sigma_e(z.detach(), alpha).diff() > 0).all())


def test_activation_at_zero_closed_form():
    # sigma_e(0) = t2 - t3 sqrt(t5^2 + t6); with alpha = pi/8 computed by hand from the formulas
    a = math.pi / 8
    s, c = math.sin(a), math.cos(a)
    aa, bb = 1 / s**2 - 1 / c**2, 1 / s**2 + 1 / c**2
    want = math.sqrt(2) / (aa * s) - math.sqrt(2 / c**2 + 2 * aa) / aa
    assert abs(float(sigma_e(torch.zeros((), dtype=F64), a)) - want) < 1e-14
    assert activation_constants(a)[0] == pytest.approx(bb / aa, rel=1e-15)


def test_sylvester_against_kronecker_solve():
    g = torch.Generator().manual_seed(5)
    m1, m2 = torch.randn(5, 5, generator=g, dtype=F64), torch.randn(5, 5, generator=g, dtype=F64)
    a, b = m1 @ m1.T + 0.1 * torch.eye(5, dtype=F64), m2 @ m2.T + 0.1 * torch.eye(5, dtype=F64)
    c = torch.randn(5, 5, generator=g, dtype=F64)
    x = sylvester_spd(a, b, c)
    # independent route: (I kron a + b^T kron I) vec(x) = vec(c), column-major vec
    eye = torch.eye(5, dtype=F64)
    k = torch.kron(eye, a) + torch.kron(b.T.contiguous(), eye)
    x2 = torch.linalg.solve(k, c.T.reshape(-1)).reshape(5, 5).T
    torch.testing.assert_close(x, x2, rtol=1e-10, atol=1e-10)


def test_projection_retraction_and_transport():
    man = Biorthogonal()
    g = torch.Generator().manual_seed(6)
    x = man.random(9, 4, generator=g)
    phi, psi = man.split(x)
    assert not torch.allclose(phi, psi)  # a generic point, not an orthonormal one
    eye = torch.eye(4, dtype=F64)
    torch.testing.assert_close(psi.T @ phi, eye, rtol=0, atol=1e-12)
    u = torch.randn(2, 9, 4, generator=g, dtype=F64)
    w = man.proju(x, u)
    a, b = man.split(w)
    torch.testing.assert_close(
        b.T @ phi + psi.T @ a, torch.zeros(4, 4, dtype=F64), atol=1e-12, rtol=0
    )
    torch.testing.assert_close(man.proju(x, w), w, rtol=0, atol=1e-12)  # idempotent
    t = man.proju(x, torch.randn(2, 9, 4, generator=g, dtype=F64))
    assert abs(float(man.inner(x, u - w, t))) < 1e-12  # orthogonal projection
    # a tangent vector is the derivative of a curve: retr(x, s w) = x + s w + O(s^2)
    for s in (1e-3, 1e-4):
        err = float((man.retr(x, s * w) - x - s * w).abs().max())
        assert err < 50 * s**2
    y, v = man.retr_transp(x, 0.5 * w, w)
    py, sy = man.split(y)
    torch.testing.assert_close(sy.T @ py, eye, rtol=0, atol=1e-12)
    man.assert_check_vector_on_tangent(y, v, atol=1e-12, rtol=0)


def test_riemannian_adam_keeps_the_constraint_each_step():
    g = torch.Generator().manual_seed(7)
    layer = BiorthogonalLayer(12, 5, generator=g)
    x = torch.randn(64, 12, generator=g, dtype=F64)
    opt = geoopt.optim.RiemannianAdam(layer.parameters(), lr=3e-2)
    eye = torch.eye(5, dtype=F64)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        # reconstruction through the pair: x -> Phi Psi^T (x - b) + b, a projection
        rec = (x - layer.bias) @ layer.psi @ layer.phi.T + layer.bias
        loss = ((rec - x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        # the retraction's solve: error ~ cond * eps; 1e-10 after every step
        assert float((layer.psi.T @ layer.phi - eye).abs().max()) < 1e-10
    assert losses[-1] < 0.9 * losses[0]


def test_fallback_reorthogonalisation():
    g = torch.Generator().manual_seed(8)
    layer = BiorthogonalLayer(7, 3, generator=g)
    with torch.no_grad():
        layer.weight.add_(0.1 * torch.randn(2, 7, 3, generator=g, dtype=F64))
    layer.reorthogonalize_()
    torch.testing.assert_close(layer.psi.T @ layer.phi, torch.eye(3, dtype=F64), rtol=0, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        sigma_e(torch.zeros(2), alpha=1.0)
    with pytest.raises(ValueError, match="alpha"):
        sigma_d(torch.zeros(2), alpha=0.0)
    with pytest.raises(ValueError, match="r must be <= n"):
        BiorthogonalLayer(2, 3)
    with pytest.raises(ValueError, match="n must be a positive int"):
        BiorthogonalLayer(0, 1)
