"""Chapter 14: the flash-prime kernel under the interpreter, its compilation and registration."""

import os
import subprocess
import sys

import torch

from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel
from icml26_lit.prime_attention.kernels import (
    _bench_model,
    _tiles,
    make_attention_inputs,
    prime_attention,
    prime_attention_reference,
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


def test_kernel_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    inputs = [
        t.requires_grad_(True) for t in make_attention_inputs((1, 2, 3, 3, False), torch.float64, g)
    ]
    assert torch.autograd.gradcheck(_triton, inputs, eps=1e-6, atol=1e-6)


def test_tiles():
    for n, d in [(1, 1), (7, 12), (862, 16), (300, 64)]:
        bm, bn, bd = _tiles(n, d)
        assert bd >= d and bd & (bd - 1) == 0 and bm * bn * bd <= 4096


def test_registered():
    assert {"14.flash_prime_fp32", "14.flash_prime_fp64"} <= set(KERNELS)
    assert "14.flash_prime" in BENCHMARKS
    _bench_model(B=32, H=8, N=862, D=16)
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
