"""Tests for the fused coordinate-network kernel (Triton interpreter, set by tests/conftest.py)."""

import math

import pytest
import torch

from icml26_lit.antic.kernels import (
    RANK_PAD,
    bytes_model,
    field_forward_reference,
    fused_field,
    fused_field_packed,
    pack_field,
)
from icml26_lit.antic.neural_field import NeuralField
from icml26_lit.core import KERNELS, check_kernel, compile_check


def _field(seed, layers=2, rank=3, hidden=16, n_freq=16):
    f = NeuralField(hidden=hidden, n_layers=layers, n_freq=n_freq, seed=seed)
    f.add_lora(rank, seed=seed + 1)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for b in f.lora_b:
            b.copy_(0.2 * torch.randn(b.shape, generator=g))
    return f


def make_inputs(size, dtype, g):
    n, layers = size
    f = _field(int(torch.randint(0, 10_000, (1,), generator=g)), layers)
    return torch.rand(n, 2, generator=g, dtype=dtype) * 2 * math.pi, pack_field(f, dtype), layers


def test_kernel_matches_reference_interpreter():
    check_kernel(
        lambda x, p, l: fused_field_packed(x, p, l, backend="triton"),
        lambda x, p, l: field_forward_reference(x, *p, n_layers=l),
        make_inputs,
        sizes=[(1, 1), (67, 2), (130, 3)],
        dtypes=(torch.float32, torch.float64),
        atol=1e-4,
        rtol=1e-4,
    )


def test_reference_equals_neural_field_and_lora_is_not_formed(fresh_seed):
    f = _field(fresh_seed % 10_000, layers=3, rank=5)
    x = torch.rand(33, 2, dtype=torch.float64) * 6.28
    f64 = f.double()
    y = fused_field(x, f64, backend="triton")
    torch.testing.assert_close(y, f64(x)[:, 0], atol=1e-10, rtol=1e-10)
    # without LoRA (all-zero padded factors) the kernel takes the no-LoRA path
    g = NeuralField(hidden=16, n_layers=2, n_freq=16, seed=3).double()
    torch.testing.assert_close(
        fused_field(x, g, backend="triton"), g(x)[:, 0], atol=1e-10, rtol=1e-10
    )


def test_gradcheck_fp64(fresh_seed):
    f = _field(fresh_seed % 10_000, layers=2).double()
    packed = list(pack_field(f, torch.float64))
    x = (torch.rand(4, 2, dtype=torch.float64) * 6.28).requires_grad_()
    w_out = packed[6].clone().requires_grad_()

    def fn(x, w_out):
        p = list(packed)
        p[6] = w_out
        return fused_field_packed(x, tuple(p), 2, backend="triton")

    assert torch.autograd.gradcheck(fn, (x, w_out), eps=1e-6, atol=1e-6)


def test_compile_check_sm75():
    spec = KERNELS["04.fused_field_m32_h32_l3"]
    reports = compile_check(spec.kernel, spec.signature, spec.constexprs, targets=((7, 5),))
    assert reports and reports[0].shared > 0


def test_bad_inputs():
    f = _field(0)
    with pytest.raises(ValueError, match="x"):
        fused_field(torch.rand(5, 3), f, backend="torch")
    with pytest.raises(ValueError, match="backend"):
        fused_field(torch.rand(5, 2), f, backend="cuda-please")
    g = NeuralField(hidden=12, n_layers=1, n_freq=16)
    with pytest.raises(ValueError, match="hidden must be a power of two"):
        fused_field(torch.rand(5, 2), g, backend="triton")
    h = NeuralField(hidden=16, n_layers=1, n_freq=16)
    h.add_lora(RANK_PAD + 1)
    with pytest.raises(ValueError, match="LoRA rank"):
        pack_field(h)


def test_bytes_model():
    bm = bytes_model(1000, 32, 32, 3)
    assert bm["bytes"] < bm["reference_bytes"] and bm["flops"] > 0


def test_tf32_variant_runs_and_checks_precision(fresh_seed):
    # the interpreter computes TF32 products in float32: the same numbers as "ieee" there
    g = torch.Generator().manual_seed(fresh_seed)
    x, packed, layers = make_inputs((37, 2), torch.float32, g)
    ref = field_forward_reference(x, *packed, n_layers=layers)
    got = fused_field_packed(x, packed, layers, backend="triton", precision="tf32")
    torch.testing.assert_close(got, ref, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="precision must be 'ieee' or 'tf32'"):
        fused_field_packed(x, packed, layers, backend="triton", precision="fp16")
    x64, p64, _ = make_inputs((5, 2), torch.float64, g)
    with pytest.raises(ValueError, match="precision='tf32' needs float32 inputs"):
        fused_field_packed(x64, p64, 2, backend="triton", precision="tf32")


def test_tf32_variant_compiles_with_every_product_in_tf32():
    # compile_check refuses TF32 products after compiling: its refusal counts them, which shows
    # the variant compiles for sm_90 and that all 17 products of the paper's field are TF32
    spec = KERNELS["04.fused_field_m64_h64_l5"]
    tf32 = dict(spec.constexprs, PRECISION="tf32")
    with pytest.raises(AssertionError, match=r"has 17 float32 product\(s\) in TF32 on sm_90"):
        compile_check(spec.kernel, spec.signature, tf32, targets=((9, 0),))


def test_benchmarks_time_both_precisions():
    from icml26_lit.core.bench import BENCHMARKS

    fwd = BENCHMARKS["04.fused_field[256^2 points, m=64, H=64, L=5, r=16]"].fn("cpu", n=8)
    assert set(fwd) == {"torch", "triton", "torch_tf32", "triton_tf32"}
    state = torch.get_rng_state()
    assert torch.equal(fwd["torch_tf32"](), fwd["torch"]())  # TF32 only changes CUDA products
    train = BENCHMARKS["04.lora_train_step[256^2 points, m=64, H=64, L=5, r=16]"].fn("cpu", n=8)
    assert {"triton", "triton_tf32"} <= set(train)
    assert torch.equal(torch.get_rng_state(), state)
