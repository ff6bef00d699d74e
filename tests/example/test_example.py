"""Tests of the miniature chapter (Chapter 0): the Fourier feature op and its Triton kernel."""

import math

import pytest
import torch

from icml26_lit.core import KERNELS, check_kernel, compile_check
from icml26_lit.example import experiments as ex
from icml26_lit.example.features import fourier_features_reference, gaussian_frequencies
from icml26_lit.example.kernels import bytes_model, fourier_features, fourier_features_triton


def test_reference_matches_closed_form():
    # one point, one frequency: gamma(x) = [cos(2 pi x b), sin(2 pi x b)]
    x, B = torch.tensor([[0.125]], dtype=torch.float64), torch.tensor([[2.0]], dtype=torch.float64)
    out = fourier_features_reference(x, B)
    torch.testing.assert_close(
        out, torch.tensor([[math.cos(math.pi / 2), math.sin(math.pi / 2)]], dtype=torch.float64)
    )


def test_norm_invariant(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x, B = torch.randn(9, 3, generator=g), gaussian_frequencies(3, 11, 5.0, g)
    torch.testing.assert_close(fourier_features(x, B).pow(2).sum(-1), torch.full((9,), 11.0))


def _inputs(size, dtype, g):
    n, d, m = size
    return torch.rand(n, d, generator=g, dtype=dtype), 4 * torch.randn(
        d, m, generator=g, dtype=dtype
    )


def test_kernel_matches_reference_in_interpreter():
    check_kernel(
        fourier_features_triton,
        fourier_features_reference,
        _inputs,
        sizes=[(1, 1, 1), (65, 2, 70), (130, 3, 5), (3, 8, 129)],
        dtypes=(torch.float32, torch.float64),
        atol=1e-4,
    )


def test_public_op_dispatch_triton_equals_torch(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x, B = _inputs((33, 2, 17), torch.float32, g)
    torch.testing.assert_close(
        fourier_features(x, B, backend="triton"),
        fourier_features(x, B, backend="torch"),
        atol=1e-5,
        rtol=1e-4,
    )


def test_empty_input():
    assert fourier_features_triton(torch.empty(0, 2), torch.ones(2, 4)).shape == (0, 8)


def test_noncontiguous_input_is_converted():
    x = torch.rand(2, 10).t()  # (10, 2), not contiguous
    B = torch.randn(2, 4)
    torch.testing.assert_close(
        fourier_features_triton(x, B), fourier_features_reference(x, B), atol=1e-5, rtol=1e-4
    )


@pytest.mark.parametrize(
    "bad,kw,msg",
    [
        (torch.ones(3), {}, "x must have 2 dimensions"),
        (torch.tensor([[float("nan"), 0.0]]), {}, "x contains NaN"),
        (torch.ones(2, 2, dtype=torch.int64), {}, "x must have dtype"),
        (torch.ones(2, 2), {"backend": "gpu"}, "backend='gpu'"),
    ],
)
def test_bad_input(bad, kw, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        fourier_features(bad, torch.ones(2, 3), **kw)


def test_bad_frequencies():
    with pytest.raises(ValueError, match="sigma must be positive"):
        gaussian_frequencies(2, 3, -1.0)


def test_kernel_compiles_for_t4_and_hopper():
    spec = KERNELS["00.fourier_features_d3"]
    reports = compile_check(spec.kernel, spec.signature, spec.constexprs)
    assert [r.target for r in reports] == [(7, 5), (9, 0)]


def test_bytes_model_counts_fused_traffic():
    m = bytes_model(10, 2, 4, itemsize=4)
    assert m["bytes"] == (20 + 8 + 80) * 4


def test_experiment_fits_better_with_features_on_tiny_run():
    cfg = ex.CONFIG.get("ci")
    ours = ex.fit_mlp(ex.make_data(64, 128, seed=0), cfg, use_features=True, seed=0, n_steps=150)
    raw = ex.fit_mlp(ex.make_data(64, 128, seed=0), cfg, use_features=False, seed=0, n_steps=150)
    assert ours < raw
