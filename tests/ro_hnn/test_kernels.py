"""Chapter 03: the fused biorthogonal-layer kernels in Triton's interpreter against the
reference, their gradients, the model on the Triton path, and the ahead-of-time compile."""

import pytest
import torch

from icml26_lit.core import HAS_TRITON, KERNELS, check_kernel, compile_check
from icml26_lit.ro_hnn.kernels import biorthogonal_decoder_layer, biorthogonal_layer
from icml26_lit.ro_hnn.model import ROHNN, window_loss

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
F64 = torch.float64
# float32: sums of up to 33 products of unit-scale numbers, a few ulps of the result's scale
# each way; float64: the same at 2^-52
TOL = {torch.float32: dict(atol=2e-5, rtol=2e-5), torch.float64: dict(atol=1e-12, rtol=1e-12)}
SIZES = [(1, 1, 1), (0, 4, 3), (17, 33, 5), (3, 5, 3), (20, 16, 16)]


def _enc_inputs(size, dtype, g):
    b, n, r = size
    x, t = torch.randn(2, b, n, generator=g, dtype=dtype)
    return (
        x,
        t,
        torch.randn(n, r, generator=g, dtype=dtype),
        torch.randn(n, generator=g, dtype=dtype),
    )


def _dec_inputs(size, dtype, g):
    b, n, r = size
    z, v = torch.randn(2, b, r, generator=g, dtype=dtype)
    phi, psi = torch.randn(2, n, r, generator=g, dtype=dtype)
    return z, v, phi, psi, torch.randn(n, generator=g, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_encoder_kernel_matches_reference(fresh_seed, dtype):
    def run(backend):
        return lambda x, t, p, b: biorthogonal_layer(x, p, b, tangent=t, backend=backend)

    check_kernel(
        run("triton"), run("torch"), _enc_inputs, SIZES, (dtype,), fresh_seed, **TOL[dtype]
    )
    x, _, p, b = _enc_inputs((5, 7, 3), dtype, torch.Generator().manual_seed(fresh_seed))
    z, zd = biorthogonal_layer(x, p, b, backend="triton")  # no tangent: the forward alone
    assert zd is None, fresh_seed
    torch.testing.assert_close(z, biorthogonal_layer(x, p, b, backend="torch")[0], **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_decoder_kernel_matches_reference(fresh_seed, dtype):
    def run(backend):
        return lambda z, v, f, p, b: biorthogonal_decoder_layer(
            z, f, p, b, cotangent=v, backend=backend
        )

    check_kernel(
        run("triton"), run("torch"), _dec_inputs, SIZES, (dtype,), fresh_seed, **TOL[dtype]
    )


def test_gradients_pass_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x, t, psi, b = (v.requires_grad_() for v in _enc_inputs((3, 5, 3), F64, g))
    enc = lambda x, t, p, b: biorthogonal_layer(x, p, b, tangent=t, backend="triton")  # noqa: E731
    assert torch.autograd.gradcheck(enc, (x, t, psi, b)), fresh_seed
    z, v, phi, psi, b = (u.requires_grad_() for u in _dec_inputs((3, 5, 3), F64, g))

    def dec(z, v, f, p, b):
        return biorthogonal_decoder_layer(0.5 * z, f, p, b, cotangent=v, backend="triton")

    assert torch.autograd.gradcheck(dec, (z, v, phi, psi, b)), fresh_seed


def test_rohnn_on_the_triton_path_equals_torch(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    windows = 0.3 * torch.randn(3, 3, 10, generator=g, dtype=F64)  # 2 steps, batch 3
    out = {}
    for backend in ("torch", "triton"):
        model = ROHNN(
            [5, 3, 2], generator=torch.Generator().manual_seed(fresh_seed), backend=backend
        )
        loss, _ = window_loss(model, windows)
        loss.backward()
        out[backend] = (
            loss.detach(),
            [p.grad.clone() for p in model.parameters() if p.grad is not None],
        )
    # the same float64 sums in another order: rounding of O(1) numbers through a few layers
    torch.testing.assert_close(out["triton"][0], out["torch"][0], atol=1e-11, rtol=1e-11)
    for a, b in zip(out["triton"][1], out["torch"][1]):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10, msg=f"seed {fresh_seed}")
    assert len(out["triton"][1]) == len(out["torch"][1])


def test_registered_and_compiles():
    # the core suite compiles every registered specialisation; here the encoder one, to fail
    # close to the chapter when it breaks
    names = {
        f"03.biorthogonal_{k}_layer_{t}" for k in ("encoder", "decoder") for t in ("fp32", "fp64")
    }
    assert names <= set(KERNELS)
    for t in ("fp32", "fp64"):  # float32 as three TF32 products, float64 exact: never plain TF32
        spec = KERNELS[f"03.biorthogonal_encoder_layer_{t}"]
        reports = compile_check(
            spec.kernel, spec.signature, spec.constexprs, num_warps=spec.num_warps
        )
        assert [r.target for r in reports] == [(7, 5), (9, 0)]


def test_bad_backend():
    x = torch.zeros(2, 4, dtype=F64)
    with pytest.raises(ValueError, match="backend"):
        biorthogonal_layer(
            x, torch.zeros(4, 2, dtype=F64), torch.zeros(4, dtype=F64), backend="cuda"
        )
