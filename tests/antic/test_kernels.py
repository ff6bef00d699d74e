"""Tests for the fused coordinate-network kernel (Triton interpreter, set by tests/conftest.py)."""

import math

import pytest
import torch

from icml26_lit.antic.kernels import (
    RANK_PAD,
    bytes_model,
    field_forward_reference,
    field_vjp,
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
    name = "04.fused_field_forward_backward[256^2 points, m=64, H=64, L=5, r=16]"
    both = BENCHMARKS[name].fn("cpu", n=8)
    assert set(both) == {"torch", "triton", "triton_tf32"}
    for a, b in zip(both["triton"](), both["torch"]()):  # every packed tensor's gradient
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
    assert torch.equal(torch.get_rng_state(), state)


# ---- the backward kernel ----------------------------------------------------------------------


def _leaves(x, packed):
    return [t.clone().requires_grad_() for t in (x, *packed)]


def _kernel_grads(x, packed, layers, dy):
    leaves = _leaves(x, packed)
    y = fused_field_packed(leaves[0], tuple(leaves[1:]), layers, backend="triton")
    return torch.autograd.grad(y, leaves, dy)


def _autograd_grads(x, packed, layers, dy):
    # autograd through the reference; tensors it does not read (W_h, A, B for one layer) get 0
    leaves = _leaves(x, packed)
    y = field_forward_reference(leaves[0], *leaves[1:], n_layers=layers)
    grads = torch.autograd.grad(y, leaves, dy, allow_unused=True)
    return [torch.zeros_like(t) if g is None else g for g, t in zip(grads, leaves)]


_NAMES = "x fourier W1 Wh bias ln_w ln_b w_out b_out A1 B1 A B".split()


@pytest.mark.parametrize("layers", [1, 3])
def test_backward_gradcheck(fresh_seed, layers):
    # finite differences of the kernel's forward against the backward kernel, float64 in the
    # interpreter: every input in random directions (fast mode), then x entry by entry
    g = torch.Generator().manual_seed(fresh_seed)
    x, packed, _ = make_inputs((5, layers), torch.float64, g)
    leaves = _leaves(x, packed)

    def f(*a):
        return fused_field_packed(a[0], a[1:], layers, backend="triton")

    assert torch.autograd.gradcheck(f, leaves, eps=1e-6, atol=1e-5, rtol=1e-4, fast_mode=True)

    def g_x(x):
        return fused_field_packed(x, packed, layers, backend="triton")

    assert torch.autograd.gradcheck(g_x, (leaves[0],), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_backward_matches_autograd_and_field_vjp_float64(fresh_seed):
    # float64: the kernel against autograd through the reference (1e-10 relative to each
    # tensor's largest entry: a few hundred roundings of 1.1e-16 at most), and against
    # field_vjp, whose lines it executes, to 1e-12; sizes below, at and across the 16-row tile
    g = torch.Generator().manual_seed(fresh_seed)
    for size in [(1, 1), (16, 2), (17, 3), (130, 2), (40, 1)]:
        x, packed, layers = make_inputs(size, torch.float64, g)
        dy = torch.randn(size[0], dtype=torch.float64, generator=g)
        got = _kernel_grads(x, packed, layers, dy)
        want = _autograd_grads(x, packed, layers, dy)
        for name, a, b, c in zip(_NAMES, got, want, field_vjp(x, packed, layers, dy)):
            scale = b.abs().max().clamp_min(1.0)
            torch.testing.assert_close(
                a, b, rtol=1e-10, atol=1e-10 * scale, msg=lambda m: f"d/d{name} at {size}: {m}"
            )
            torch.testing.assert_close(a, c, rtol=1e-12, atol=1e-12 * scale)


def _x_terms(x, packed, layers, dy):
    "Largest entry of |dz| |B_f|^T, float64: the size of the terms of dx = dz B_f^T."
    z = (x @ packed[0]).requires_grad_()  # the reference on z itself (an identity Fourier matrix)
    eye = torch.eye(z.shape[1], dtype=z.dtype)
    y = field_forward_reference(z, eye, *packed[1:], n_layers=layers)
    (dz,) = torch.autograd.grad(y, z, dy)
    return (dz.abs() @ packed[0].abs().T).max().item()


def test_backward_float32_within_rounding_bound(fresh_seed):
    # float32 gradients against float64 autograd at the same (float32) inputs. A first-order,
    # normwise rounding bound, each float32 operation erring by at most u = 2^-24 relative:
    # (1) z = x B_f is one product and one sum, so it errs by up to 2 u |z|, an absolute error
    # that cos and sin pass on unchanged to features of size <= 1 (forward and backward both
    # evaluate them): 2 u z_max relative to the features, carried by the network's gradient;
    # (2) every other quantity is a sum, and a sum of K terms errs by up to about K u times its
    # terms' size: along a gradient's longest chain the N points of a weight gradient (tile
    # rows, then torch.sum), the 2m inputs of the first layer, and per layer H-term sums in
    # the product, the LayerNorm statistics and their adjoints (4 H), so K = N + 2m + 4 L H.
    # Hence max|error| <= u (2 z_max + K) S per tensor, S the size of the terms of the tensor's
    # last sum. For x's gradient that is dx = dz B_f^T, whose terms cancel (|B_f| reaches ~20):
    # S is the largest entry of |dz| |B_f|^T. For the weights S is the gradient's largest
    # entry (over 100 seeds their errors stayed within half of that bound). The bound is a
    # first-order estimate, so it is checked on PyTorch's own float32 autograd through the
    # reference too: it describes float32 arithmetic, not this kernel.
    u = torch.finfo(torch.float32).eps / 2
    g = torch.Generator().manual_seed(fresh_seed)
    for size in [(90, 3), (33, 1), (200, 2)]:
        x, packed, layers = make_inputs(size, torch.float32, g)
        dy = torch.randn(size[0], generator=g)
        x64, p64 = x.double(), [t.double() for t in packed]
        exact = _autograd_grads(x64, p64, layers, dy.double())
        kernel = _kernel_grads(x, packed, layers, dy)
        ref32 = _autograd_grads(x, packed, layers, dy)
        z_max = (x64 @ p64[0]).abs().max().item()
        k = size[0] + 2 * packed[0].shape[1] + 4 * layers * packed[1].shape[1]
        for name, a, r, e in zip(_NAMES, kernel, ref32, exact):
            scale = _x_terms(x64, p64, layers, dy.double()) if name == "x" else e.abs().max()
            bound = u * (2 * z_max + k) * float(scale)
            for who, v in (("kernel", a), ("float32 reference", r)):
                err = (v.double() - e).abs().max().item()
                assert v.dtype == torch.float32 and err <= bound, (
                    f"{who}: d/d{name} at {size}: error {err:.3g} > bound {bound:.3g} "
                    f"(2 z_max + K = {2 * z_max + k:.0f}, S = {float(scale):.3g})"
                )


def test_backward_partial_inputs_and_lora_training(fresh_seed):
    # only what autograd asks for: the LoRA factors alone (ANTIC's frames after the first),
    # the coordinates alone, one base tensor alone; through NeuralField's own parameters too
    g = torch.Generator().manual_seed(fresh_seed)
    x, packed, layers = make_inputs((37, 2), torch.float64, g)
    dy = torch.randn(37, dtype=torch.float64, generator=g)
    want = _autograd_grads(x, packed, layers, dy)
    for idx in ([9, 10, 11, 12], [0], [7], [0, 4, 11]):
        leaves = [t.clone().requires_grad_(i in idx) for i, t in enumerate((x, *packed))]
        y = fused_field_packed(leaves[0], tuple(leaves[1:]), layers, backend="triton")
        got = torch.autograd.grad(y, [leaves[i] for i in idx], dy)
        for i, a in zip(idx, got):
            torch.testing.assert_close(a, want[i], rtol=1e-10, atol=1e-10)
    with torch.no_grad():
        assert fused_field_packed(x, packed, layers, backend="triton").grad_fn is None
    f = _field(fresh_seed % 10_000, layers=2).double()
    for p in f.base_parameters():
        p.requires_grad_(False)
    xs = torch.rand(21, 2, dtype=torch.float64, generator=g) * 2 * math.pi
    got = torch.autograd.grad(
        fused_field(xs, f, backend="triton", differentiable=True).square().sum(),
        f.lora_parameters(),
    )
    want = torch.autograd.grad(f(xs)[:, 0].square().sum(), f.lora_parameters())
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_backward_zero_lora_factors_and_chunked_launches(fresh_seed):
    # all-zero LoRA factors (the kernel's no-LoRA path) still get their (zero) gradients; the
    # per-tile rows summed over several launches equal one launch's, and two runs agree bit for
    # bit (no atomics)
    from icml26_lit.antic.kernels import _launch, _launch_backward

    g = torch.Generator().manual_seed(fresh_seed)
    x, packed, layers = make_inputs((70, 3), torch.float64, g)
    packed = packed[:8] + tuple(torch.zeros_like(t) for t in packed[8:])
    dy = torch.randn(70, dtype=torch.float64, generator=g)
    got = _kernel_grads(x, packed, layers, dy)
    for a, b in zip(got, _autograd_grads(x, packed, layers, dy)):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    _, pre = _launch(x, packed, layers, save=True)
    one = _launch_backward(dy, x, pre, packed, layers, (True, True, True))
    many = _launch_backward(dy, x, pre, packed, layers, (True, True, True), max_bytes=1)
    again = _launch_backward(dy, x, pre, packed, layers, (True, True, True))
    for a, b, c in zip([one[0], *one[1]], [many[0], *many[1]], [again[0], *again[1]]):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
        assert torch.equal(a, c)
