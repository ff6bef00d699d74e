"""lm.kernels: the fused token log-probability kernel under the interpreter, and its compilation."""

import os
import subprocess
import sys

import pytest
import torch

from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel
from icml26_lit.lm.kernels import _bench_model, _tiles, token_logprobs, token_logprobs_reference


def _inputs(size, dtype, g):
    "size = (B, T, d, V, share of ignored targets)."
    B, T, D, V, ign = size
    h = torch.randn(B, T, D, generator=g, dtype=dtype)
    w = torch.randn(V, D, generator=g, dtype=dtype) / D**0.5 * 3
    y = torch.randint(0, V, (B, T), generator=g)
    y[torch.rand(B, T, generator=g) < ign] = -100
    return h, w, y


def test_forward_matches_reference_awkward_shapes(fresh_seed):
    # odd V (not a block multiple, > one 64-wide chunk), one row, d > one 64-wide chunk,
    # every target ignored, V = 1 (log-prob 0)
    check_kernel(
        lambda h, w, y: token_logprobs(h, w, y, backend="triton"),
        token_logprobs_reference,
        _inputs,
        sizes=[
            (1, 1, 5, 7, 0.0),
            (2, 3, 20, 131, 0.3),
            (1, 17, 70, 37, 0.0),
            (2, 2, 16, 9, 1.0),
            (1, 4, 3, 1, 0.0),
        ],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
    )


def test_backward_matches_reference(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    for size in [(2, 3, 20, 131, 0.3), (1, 1, 70, 5, 0.0)]:
        h, w, y = _inputs(size, torch.float64, g)
        up = torch.randn(y.shape, generator=g, dtype=torch.float64)
        grads = []
        for be in ("triton", "torch"):
            hh, ww = h.clone().requires_grad_(True), w.clone().requires_grad_(True)
            grads.append(
                torch.autograd.grad((token_logprobs(hh, ww, y, backend=be) * up).sum(), (hh, ww))
            )
        for a, b in zip(*grads):  # fp64 sums of <= 131 terms: 1e-12 is ~1e4 ulps of slack
            torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-10, msg=f"seed={fresh_seed}")


def test_gradcheck_fp64(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    h, w, y = _inputs((1, 3, 4, 9, 0.3), torch.float64, g)
    h.requires_grad_(True)
    w.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, b: token_logprobs(a, b, y, backend="triton"), (h, w), eps=1e-6, atol=1e-6
    )


def test_ignored_are_zero_and_no_grad():
    h, w, y = _inputs((1, 4, 16, 11, 0.0), torch.float64, torch.Generator().manual_seed(0))
    y[0, 1:3] = -100
    h.requires_grad_(True)
    lp = token_logprobs(h, w, y, backend="triton")
    assert lp[0, 1] == 0 and lp[0, 2] == 0 and bool((lp[0, [0, 3]] < 0).all())
    lp.sum().backward()
    assert bool((h.grad[0, 1:3] == 0).all())


def test_empty_and_bad_input():
    h, w, y = _inputs((0, 3, 4, 5, 0.0), torch.float32, torch.Generator().manual_seed(0))
    assert token_logprobs(h, w, y, backend="triton").shape == (0, 3)
    h, w, y = _inputs((1, 2, 4, 5, 0.0), torch.float32, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="weight must have shape"):
        token_logprobs(h, w[:, :3], y)
    with pytest.raises(ValueError, match="targets must lie in"):
        token_logprobs(h, w, y + 5)
    with pytest.raises(ValueError, match="targets must have shape"):
        token_logprobs(h, w, y[:, :1])
    with pytest.raises(TypeError, match="weight must have dtype"):
        token_logprobs(h, w.double(), y)
    with pytest.raises(ValueError, match="ignore_index"):
        token_logprobs(h, w, y, ignore_index=2)


def test_tiles_and_registration():
    for V, D in [(1, 1), (7, 12), (151_936, 4096), (400, 64)]:
        bn, bv, bd = _tiles(V, D)
        assert bn == 16 and 16 <= bv <= 64 and 16 <= bd <= 64
    assert {f"16.token_logprobs_{k}_fp32" for k in ("fwd", "bwd_hidden", "bwd_weight")} <= set(
        KERNELS
    )
    assert "16.token_logprobs" in BENCHMARKS
    m = _bench_model(N=6 * 2048, V=151_936, D=4096)
    assert abs(6 * 2048 * 151_936 * 4 / 1e9 - 7.47) < 0.01  # the 7.5 GB of fp32 logits
    assert m["reference_bytes"] - m["bytes"] == 4 * 6 * 2048 * 151_936 * 4
    assert m["reference_bytes"] > 4 * m["bytes"]


def test_compile_check_sm75_sm90():
    # a fresh process: running the interpreter earlier leaves triton.language patched
    code = (
        "import torch\n"
        "from icml26_lit.core import compile_check\n"
        "from icml26_lit.lm import kernels as K\n"
        "fns = {'fwd': K.token_logprobs_fwd_kernel,\n"
        "       'bwd_hidden': K.token_logprobs_bwd_hidden_kernel,\n"
        "       'bwd_weight': K.token_logprobs_bwd_weight_kernel}\n"
        "for k, fn in fns.items():\n"
        "    r = compile_check(fn, K.SIGNATURES[(k, torch.float32)], K.TILE)\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
