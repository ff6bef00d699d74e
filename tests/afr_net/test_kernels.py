"""Chapter 17: the energy-mask kernel under the interpreter, its compilation and registration."""

import os
import subprocess
import sys

import torch

from icml26_lit.afr_net.kernels import energy_mask_bias, make_mask_inputs
from icml26_lit.core import BENCHMARKS, KERNELS, check_kernel


def _triton(*a):
    return energy_mask_bias(*a, backend="triton")


def _torch(*a):
    return energy_mask_bias(*a, backend="torch")


def test_kernel_matches_reference_awkward_shapes(fresh_seed):
    # one edge on two nodes, E not a block multiple, E > BLOCK_E (two passes of two blocks), pads
    check_kernel(
        _triton,
        _torch,
        make_mask_inputs,
        sizes=[(1, 2, 1), (2, 9, 20), (3, 12, 40), (2, 30, 300)],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
    )


def test_kernel_empty_edges():
    m = torch.zeros(2, 4, 4)
    ei = torch.zeros(2, 2, 0, dtype=torch.long)
    out = _triton(m, ei, torch.zeros(2, 0), torch.zeros(2, 0))
    assert (out.diagonal(dim1=1, dim2=2) == 0).all() and torch.isinf(out[:, 0, 1]).all()


def test_kernel_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    m, ei, cond, s = make_mask_inputs((1, 5, 6), torch.float64, g)
    theta = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    m.requires_grad_(True)
    cond.requires_grad_(True)

    def f(m, cond, theta):
        out = energy_mask_bias(m, ei, cond, s, 2.0, 1.0, theta, backend="triton")
        return torch.where(torch.isfinite(out), out, torch.zeros_like(out))

    assert torch.autograd.gradcheck(f, (m, cond, theta), eps=1e-6, atol=1e-5)


def test_registered():
    assert {"17.energy_mask_fp32", "17.energy_mask_fp64"} <= set(KERNELS)
    assert "17.energy_mask" in BENCHMARKS


def test_compile_check_sm75_sm90():
    # a fresh process: running the interpreter earlier leaves triton.language patched
    code = (
        "import torch\n"
        "from icml26_lit.core import compile_check\n"
        "from icml26_lit.afr_net import kernels as K\n"
        "for dt in (torch.float32, torch.float64):\n"
        "    r = compile_check(K.energy_mask_kernel, K.SIGNATURES[dt], K.TILE)\n"
        "    assert [x.target for x in r] == [(7, 5), (9, 0)]\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
