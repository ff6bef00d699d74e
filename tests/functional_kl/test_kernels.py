"""Chapter 11: the fused Cameron-Martin kernel (interpreter), its compilation for sm_75 / sm_90."""

import os
import subprocess
import sys

import pytest
import torch

from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel
from icml26_lit.functional_kl.kernels import (
    _bench_model,
    make_cm_inputs,
    weighted_cm_norm,
    weighted_cm_norm_reference,
)
from icml26_lit.functional_kl.noise import GaussianNoise


def _triton(dv, noise, t):
    return weighted_cm_norm(dv, noise, t, backend="triton")


def test_kernel_matches_reference_awkward_sizes(fresh_seed):
    # fp32 sums of up to ~100 products: ~1e-6 relative; 1e-4 leaves room for the 1/lambda range
    check_kernel(
        _triton,
        weighted_cm_norm_reference,
        make_cm_inputs,
        sizes=[(1, 2, 1, 0), (3, 17, 2, 8), (5, 33, 3, 16), (2, 70, 1, 20), (0, 8, 1, 3)],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
        atol=1e-4,
        rtol=1e-4,
    )


def test_backward_gradcheck_fp64(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    dv, noise, t = make_cm_inputs((3, 9, 2, 3), torch.float64, g)
    dv.requires_grad_(True)
    t = t.clamp(0.05, 0.9).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, b: weighted_cm_norm(a, noise, b, backend="triton"), (dv, t), eps=1e-6, atol=1e-6
    )
    # and the closed-form backward equals autograd through the reference
    for fn in (
        lambda: weighted_cm_norm(dv, noise, t, backend="triton"),
        lambda: weighted_cm_norm_reference(dv, noise, t),
    ):
        gr = torch.autograd.grad(fn().sum(), (dv, t))
        if fn.__code__.co_names[0] == "weighted_cm_norm":
            first = gr
    torch.testing.assert_close(first[0], gr[0])
    torch.testing.assert_close(first[1], gr[1])


def test_auto_on_cpu_is_reference():
    dv, noise, t = make_cm_inputs((4, 16, 2, 5), torch.float32, torch.Generator().manual_seed(0))
    assert torch.equal(weighted_cm_norm(dv, noise, t), weighted_cm_norm_reference(dv, noise, t))


@pytest.mark.parametrize(
    "args,word",
    [
        ((torch.zeros(2, 16, 1), torch.tensor([0.5, 1.0])), "t must lie"),
        ((torch.zeros(2, 15, 1), torch.tensor([0.5, 0.5])), "grid"),
        ((torch.zeros(2, 16, 1), torch.tensor([0.5])), "t"),
    ],
)
def test_kernel_bad_input(args, word):
    with pytest.raises(ValueError, match=word):
        weighted_cm_norm(args[0], GaussianNoise(16, 4), args[1])
    with pytest.raises(ValueError, match="backend"):
        weighted_cm_norm(
            torch.zeros(2, 16, 1), GaussianNoise(16, 4), torch.zeros(2), backend="cuda"
        )


def test_registered():
    assert {"11.weighted_cm_fp32", "11.weighted_cm_fp64"} <= set(KERNELS)
    assert "11.weighted_cm_norm" in BENCHMARKS
    m = _bench_model(M=128, B=10, D=1)
    assert m["flops"] == 2 * 10 * 128 * 65 + 3 * 10 * 65


def test_compile_check_sm75_sm90():
    code = (
        "from icml26_lit.core import compile_check, KERNELS\n"
        "from icml26_lit.functional_kl import kernels as K\n"
        "for dt in ('fp32', 'fp64'):\n"
        "    s = KERNELS['11.weighted_cm_' + dt]\n"
        "    r = compile_check(K.weighted_cm_kernel, s.signature, s.constexprs)\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
