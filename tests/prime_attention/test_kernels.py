"""Chapter 14: the flash-prime kernel under the interpreter, its compilation and registration."""

import math
import os
import subprocess
import sys

import pytest
import torch

from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel
from icml26_lit.prime_attention import kernels as K
from icml26_lit.prime_attention.kernels import (
    _bench_model,
    _bench_model_backward,
    _tiles,
    make_attention_inputs,
    prime_attention,
    prime_attention_reference,
    prime_attention_vjp,
)


def _triton(*a):
    return prime_attention(*a, backend="triton")


def test_kernel_matches_reference_awkward_shapes(fresh_seed):
    # N not a block multiple, d = 12 (padded to 16), one channel, one row, per-sample filters
    check_kernel(
        _triton,
        prime_attention_reference,
        make_attention_inputs,
        sizes=[
            (1, 1, 1, 1, False),
            (2, 3, 19, 12, False),
            (1, 2, 17, 3, True),
            (1, 1, 33, 8, False),
        ],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
    )


def test_kernel_empty_batch():
    q, k, v, f = make_attention_inputs(
        (0, 2, 5, 4, False), torch.float32, torch.Generator().manual_seed(0)
    )
    assert _triton(q, k, v, f).shape == (0, 2, 5, 4)


@pytest.mark.parametrize("size", [(2, 1, 3, 2, False), (1, 2, 2, 2, True)])
def test_kernel_gradcheck(fresh_seed, size):
    # finite differences of the forward kernel against the backward kernels, float64, every input
    # (the batch-shared F's gradient sums over 2 samples; per-sample F, 2 heads)
    g = torch.Generator().manual_seed(fresh_seed)
    inputs = [t.requires_grad_(True) for t in make_attention_inputs(size, torch.float64, g)]
    assert torch.autograd.gradcheck(_triton, inputs, eps=1e-6, atol=1e-6)


def test_tiles():
    for n, d in [(1, 1), (7, 12), (862, 16), (300, 64)]:
        bm, bn, bd = _tiles(n, d)
        assert bd >= d and bd & (bd - 1) == 0 and bm * bn * bd <= 4096


def test_registered():
    assert {"14.flash_prime_fp32", "14.flash_prime_fp64"} <= set(KERNELS)
    for part in ("dkdv", "dq", "df"):
        assert {f"14.flash_prime_bwd_{part}_fp32", f"14.flash_prime_bwd_{part}_fp64"} <= set(
            KERNELS
        )
    assert {"14.flash_prime", "14.flash_prime_forward_backward"} <= set(BENCHMARKS)
    _bench_model(B=32, H=8, N=862, D=16)
    assert _bench_model_backward()["bytes"] > _bench_model()["bytes"]
    assert abs(2 * 32 * 8 * 862**2 * 16 * 4 / 1e9 - 24.3) < 0.1  # the 24 GB of K~ and V~


def test_compile_check_sm75_sm90():
    # a fresh process: running the interpreter earlier leaves triton.language patched
    code = (
        "import torch\n"
        "from icml26_lit.core import compile_check\n"
        "from icml26_lit.prime_attention import kernels as K\n"
        "for dt in (torch.float32, torch.float64):\n"
        "    r = compile_check(K.flash_prime_kernel, K.SIGNATURES[dt], K.TILE)\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


# ---- the backward kernels ----------------------------------------------------------------------


def _grads(args, do, backend="triton"):
    leaves = [t.clone().requires_grad_() for t in args]
    return torch.autograd.grad(prime_attention(*leaves, backend=backend), leaves, do)


_SIZES = [(1, 1, 1, 1, False), (2, 3, 19, 12, False), (1, 2, 17, 3, True), (3, 1, 33, 8, False)]


def test_backward_matches_reference_autograd(fresh_seed):
    # float64: the kernels against autograd through the reference and against the PyTorch
    # adjoint they mirror; both are exact up to rounding of sums of at most N + d terms of size
    # ~10, so 1e-10 leaves a margin of ~1e4 over float64's 1.1e-16
    g = torch.Generator().manual_seed(fresh_seed)
    for size in _SIZES:
        args = make_attention_inputs(size, torch.float64, g)
        do = torch.randn(args[0].shape, generator=g, dtype=torch.float64)
        got = _grads(args, do)
        want = _grads(args, do, backend="torch")
        for name, a, b, c in zip("qkvF", got, want, prime_attention_vjp(*args, do)):
            msg = lambda m, name=name: f"d/d{name} at {size}, seed {fresh_seed}: {m}"  # noqa: E731
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10, msg=msg)
            torch.testing.assert_close(a, c, rtol=1e-10, atol=1e-10, msg=msg)


