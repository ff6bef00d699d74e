"""Chapter 05: merged multi-scale convolution, its references, the Triton kernel (interpreter)."""

import pytest
import torch

from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel
from icml26_lit.emformer.kernels import (
    _bench_model,
    conv_with_grads,
    make_conv_inputs,
    merge_kernels,
    multiscale_conv,
    multiscale_conv_merged,
    multiscale_conv_three,
    multiscale_conv_tokens,
    three_conv_tokens,
)


def _weights(C, dtype, g):
    return [torch.randn(C, 1, k, k, generator=g, dtype=torch.float64).to(dtype) for k in (1, 3, 5)]


def test_merge_kernels_by_hand():
    w1 = torch.full((1, 1, 1, 1), 2.0)
    w3 = torch.ones(1, 1, 3, 3)
    w5 = torch.zeros(1, 1, 5, 5)
    K = merge_kernels(w1, w3, w5)[0, 0]
    want = torch.zeros(5, 5)
    want[1:4, 1:4] = 1.0
    want[2, 2] = 3.0
    assert torch.equal(K, want)


@pytest.mark.parametrize("dtype,rtol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_merged_equals_three_convolutions(dtype, rtol, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.randn(2, 5, 7, 11, generator=g, dtype=torch.float64).to(dtype)
    w = _weights(5, dtype, g)
    a, b = multiscale_conv_merged(x, *w), multiscale_conv_three(x, *w)
    # 35 products summed in two orders: a few ulps of the largest partial sum (~|x| |w| 6)
    scale = float(b.abs().max())
    torch.testing.assert_close(a, b, rtol=rtol, atol=rtol * scale)


def test_weight_gradients_are_crops_of_dK(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.randn(2, 4, 6, 9, generator=g, dtype=torch.float64)
    w = [t.requires_grad_() for t in _weights(4, torch.float64, g)]
    gy = torch.randn(2, 4, 6, 9, generator=g, dtype=torch.float64)
    ga = torch.autograd.grad(multiscale_conv_merged(x, *w), w, gy)
    gb = torch.autograd.grad(multiscale_conv_three(x, *w), w, gy)  # oracle: autograd of 3 convs
    for a, b in zip(ga, gb):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    # and they are literally the crops of one dK
    K = merge_kernels(*[t.detach() for t in w]).requires_grad_()
    (gK,) = torch.autograd.grad(torch.nn.functional.conv2d(x, K, padding=2, groups=4), [K], gy)
    torch.testing.assert_close(ga[1], gK[:, :, 1:4, 1:4], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ga[0], gK[:, :, 2:3, 2:3], rtol=1e-12, atol=1e-12)


def test_gradcheck_merged_reference():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 2, 4, 5, generator=g, dtype=torch.float64, requires_grad=True)
    w = [t.requires_grad_() for t in _weights(2, torch.float64, g)]
    assert torch.autograd.gradcheck(multiscale_conv_merged, (x, *w))


def test_triton_kernel_matches_both_references(fresh_seed):
    tri = conv_with_grads(lambda *a: multiscale_conv_tokens(*a, backend="triton"))
    sizes = [(1, 1, 1, 1), (2, 3, 5, 7), (1, 1, 9, 17), (1, 5, 3, 33)]
    check_kernel(
        tri,
        conv_with_grads(three_conv_tokens),
        make_conv_inputs,
        sizes=sizes,
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
        atol=1e-4,
        rtol=1e-4,
    )
    merged = conv_with_grads(lambda *a: multiscale_conv_tokens(*a, backend="torch"))
    # fp64: both sum 25 products per output; different orders -> ~1e-14 relative
    check_kernel(
        tri,
        merged,
        make_conv_inputs,
        sizes=sizes[1:2],
        dtypes=(torch.float64,),
        seed=fresh_seed,
        atol=1e-10,
        rtol=1e-10,
    )


def test_triton_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x, grid, w1, w3, w5 = make_conv_inputs((1, 2, 3, 1), torch.float64, g)
    args = [t.requires_grad_() for t in (x, w1, w3, w5)]
    f = lambda x, a, b, c: multiscale_conv_tokens(x, grid, a, b, c, backend="triton")
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-7)


def test_empty_batch_and_map_layout():
    x = torch.zeros(0, 6, 3)
    w = _weights(3, torch.float32, torch.Generator().manual_seed(0))
    assert multiscale_conv_tokens(x, (2, 3), *w, backend="triton").shape == (0, 6, 3)
    xm = torch.randn(2, 3, 4, 5)
    torch.testing.assert_close(
        multiscale_conv(xm, *w, backend="triton"), multiscale_conv(xm, *w), rtol=1e-5, atol=1e-5
    )


def test_bad_input():
    w = _weights(3, torch.float32, torch.Generator().manual_seed(0))
    xm = torch.randn(1, 3, 4, 4)
    with pytest.raises(ValueError, match="w5 must have shape"):
        multiscale_conv(xm, w[0], w[1], torch.randn(3, 1, 3, 3))
    with pytest.raises(ValueError, match="w1 must have shape \\(4, 1, 1, 1\\)"):
        multiscale_conv(torch.randn(1, 4, 4, 4), *w)
    with pytest.raises(ValueError, match="x contains NaN"):
        multiscale_conv(xm * float("nan"), *w)
    with pytest.raises(ValueError, match="tokens but grid"):
        multiscale_conv_tokens(torch.randn(1, 15, 3), (4, 4), *w)
    with pytest.raises(ValueError, match="backend"):
        multiscale_conv(xm, *w, backend="cuda")


def test_registered_and_benchmark_model():
    assert {"05.msconv_fwd_fp32", "05.msconv_dx_fp32", "05.msconv_dk_fp32"} <= set(KERNELS)
    assert "05.multiscale_conv" in BENCHMARKS
    m = _bench_model()
    assert m["macs_three"] * 25 == m["macs_merged"] * 35


def test_compile_check_fwd_and_dk():
    from icml26_lit.core import compile_check
    from icml26_lit.emformer import kernels as K

    for key in ("05.msconv_fwd_fp32", "05.msconv_dk_fp32"):
        s = KERNELS[key]
        reports = compile_check(s.kernel, s.signature, s.constexprs)
        assert [r.target for r in reports] == [(7, 5), (9, 0)]
    assert K.HAS_TRITON
