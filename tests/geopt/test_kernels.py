"""geopt.kernels: the Triton slice/de-slice under the interpreter against the einsum reference."""

import os
import subprocess
import sys

import torch

from icml26_lit.core import check_kernel
from icml26_lit.geopt.kernels import (
    deslice,
    deslice_reference,
    slice_reference,
    slice_tokens,
    slice_weights_reference,
)
from icml26_lit.geopt.model import Transolver


def _make(size, dtype, g):
    B, H, N, C, G = size
    t = lambda *s: torch.randn(*s, generator=g, dtype=dtype)
    return (
        t(B, H, N, C),
        t(B, H, N, C),
        t(C, G),
        t(G),
        0.3 + torch.rand(H, generator=g, dtype=dtype),
    )


SIZES = [(2, 2, 37, 8, 4), (1, 3, 5, 5, 3), (1, 1, 1, 4, 2)]  # odd N, widths, a single point


def test_slice_matches_reference(fresh_seed):
    kern = lambda *a: slice_tokens(*a, backend="triton")
    check_kernel(
        kern, slice_reference, _make, SIZES, (torch.float32, torch.float64), seed=fresh_seed
    )


def test_deslice_matches_reference(fresh_seed):
    def make(size, dtype, g):
        x, f, w, b, t = _make(size, dtype, g)
        z = torch.randn(*x.shape[:2], w.shape[1], x.shape[3], generator=g, dtype=dtype)
        return z, x, w, b, t

    kern = lambda *a: deslice(*a, backend="triton")
    check_kernel(
        kern, deslice_reference, make, SIZES, (torch.float32, torch.float64), seed=fresh_seed
    )


def test_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    args = [
        a.requires_grad_() for a in _make((1, 2, 5, 3, 2), torch.float64, g)
    ]  # tiny: interpreter
    assert torch.autograd.gradcheck(
        lambda *a: slice_tokens(*a, backend="triton"), args, fast_mode=True
    )
    z = torch.randn(1, 2, 2, 3, dtype=torch.float64, generator=g, requires_grad=True)
    fn = lambda z, x, w, b, t: deslice(z, x, w, b, t, backend="triton")
    assert torch.autograd.gradcheck(fn, [z, args[0], *args[2:]], fast_mode=True)


def test_slice_weights_sum_to_one(fresh_seed):
    x, f, w, b, t = _make((2, 2, 9, 4, 3), torch.float64, torch.Generator().manual_seed(fresh_seed))
    sw = slice_weights_reference(x, w, b, t)
    torch.testing.assert_close(sw.sum(-1), torch.ones(2, 2, 9, dtype=torch.float64))
    # with f = 1 the kernel's token is n_g / (n_g + 1e-5), n_g = sum_n w_ng: it sees the same sums
    z = slice_tokens(x, torch.ones_like(f), w, b, t, backend="triton")
    n = sw.sum(2)[..., None].expand_as(z)
    torch.testing.assert_close(z, n / (n + 1e-5), atol=1e-14, rtol=0)


def test_transolver_triton_equals_torch(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    kw = dict(hidden=16, layers=2, heads=2, slices=4)
    a = Transolver(
        8, 3, backend="triton", generator=torch.Generator().manual_seed(fresh_seed), **kw
    )
    r = Transolver(8, 3, backend="torch", generator=torch.Generator().manual_seed(fresh_seed), **kw)
    a, r = a.double(), r.double()
    x = torch.randn(2, 37, 8, generator=g, dtype=torch.float64)
    ya, yr = a(x), r(x)
    torch.testing.assert_close(ya, yr, atol=1e-12, rtol=1e-10)  # float64, same sums reordered
    ya.square().sum().backward()
    yr.square().sum().backward()
    for (n, pa), pr in zip(a.named_parameters(), r.parameters()):
        torch.testing.assert_close(pa.grad, pr.grad, atol=1e-10, rtol=1e-8, msg=n)


def test_bad_input():
    x, f, w, b, t = _make((1, 2, 5, 4, 3), torch.float32, torch.Generator().manual_seed(0))
    for args, name in (
        ((x[0], f, w, b, t), "x"),
        ((x, f, w[:2], b, t), "w"),
        ((x, f, w, b, -t), "tau"),
    ):
        try:
            slice_tokens(*args, backend="torch")
            raise AssertionError("accepted")
        except (ValueError, TypeError) as e:
            assert name in str(e)


def test_compile_check_sm75_sm90():
    # a fresh process: running the interpreter earlier leaves triton.language patched
    code = (
        "from icml26_lit.core import compile_check\n"
        "from icml26_lit.geopt import kernels as K\n"
        "for k in (K.slice_fwd_kernel, K.slice_bwd_kernel):\n"
        "    for t in K.TILES:\n"
        "        r = compile_check(k, K.SIGNATURES[k.fn.__name__], t)\n"
        "        assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


def test_chunk_loop(fresh_seed, monkeypatch):
    # C = G = 32 gives BLOCK_N = 8; two programs per head make each walk 3 blocks of its chunk
    import icml26_lit.geopt.kernels as K

    monkeypatch.setattr(K, "MAX_PROGRAMS", 2)
    assert K._grid(37, 8) == (2, 24)
    g = torch.Generator().manual_seed(fresh_seed)
    x, f, w, b, t = _make((1, 2, 37, 32, 32), torch.float64, g)
    for a in (x, f, w, b, t):
        a.requires_grad_()
    z = torch.randn(1, 2, 32, 32, generator=g, dtype=torch.float64)
    outs = (slice_tokens(x, f, w, b, t, backend="triton"), deslice(z, x, w, b, t, backend="triton"))
    refs = (slice_reference(x, f, w, b, t), deslice_reference(z, x, w, b, t))
    for o, r in zip(outs, refs):
        torch.testing.assert_close(o, r, atol=1e-12, rtol=1e-10)  # float64, sums reordered
    ga = torch.autograd.grad(outs[0].sum() + outs[1].square().sum(), (x, f, w, b, t))
    gr = torch.autograd.grad(refs[0].sum() + refs[1].square().sum(), (x, f, w, b, t))
    for a, r in zip(ga, gr):
        torch.testing.assert_close(a, r, atol=1e-10, rtol=1e-8)


def test_registered_benchmark_variants_agree():
    from icml26_lit.core.bench import BENCHMARKS
    from icml26_lit.geopt.kernels import _bench_problem, _slice_fwd_bwd

    assert "02.slice_deslice_fwd_bwd_N262k" in BENCHMARKS
    a = _bench_problem(N=37, H=2, C=4, G=3, device="cpu", dtype=torch.float64)
    torch.testing.assert_close(_slice_fwd_bwd(a, "triton"), _slice_fwd_bwd(a, "torch"))