def _f32_rounding_bound(q, k, v, filters, do):
    """First-order bound on |float32 gradient - exact gradient|, entry by entry (float64).

    Every quantity is a sum of at most n = B + N + d + 8 terms (a few roundings besides), and a
    float32 sum of m <= n terms, in any order, is within gam = n u / (1 - n u) of the sum of
    their absolute values (u = 2^-24; Higham, Accuracy and Stability, 2nd ed., section 3.1). The
    error of each stage is carried to the next to first order: the scores s (dot products over d),
    the log-sum-exp (a max, a sum of N exps, a log), p = exp(s - lse) (an absolute error in its
    argument is a relative one in p), o, delta = do . o, dp and ds = p (dp - delta), and finally
    each gradient, a sum over j, i or the batch of terms with known errors plus the sum's own.
    The exp and log of numpy's float32 are within a few u, far inside gam."""
    q, k, v, filters, do = (t.double() for t in (q, k, v, filters, do))
    B, H, N, D = q.shape
    u = 2.0**-24
    n = B + N + D + 8
    gam = n * u / (1 - n * u)
    scale = 1 / math.sqrt(D)
    f = filters if filters.dim() == 5 else filters[None]
    f = f.expand(B, *f.shape[1:])
    fa = f.abs()
    s = torch.einsum("bhic,bhijc,bhjc->bhij", q, f, k) * scale
    lse = torch.logsumexp(s, -1, keepdim=True)
    p = (s - lse).exp()
    o = torch.einsum("bhij,bhijc,bhjc->bhic", p, f, v)
    e_s = gam * scale * torch.einsum("bhic,bhijc,bhjc->bhij", q.abs(), fa, k.abs())
    # lse = m + log l, l summed with the online rescaling: errors of s, of m and of the sum
    s_max = s.abs().amax(-1, keepdim=True)
    e_lse = 3 * e_s.amax(-1, keepdim=True) + gam * (4 + 2 * math.log(N) + 2 * s_max + 2 * lse.abs())
    rel_p = e_s + e_lse + gam * (2 + math.log(N) + s.abs() + lse.abs())  # forward's p too
    e_o = torch.einsum("bhij,bhijc,bhjc->bhic", p * (rel_p + gam), fa, v.abs())
    e_delta = (do.abs() * (e_o + gam * o.abs())).sum(-1, keepdim=True)
    dp = torch.einsum("bhic,bhijc,bhjc->bhij", do, f, v)
    e_dp = gam * torch.einsum("bhic,bhijc,bhjc->bhij", do.abs(), fa, v.abs())
    ds = p * (dp - (do * o).sum(-1, keepdim=True))
    e_ds = p * (e_dp + e_delta) + (rel_p + gam) * ds.abs()
    w_ds, w_p = e_ds + 2 * gam * ds.abs(), p * (rel_p + 2 * gam)  # errors of each term and sum
    b_dq = scale * torch.einsum("bhij,bhijc,bhjc->bhic", w_ds, fa, k.abs())
    b_dk = scale * torch.einsum("bhij,bhijc,bhic->bhjc", w_ds, fa, q.abs())
    b_dv = torch.einsum("bhij,bhijc,bhic->bhjc", w_p, fa, do.abs())
    b_df = scale * w_ds[..., None] * q.abs()[:, :, :, None] * k.abs()[:, :, None]
    b_df = b_df + w_p[..., None] * do.abs()[:, :, :, None] * v.abs()[:, :, None]
    return b_dq, b_dk, b_dv, b_df if filters.dim() == 5 else b_df.sum(0)


