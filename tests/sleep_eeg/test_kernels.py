"""Chapter 15 kernel: the fused nearest-code search against brute force, under the interpreter."""

import os
import subprocess
import sys

import pytest
import torch

from icml26_lit.core import KERNELS, interpreter_enabled
from icml26_lit.core.bench import BENCHMARKS
from icml26_lit.sleep_eeg.kernels import _bench_model, vq_nearest, vq_nearest_reference

needs_interpreter = pytest.mark.skipif(
    not interpreter_enabled(), reason="needs TRITON_INTERPRET=1 (set in tests/conftest.py)"
)


def _near_ties(z, c, idx, ref_idx, tol):
    "Rows where two index choices differ; each must be a near-tie (distances within tol)."
    diff = torch.nonzero(idx != ref_idx).flatten()
    for m in diff:
        a = ((z[m] - c[idx[m]]) ** 2).sum()
        b = ((z[m] - c[ref_idx[m]]) ** 2).sum()
        assert abs(float(a - b)) <= tol, (int(m), float(a), float(b))
    return len(diff)


@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kernel_matches_brute_force_awkward_sizes(dtype, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    ties = 0
    for M, K, D in [(1, 1, 1), (37, 5, 3), (33, 70, 16), (130, 129, 7), (64, 64, 16)]:
        z = torch.randn(M, D, generator=g, dtype=dtype)
        c = torch.randn(K, D, generator=g, dtype=dtype)
        idx, dist, total = vq_nearest(z, c, backend="triton", return_partial=True)
        # brute force in float64: the minimum over every code
        d_all = ((z.double()[:, None] - c.double()[None]) ** 2).sum(-1)
        ref_idx = d_all.argmin(-1)
        # fp32 sums of D squares round at ~D * 6e-8 relative; ties closer than that may swap
        tol = 1e-5 if dtype == torch.float32 else 1e-12
        ties += _near_ties(z.double(), c.double(), idx, ref_idx, tol)
        torch.testing.assert_close(dist.double(), d_all.min(-1).values, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(total.double(), d_all.min(-1).values.sum(), rtol=1e-5, atol=1e-5)
        i2, d2 = vq_nearest_reference(z, c)
        _near_ties(z.double(), c.double(), idx, i2, tol)  # against the chunked reference too
    assert ties <= 2, (ties, fresh_seed)  # near-ties are rare on Gaussian draws; counted
    print(f"near-ties that swapped: {ties}, seed={fresh_seed}")


@needs_interpreter
def test_kernel_exact_ties_take_the_first_code():
    c = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]] * 30)  # 90 codes, duplicates across tiles
    z = torch.tensor([[1.0, 0.1], [0.1, 1.0], [0.5, 0.5]])
    idx, _ = vq_nearest(z, c, backend="triton")
    assert idx.tolist() == [0, 1, 0]  # the first of the equal codes, as torch's min


def test_empty_and_bad_input():
    idx, dist = vq_nearest(torch.zeros(0, 4), torch.randn(3, 4))
    assert idx.shape == (0,) and dist.shape == (0,)
    with pytest.raises(ValueError, match="codebook width"):
        vq_nearest(torch.randn(5, 4), torch.randn(3, 5))
    with pytest.raises(ValueError, match="z contains NaN"):
        vq_nearest(torch.full((2, 4), float("nan")), torch.randn(3, 4))
    with pytest.raises(ValueError, match="codebook must have at least one code"):
        vq_nearest(torch.randn(2, 4), torch.randn(0, 4))
    with pytest.raises(TypeError, match="codebook must have dtype"):
        vq_nearest(torch.randn(2, 4), torch.randn(3, 4).double())
    with pytest.raises(ValueError, match="backend"):
        vq_nearest(torch.randn(2, 4), torch.randn(3, 4), backend="cuda")


def test_registered():
    assert {"15.vq_nearest_fp32", "15.vq_nearest_fp64"} <= set(KERNELS)
    assert "15.vq_nearest" in BENCHMARKS
    m = _bench_model(M=2**20, K=8192, D=16)
    assert m["flops"] == 3 * 2**20 * 8192 * 16


def test_compile_check_sm75_sm90():
    # a fresh process: running the interpreter earlier leaves triton.language patched
    code = (
        "import torch\n"
        "from icml26_lit.core import compile_check\n"
        "from icml26_lit.sleep_eeg import kernels as K\n"
        "for dt in (torch.float32, torch.float64):\n"
        "    r = compile_check(K.vq_nearest_kernel, K.SIGNATURES[dt], K.TILE)\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
