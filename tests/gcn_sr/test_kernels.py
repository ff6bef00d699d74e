"""Chapter 18: the SPBT fitness kernel (interpreter) and its compilation for sm_75 / sm_90."""

import math
import os
import subprocess
import sys

import pytest
import torch

from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel
from icml26_lit.gcn_sr import kernels as K
from icml26_lit.gcn_sr.fitness import nguyen, score_reference
from icml26_lit.gcn_sr.kernels import (
    _bench_model,
    _register_tile,
    make_fitness_inputs,
    score,
    spbt_fitness,
    spbt_fitness_reference,
)
from icml26_lit.gcn_sr.spbt import TOKEN_ID, Library, encode, random_tree


def _triton(*a):
    return spbt_fitness(*a, backend="triton")


def test_kernel_matches_reference_awkward_sizes(fresh_seed):
    check_kernel(
        _triton,
        spbt_fitness_reference,
        make_fitness_inputs,
        sizes=[(1, 1, 1, 1), (3, 2, 17, 2), (4, 4, 33, 3), (2, 5, 70, 1), (2, 6, 5, 1)],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
        atol=1e-4,
        rtol=1e-4,
    )


def test_scratch_kernel_for_deep_scaffolds(fresh_seed):
    # depth 7 (127 slots) is beyond the register tile: the scratch kernel runs
    check_kernel(
        _triton,
        spbt_fitness_reference,
        make_fitness_inputs,
        sizes=[(2, 7, 19, 1), (1, 7, 1, 2)],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
        atol=1e-4,
        rtol=1e-4,
    )


def test_register_tile_and_opcodes():
    assert _register_tile(31, 20) == (32, 32) and _register_tile(63, 1000) == (64, 128)
    assert _register_tile(1, 1) == (2, 16) and _register_tile(7, 300) == (8, 256)
    names = ("empty", "add", "sub", "mul", "div", "sin", "cos", "exp", "log", "const", "x1")
    consts = (
        K._EMPTY,
        K._ADD,
        K._SUB,
        K._MUL,
        K._DIV,
        K._SIN,
        K._COS,
        K._EXP,
        K._LOG,
        K._CONST,
        K._X1,
    )
    assert [c.value for c in consts] == [TOKEN_ID[n] for n in names]


def test_score_goes_through_the_kernel(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    X, y, _ = nguyen(1)
    lib = Library(const=True)
    t = torch.stack([random_tree(4, lib, g) for _ in range(6)])
    r, c = score(t, X, y, fit_steps=5)
    rr, cr = score_reference(t, X, y, fit_steps=5)
    # the CPU path of "auto" is the reference itself: bit-identical
    assert torch.equal(r, rr) and torch.equal(c, cr)
    rt, _ = score(t, X, y, fit_steps=5, backend="triton")
    # fp64 kernel vs reference: the same operations in a different order (the SSE over blocks
    # by atomics), so agreement to ~1e-12 relative; 1e-9 leaves room for log/exp ulps
    finite = torch.isfinite(rr) & (rr > 0)
    torch.testing.assert_close(rt[finite], rr[finite], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kernel_invalid_expression_is_infinite(dtype):
    X = torch.linspace(100, 1000, 9, dtype=dtype)[:, None]
    y = torch.linspace(0, 1, 9, dtype=dtype)
    t = torch.stack([encode(("exp", ("x1",)), 3), encode(("sin", ("x1",)), 3)])
    c = torch.zeros(2, 7, dtype=dtype)
    yh, e = spbt_fitness(t, c, X, y, backend="triton")
    yr, er = spbt_fitness_reference(t, c, X, y)
    assert math.isinf(e[0]) and math.isinf(er[0])
    torch.testing.assert_close(e[1], er[1])
    torch.testing.assert_close(yh[1], yr[1])


def test_kernel_bad_input():
    X, y = torch.rand(5, 1), torch.rand(5)
    t = encode(("x1",), 2)[None]
    c = torch.zeros(1, 3)
    with pytest.raises(ValueError, match="y must have shape"):
        spbt_fitness(t, c, X, torch.rand(4), backend="triton")
    with pytest.raises(TypeError, match="constants must have dtype"):
        spbt_fitness(t, c.double(), X, y, backend="triton")
    with pytest.raises(ValueError, match="beyond the 1 columns"):
        spbt_fitness(encode(("x2",), 2)[None], c, X, y)
    with pytest.raises(ValueError, match="backend='gpu'"):
        spbt_fitness(t, c, X, y, backend="gpu")
    bad = t.clone()
    bad[0, 0] = TOKEN_ID["empty"]
    with pytest.raises(ValueError, match="invalid fill"):
        spbt_fitness(bad, c, X, y, backend="triton")
    with pytest.raises(ValueError, match="invalid fill"):
        score(bad, X, y)


def test_registered():
    assert {"18.spbt_fitness_fp32", "18.spbt_fitness_fp64"} <= set(KERNELS)
    assert "18.spbt_fitness" in BENCHMARKS
    m = _bench_model()
    assert m["bytes"] > 0 and m["flops"] > 0
    assert m["scratch_bytes"] == 4 * 10_000 * 31 * 1000  # stated, not allocated


def test_compile_check_sm75_sm90():
    # a fresh process: running the interpreter earlier in this one leaves triton.language patched
    code = (
        "import torch\n"
        "from icml26_lit.core import compile_check\n"
        "from icml26_lit.gcn_sr import kernels as K\n"
        "for dt in (torch.float32, torch.float64):\n"
        "    r = compile_check(K.spbt_fitness_kernel, K.SIGNATURES[dt],\n"
        "                      {'S_PAD': 64, 'BLOCK_N': 128})\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "    r = compile_check(K.spbt_fitness_scratch_kernel, K.SCRATCH_SIGNATURES[dt],\n"
        "                      {'BLOCK_N': 128})\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