def test_backward_float32_within_rounding_bound(fresh_seed):
    # A fixed float32 tolerance would be either too loose for small gradients or too tight where
    # the scores are large (p = exp(s - lse) turns an absolute error of s into a relative one of
    # p). So each entry is held to `_f32_rounding_bound`: its own worst case under float32
    # rounding, in any summation order, against the float64 adjoint at the same float32 inputs.
    # The bound is worst-case, so the observed errors sit 100-1000x inside it; it is also
    # checked to be small (under 2% of the largest gradient), so a wrong term would still fail.
    g = torch.Generator().manual_seed(fresh_seed)
    for size in _SIZES + [(2, 1, 40, 16, False)]:
        args = make_attention_inputs(size, torch.float32, g)
        args = [2 * t for t in args[:3]] + [args[3]]  # scores of a few units
        do = torch.randn(args[0].shape, generator=g)
        got = _grads(args, do)
        exact = prime_attention_vjp(*[t.double() for t in args], do.double())
        for name, a, ex, bound in zip("qkvF", got, exact, _f32_rounding_bound(*args, do)):
            err = (a.double() - ex).abs()
            assert a.dtype == torch.float32 and bool((err <= bound).all()), (
                f"d/d{name} at {size}, seed {fresh_seed}: error {err.max():.3g}, "
                f"{(err / bound.clamp_min(1e-300)).max():.2f} x the rounding bound"
            )
            if size[2] > 1:
                assert bound.max() < 0.02 * ex.abs().max(), (name, size, fresh_seed)


@pytest.mark.parametrize("which", ["q", "kv", "F", "qF"])
def test_backward_partial_inputs(fresh_seed, which, monkeypatch):
    # only some inputs need gradients: those get the full backward's values, the others None;
    # a frozen F never launches the filter kernel
    g = torch.Generator().manual_seed(fresh_seed)
    args = make_attention_inputs((2, 2, 9, 4, False), torch.float64, g)
    do = torch.randn(args[0].shape, generator=g, dtype=torch.float64)
    full = _grads(args, do)
    names = ["q", "k", "v", "F"]
    leaves = [t.clone().requires_grad_(n in which) for n, t in zip(names, args)]
    if "F" not in which:
        monkeypatch.setattr(K, "flash_prime_bwd_df_kernel", None)  # launching it would fail
    prime_attention(*leaves, backend="triton").backward(do)
    for n, leaf, want in zip(names, leaves, full):
        if n in which:
            torch.testing.assert_close(leaf.grad, want, rtol=1e-12, atol=1e-12)
        else:
            assert leaf.grad is None


def test_backward_never_builds_the_reference(fresh_seed, monkeypatch):
    # the backward runs the kernels: the reference and the PyTorch adjoint (which materialise
    # K~ and V~) are never called
    g = torch.Generator().manual_seed(fresh_seed)
    args = make_attention_inputs((1, 2, 5, 4, True), torch.float64, g)
    do = torch.randn(args[0].shape, generator=g, dtype=torch.float64)
    want = prime_attention_vjp(*args, do)

    def boom(*a, **k):
        raise AssertionError("the backward called a materialising reference")

    monkeypatch.setattr(K, "prime_attention_reference", boom)
    monkeypatch.setattr(K, "prime_attention_vjp", boom)
    for a, b in zip(_grads(args, do), want):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_backward_empty_batch():
    args = make_attention_inputs((0, 2, 5, 4, False), torch.float32, torch.Generator())
    dq, dk, dv, df = _grads(args, torch.zeros(0, 2, 5, 4))
    assert dq.shape == (0, 2, 5, 4) and df.shape == (2, 5, 5, 4) and not df.any()
