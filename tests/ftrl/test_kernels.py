"Chapter 12: the fused O2NC-Adam kernel against its reference, under the interpreter."

import pytest
import torch

from icml26_lit.core import HAS_TRITON, check_kernel, compile_check
from icml26_lit.ftrl.kernels import BLOCK, _signature, o2nc_adam_step

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def _mk(n, dtype, gen):
    r = lambda: torch.randn(n, generator=gen, dtype=dtype)
    v = r().abs()
    v[: max(1, n // 5)] = 0.0  # coordinates that never had a gradient
    g = r()
    g[: max(1, n // 5)] = 0.0
    m = r()
    m[: max(1, n // 5)] = 0.0
    return r(), g, r(), m, v, r()


def _runner(backend, clip, s, aw):
    def f(w, g, x, m, v, avg):
        outs = [t.clone() for t in (w, g, x, m, v, avg)]
        o2nc_adam_step(
            *outs,
            s=s,
            lr=0.0625,
            beta1=0.875,
            beta2=0.9375,
            clip=clip,
            avg_weight=aw,
            backend=backend,
        )
        return tuple(outs[i] for i in (0, 2, 3, 4, 5))

    return f


# the kernel takes its scalars as fp32: dyadic values (exact in fp32) keep the fp64 comparison exact
@pytest.mark.parametrize("clip", [None, 0.75])
def test_kernel_matches_reference(clip):
    seed = check_kernel(
        _runner("triton", clip, 0.375, 0.25),
        _runner("torch", clip, 0.375, 0.25),
        _mk,
        sizes=[1, 5, 257, BLOCK + 3],
        dtypes=(torch.float32, torch.float64),
    )
    print("seed", seed)


def test_kernel_fp16_params_fp32_state(fresh_seed):
    # (bf16 parameters are compiled for sm_90 by compile_check; Triton 3.7.1's interpreter stores
    # fp32 -> bf16 conversions as garbage, so bf16 is not checked here)
    g = torch.Generator().manual_seed(fresh_seed)
    w = torch.randn(37, generator=g).to(torch.float16)
    grad = torch.randn(37, generator=g).to(torch.float16)
    state = [torch.randn(37, generator=g) for _ in range(4)]
    state[2] = state[2].abs()
    a = [w.clone(), grad.clone()] + [t.clone() for t in state]
    b = [w.clone(), grad.clone()] + [t.clone() for t in state]
    kw = dict(s=0.6, lr=0.01, beta1=0.9, beta2=0.99, clip=None, avg_weight=0.5)
    o2nc_adam_step(*a, backend="triton", **kw)
    o2nc_adam_step(*b, backend="torch", **kw)
    torch.testing.assert_close(a[0], b[0], rtol=1e-3, atol=1e-3)  # fp16 rounding of the output
    for p, q in zip(a[2:], b[2:]):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_empty_and_bad_inputs():
    z = torch.zeros(0)
    o2nc_adam_step(
        z,
        z,
        z.clone(),
        z.clone(),
        z.clone(),
        z.clone(),
        s=0.5,
        lr=0.1,
        beta1=0.9,
        beta2=0.99,
        backend="triton",
    )
    t = lambda n=4: torch.zeros(n)
    with pytest.raises(ValueError, match="g has shape"):
        o2nc_adam_step(t(), t(3), t(), t(), t(), t(), s=0.5, lr=0.1, beta1=0.9, beta2=0.99)
    with pytest.raises(ValueError, match="m must be contiguous with 4 elements"):
        o2nc_adam_step(t(), t(), t(), t(5), t(), t(), s=0.5, lr=0.1, beta1=0.9, beta2=0.99)
    with pytest.raises(ValueError, match="beta1 must lie in"):
        o2nc_adam_step(t(), t(), t(), t(), t(), t(), s=0.5, lr=0.1, beta1=1.0, beta2=0.99)
    with pytest.raises(ValueError, match="s must lie in"):
        o2nc_adam_step(t(), t(), t(), t(), t(), t(), s=1.5, lr=0.1, beta1=0.9, beta2=0.99)
    with pytest.raises(TypeError, match="x must have dtype"):
        o2nc_adam_step(t(), t(), t().half(), t(), t(), t(), s=0.5, lr=0.1, beta1=0.9, beta2=0.99)


def test_compile_for_t4_and_hopper():
    reps = compile_check(
        __import__("icml26_lit.ftrl.kernels", fromlist=["o2nc_adam_kernel"]).o2nc_adam_kernel,
        _signature(),
        {"HAS_CLIP": True, "BLOCK": BLOCK},
    )
    assert [r.target for r in reps] == [(7, 5), (9, 0)]
    assert all(r.shared == 0 for r in reps)


@pytest.mark.parametrize("clip", [None, 0.75])
def test_kernel_propagates_nan_like_the_reference(fresh_seed, clip):
    gen = torch.Generator().manual_seed(fresh_seed)
    n = BLOCK + 7
    w, g, x, m, v, avg = _mk(n, torch.float32, gen)
    bad = torch.randperm(n, generator=gen)[:9]
    g[bad] = float("nan")
    a = [t.clone() for t in (w, g, x, m, v, avg)]
    b = [t.clone() for t in (w, g, x, m, v, avg)]
    kw = dict(s=0.375, lr=0.0625, beta1=0.875, beta2=0.9375, clip=clip, avg_weight=0.25)
    o2nc_adam_step(*a, backend="triton", **kw)
    o2nc_adam_step(*b, backend="torch", **kw)
    for i in (0, 2, 3, 4):  # w, x, m, v: NaN exactly where the gradient was NaN
        assert torch.equal(torch.isnan(a[i]), torch.isnan(b[i])), f"seed={fresh_seed}"
        assert bool(torch.isnan(a[i][bad]).all()) and int(torch.isnan(a[i]).sum()) == 9
    # elsewhere the kernel still matches the reference (fp32 rounding of the same ops)
    ok = ~torch.isnan(b[0])
    torch.testing.assert_close(a[0][ok], b[0][ok], rtol=1e-5, atol=1e-6)


def test_non_contiguous_w_is_updated_in_place(fresh_seed):
    gen = torch.Generator().manual_seed(fresh_seed)
    for backend in ("torch", "triton"):
        W = torch.randn(5, 3, generator=gen).t()  # (3, 5), not contiguous
        G = torch.randn(3, 5, generator=gen)
        st = [torch.randn(15, generator=gen) for _ in range(4)]
        st[2] = st[2].abs()
        dense, st2 = W.contiguous(), [t.clone() for t in st]
        kw = dict(s=0.5, lr=0.125, beta1=0.5, beta2=0.75, clip=None, avg_weight=0.5)
        o2nc_adam_step(W, G, *st, backend=backend, **kw)
        o2nc_adam_step(dense, G, *st2, backend=backend, **kw)
        assert not W.is_contiguous() and torch.equal(W, dense), f"seed={fresh_seed}"
