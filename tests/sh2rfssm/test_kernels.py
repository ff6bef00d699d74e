"""Chapter 13: the fused Triton scan kernel against the torch reference, under the interpreter."""

import pytest
import torch

from icml26_lit.core import HAS_TRITON, KERNELS, check_kernel, compile_check
from icml26_lit.sh2rfssm.kernels import hrf_scan_spike, hrf_scan_spike_reference
from icml26_lit.sh2rfssm.neuron import hrf_transition

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def _inputs(size, dtype, g):
    B, L, H = size
    omega = torch.exp(torch.rand(H, generator=g, dtype=torch.float64) * 2 - 1.5)
    damping = torch.rand(H, generator=g, dtype=torch.float64) * 0.1
    method = "imex" if int(torch.randint(0, 2, (1,), generator=g)) else "im"
    M, F = hrf_transition(omega, damping, 0.5, method)
    return (
        torch.randn(B, L, H, generator=g, dtype=dtype),
        M.to(dtype),
        F.to(dtype),
        0.2 * torch.rand(H, generator=g, dtype=dtype),
    )


def test_forward_matches_reference():
    # awkward sizes: one step, one neuron, lengths not a multiple of the chunk, several chunks
    check_kernel(
        lambda *a: hrf_scan_spike(*a, backend="triton", chunk=16, block_h=8)[1:],
        lambda *a: hrf_scan_spike_reference(*a)[1:],
        _inputs,
        sizes=[(1, 1, 1), (2, 37, 5), (1, 16, 9), (1, 50, 3)],
        dtypes=(torch.float32, torch.float64),
    )


def test_spikes_agree_away_from_threshold(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    cur, M, F, theta = _inputs((2, 45, 6), torch.float64, g)
    z, u, _ = hrf_scan_spike(cur, M, F, theta, backend="triton", chunk=16, block_h=4)
    zr, ur, _ = hrf_scan_spike_reference(cur, M, F, theta)
    far = (ur - theta).abs() > 1e-9
    assert bool((z[far] == zr[far]).all()), f"seed={fresh_seed}"


def test_backward_matches_reference_autograd(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    for dtype in (torch.float32, torch.float64):
        args = [a.clone().requires_grad_(True) for a in _inputs((2, 21, 5), dtype, g)]
        ref = [a.detach().clone().requires_grad_(True) for a in args]
        wz, wu, wv = (torch.randn(2, 21, 5, generator=g, dtype=dtype) for _ in range(3))
        z, u, v = hrf_scan_spike(*args, backend="triton", chunk=8, block_h=4)
        (z * wz + u * wu + v * wv).sum().backward()
        zr, ur, vr = hrf_scan_spike_reference(*ref)
        (zr * wz + ur * wu + vr * wv).sum().backward()
        tol = dict(atol=1e-4, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-8)
        for name, a, r in zip(("current", "M", "F", "theta"), args, ref):
            torch.testing.assert_close(a.grad, r.grad, msg=f"grad {name} seed={fresh_seed}", **tol)


def test_gradcheck_states_fp64(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    cur, M, F, theta = _inputs((1, 6, 2), torch.float64, g)
    args = (cur.requires_grad_(True), M.requires_grad_(True), F.requires_grad_(True))
    # the states are exactly differentiable (the spikes only through the surrogate)
    assert torch.autograd.gradcheck(
        lambda c, m, f: hrf_scan_spike(c, m, f, theta, backend="triton", chunk=4, block_h=2)[1:],
        args,
        fast_mode=True,
    ), f"seed={fresh_seed}"


def test_wrapper_errors():
    cur, M, F, theta = _inputs((1, 5, 3), torch.float32, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="length 0"):
        hrf_scan_spike(cur[:, :0], M, F, theta)
    with pytest.raises(ValueError, match=r"F must have shape \(3, 2\)"):
        hrf_scan_spike(cur, M, F[:2], theta)
    with pytest.raises(TypeError, match="M must have dtype"):
        hrf_scan_spike(cur, M.double(), F, theta)
    with pytest.raises(ValueError, match="current contains NaN"):
        hrf_scan_spike(torch.full_like(cur, float("nan")), M, F, theta)
    with pytest.raises(ValueError, match="chunk must be a power of two"):
        hrf_scan_spike(cur, M, F, theta, chunk=12)


def test_layer_triton_mode_matches_fft():
    from icml26_lit.sh2rfssm import HRFLayer

    layer = HRFLayer(2, 5, mode="triton", generator=torch.Generator().manual_seed(3))
    x = torch.randn(2, 19, 2)
    z, u, v = layer(x, return_state=True)
    layer.mode = "fft"
    zf, uf, vf = layer(x, return_state=True)
    torch.testing.assert_close(u, uf, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(v, vf, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("key", ["13.hrf_scan_fwd_c64_h32", "13.hrf_scan_bwd_c64_h32"])
def test_compile_check(key):
    spec = KERNELS[key]
    reports = compile_check(spec.kernel, spec.signature, spec.constexprs, num_warps=spec.num_warps)
    assert [r.target for r in reports] == [(7, 5), (9, 0)]


def test_bench_variants_agree_forward_and_backward():
    # the bench's on-card agreement compares what the variants return: states and input gradient
    from icml26_lit.core.bench import variant_agreement
    from icml26_lit.sh2rfssm.kernels import _bench_case

    fn, model = _bench_case(2, 37, 5)
    variants = fn(torch.device("cpu"))  # "triton" runs the interpreter here
    outs = variants["triton"]()
    assert len(outs) == 3 and outs[2] is not None and outs[2].shape == (2, 37, 5)
    agree = variant_agreement(variants)
    assert set(agree) == {"triton"} and agree["triton"]["rel_diff"] < 1e-5
    assert agree["triton"]["reference_repeat"] == 0.0
