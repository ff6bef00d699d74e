"""Chapter 03: the explicit layer ops against torch.func, and the cotangent-lifted autoencoder."""

import pytest
import torch
from torch.func import jacfwd, jvp, vjp

from icml26_lit.ro_hnn.autoencoder import BiorthogonalAutoencoder, SymplecticAutoencoder
from icml26_lit.ro_hnn.biorthogonal import Biorthogonal, sigma_d, sigma_e
from icml26_lit.ro_hnn.kernels import (
    biorthogonal_decoder_layer,
    biorthogonal_layer,
    decoder_transpose_jacobian,
)

F64 = torch.float64


def _omega(m):
    eye, zero = torch.eye(m, dtype=F64), torch.zeros(m, m, dtype=F64)
    return torch.cat([torch.cat([zero, eye], 1), torch.cat([-eye, zero], 1)], 0)


def test_layer_ops_equal_torch_func(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    n, r, b = 7, 3, 5
    w = Biorthogonal().random(n, r, generator=g)
    phi, psi = w[0], w[1]
    bias = torch.randn(n, generator=g, dtype=F64)
    x, xd = torch.randn(2, b, n, generator=g, dtype=F64)
    z, zd = biorthogonal_layer(x, psi, bias, tangent=xd)
    # oracle: forward-mode autograd of the layer map; same operations, 1e-12
    z2, zd2 = jvp(lambda v: sigma_e((v - bias) @ psi), (x,), (xd,))
    torch.testing.assert_close((z, zd), (z2, zd2), rtol=1e-12, atol=1e-12)
    zz, v = torch.randn(2, b, r, generator=g, dtype=F64)
    xx, lifted = biorthogonal_decoder_layer(zz, phi, psi, bias, cotangent=v)
    _, pull = vjp(lambda u: sigma_e((u - bias) @ psi), xx)
    torch.testing.assert_close(lifted, pull(v)[0], rtol=1e-12, atol=1e-12)
    p = torch.randn(b, n, generator=g, dtype=F64)
    _, pull_dec = vjp(lambda u: sigma_d(u) @ phi.T + bias, zz)
    torch.testing.assert_close(decoder_transpose_jacobian(zz, phi, p), pull_dec(p)[0])


@pytest.mark.parametrize("dims", [[16, 8, 2], [5, 3, 2], [9, 1]])
def test_lifted_decoder_is_symplectic_and_encoder_inverts_it(dims, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    ae = SymplecticAutoencoder(dims, generator=g)
    with torch.no_grad():  # random biases too, so the test does not rely on b = 0
        for layer in ae.layers:
            layer.bias.normal_(generator=g)
    n, big = dims[-1], dims[0]
    y = torch.randn(6, 2 * n, generator=g, dtype=F64)
    # encode(decode(y)) = y: a few layers of float64 products, values O(1): 1e-12
    torch.testing.assert_close(ae.encode(ae.decode(y)), y, rtol=0, atol=1e-12)
    for k in range(3):
        jac = jacfwd(lambda v: ae.decode(v[None])[0])(y[k])
        assert jac.shape == (2 * big, 2 * n)
        # J^T Omega_2N J = Omega_2n: sums of O(N) products of O(1) entries: 1e-10
        torch.testing.assert_close(jac.T @ _omega(big) @ jac, _omega(n), rtol=0, atol=1e-10)


def test_a_broken_lift_is_caught():
    # the check can fail: lifting the momenta with Phi instead of Psi breaks symplecticity
    g = torch.Generator().manual_seed(3)
    ae = SymplecticAutoencoder([6, 4, 2], generator=g)

    def wrong_decode(v):
        q, p = v[None, :2], v[None, 2:]
        for layer in reversed(ae.layers):
            q, p = biorthogonal_decoder_layer(q, layer.phi, layer.phi, layer.bias, cotangent=p)
        return torch.cat([q, p], 1)[0]

    jac = jacfwd(wrong_decode)(torch.randn(4, generator=g, dtype=F64))
    assert float((jac.T @ _omega(6) @ jac - _omega(2)).abs().max()) > 1e-3


def test_lift_equals_autograd_transposed_jacobians(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    ae = SymplecticAutoencoder([10, 6, 3], generator=g)
    pos = BiorthogonalAutoencoder([10, 6, 3], generator=torch.Generator().manual_seed(0))
    pos.load_state_dict(ae.state_dict())
    qt, pt = torch.randn(2, 4, 3, generator=g, dtype=F64)
    out = ae.decode(torch.cat([qt, pt], 1))
    x = pos.decode(qt)
    _, pull = vjp(pos.encode, x)  # J_rho(phi(q~))^T p~
    torch.testing.assert_close(out, torch.cat([x, pull(pt)[0]], 1), rtol=1e-12, atol=1e-12)
    q, p = torch.randn(2, 4, 10, generator=g, dtype=F64)
    enc = ae.encode(torch.cat([q, p], 1))
    zq = pos.encode(q)
    _, pull = vjp(pos.decode, zq)  # J_phi(rho(q))^T p
    torch.testing.assert_close(enc, torch.cat([zq, pull(p)[0]], 1), rtol=1e-12, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="strictly decreasing"):
        SymplecticAutoencoder([4, 6, 2])
    with pytest.raises(ValueError, match="dims"):
        SymplecticAutoencoder([4])
    with pytest.raises(ValueError, match="alpha"):
        SymplecticAutoencoder([4, 2], alpha=1.0)
    ae = SymplecticAutoencoder([4, 2])
    with pytest.raises(ValueError, match="y must have shape"):
        ae.encode(torch.zeros(3, 4, dtype=F64))
    with pytest.raises(ValueError, match="y contains NaN"):
        ae.decode(torch.full((3, 4), float("nan"), dtype=F64))
    with pytest.raises(ValueError, match="backend"):
        biorthogonal_layer(torch.zeros(2, 4), torch.zeros(4, 2), torch.zeros(4), backend="cuda")
