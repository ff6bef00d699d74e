"""The fused power-spectrum kernel against the PyTorch reference under Triton's interpreter:
forward, Triton backward, gradcheck, double backward, and TriForces with backend='triton'."""

import math

import pytest
import torch

from icml26_lit.core import HAS_TRITON, KERNELS, check_kernel, interpreter_enabled
from icml26_lit.core.bench import BENCHMARKS
from icml26_lit.sphere import real_sph_harm_xyz
from icml26_lit.triforces.alloys import collate, make_alloy_dataset
from icml26_lit.triforces.kernels import (
    _bench_model,
    harmonic_coefficients,
    power_spectrum,
    power_spectrum_reference,
)
from icml26_lit.triforces.model import TriForces

needs_interpreter = pytest.mark.skipif(
    not (HAS_TRITON and interpreter_enabled()), reason="needs triton and TRITON_INTERPRET=1"
)


def _inputs(size, dtype, g):
    "Edges with random targets (some atoms isolated), lengths up to ~1.3 r_c, random mixing."
    n_edges, n_atoms, n_ch = size
    vec = torch.randn(n_edges, 3, generator=g, dtype=dtype) * 2.5
    vec = vec + 0.3 * vec / vec.norm(dim=1, keepdim=True)  # keep |vec| >= 0.3 A
    dst = torch.randint(0, max(1, n_atoms - 2), (n_edges,), generator=g)  # the last atoms isolated
    W = torch.randn(n_ch, 18, generator=g, dtype=dtype)
    return vec, dst, n_atoms, W


# (edges, atoms, channels): one edge; odd counts that are not multiples of the 16-edge block or of
# the 8-target program (11 atoms: two programs, the last atoms isolated); 41 edges on one target
# (three blocks, the last partial); 3 and 6 channels (padded to 4 and 8)
SIZES = [(1, 3, 6), (37, 11, 6), (41, 2, 3)]


@needs_interpreter
def test_forward_matches_reference(fresh_seed):
    def kernel(vec, dst, n, W):
        return power_spectrum(vec, dst, n, W, backend="triton")

    def ref(vec, dst, n, W):
        return power_spectrum_reference(vec, dst, n, W, 5.0, 4)

    # float64: sums of <= 70 products of O(10) terms, 1e-12; float32: the harmonics' polynomials
    # and the sums in another order than the reference round at ~1e-6 relative
    check_kernel(kernel, ref, _inputs, SIZES, (torch.float64,), fresh_seed, atol=1e-11, rtol=1e-11)
    check_kernel(kernel, ref, _inputs, SIZES, (torch.float32,), fresh_seed, atol=1e-4, rtol=1e-4)


@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_backward_matches_reference(dtype, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    for size in SIZES[1:]:
        vec, dst, n, W = _inputs(size, dtype, g)
        out = {}
        for backend in ("triton", "torch"):
            v, w = vec.clone().requires_grad_(), W.clone().requires_grad_()
            p = power_spectrum(v, dst, n, w, backend=backend)
            gp = torch.randn(p.shape, generator=torch.Generator().manual_seed(fresh_seed + 1))
            out[backend] = torch.autograd.grad(p, (v, w), gp.to(dtype))
        # float64: a few hundred products summed in another order, 1e-10; float32: 1e-6 relative
        # rounding on gradients of size ~1e2-1e3 summed over up to 70 edges
        tol = 1e-10 if dtype == torch.float64 else 2e-3
        for a, b in zip(out["triton"], out["torch"]):
            torch.testing.assert_close(
                a, b, atol=tol, rtol=tol, msg=lambda m: f"{m} seed={fresh_seed}"
            )


@needs_interpreter
def test_gradcheck_and_double_backward(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    vec, dst, n, _ = _inputs((7, 3, 2), torch.float64, g)
    W = torch.randn(2, 3, generator=g, dtype=torch.float64)  # one Bessel function, 2 channels
    v, w = vec.clone().requires_grad_(), W.clone().requires_grad_()

    def f(v, w, backend="triton"):
        return power_spectrum(v, dst, n, w, l_max=2, backend=backend)

    # fast mode: one random direction per input, two interpreter launches each
    assert torch.autograd.gradcheck(f, (v, w), fast_mode=True), f"seed={fresh_seed}"
    # create_graph=True: the backward runs the reference, so a second derivative exists and
    # equals the reference's own (float64, same operations: 1e-10)
    gp = torch.randn(n, 2 * 2 * 3, generator=g, dtype=torch.float64)
    second = []
    for backend in ("triton", "torch"):
        (gv,) = torch.autograd.grad((f(v, w, backend) * gp).sum(), v, create_graph=True)
        second.append(torch.autograd.grad((gv**2).sum(), (v, w)))
    for a, b in zip(*second):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)


def test_harmonic_coefficients_rebuild_real_harmonics(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    u = torch.randn(100, 3, generator=g, dtype=torch.float64)
    u = u / u.norm(dim=1, keepdim=True)
    for L in (0, 1, 4, 6):
        C = harmonic_coefficients(L)
        m = torch.tensor([m for l in range(L + 1) for m in range(-l, l + 1)])
        zq = (u[:, 2:3] ** torch.arange(L + 1, dtype=torch.float64)) @ C.T  # (100, (L+1)^2)
        w = torch.complex(u[:, 0], u[:, 1])[:, None] ** m.abs()
        T = torch.where(m == 0, 1.0, math.sqrt(2) * torch.where(m > 0, w.real, w.imag))
        # Vandermonde solve at L+1 well-spread nodes: float64 rounding, ~1e-13
        torch.testing.assert_close(zq * T, real_sph_harm_xyz(u, L), rtol=0, atol=1e-12)


@needs_interpreter
def test_triforces_triton_matches_torch_forward_and_backward():
    data = make_alloy_dataset(2, seed=4, max_atoms=2)  # two small structures: fewer launches
    batch = collate(data, 5.0, dtype=torch.float64)
    out = {}
    for backend in ("triton", "torch"):
        model = TriForces(backend=backend, generator=torch.Generator().manual_seed(0)).double()
        energy, forces = model.energy_and_forces(batch, head="direct")
        loss = energy.sum() + (forces**2).sum()
        grads = torch.autograd.grad(loss, list(model.parameters()))
        out[backend] = (energy, forces, grads)
    # float64 throughout; the kernel's sums differ from the reference's only in order
    for a, b in zip(out["triton"][:2], out["torch"][:2]):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)
    for a, b in zip(out["triton"][2], out["torch"][2]):
        torch.testing.assert_close(a, b, atol=1e-9, rtol=1e-9)


def test_registered_and_bench_model():
    if HAS_TRITON:
        names = {f"08.power_spectrum_{d}_{t}" for d in ("fwd", "bwd") for t in ("fp32", "fp64")}
        assert names <= set(KERNELS)  # tests/core/test_registered.py compiles them (sm_75, sm_90)
    assert "08.power_spectrum" in BENCHMARKS
    m = _bench_model(E=3000, A=6, NB=18, L=4)
    lm = 25
    assert m["flops"] == 3000 * (20 * 18 + 2 * 6 * 18 + 12 * lm + 2 * 6 * lm) + 100 * 2 * 36 * lm
    assert m["reference_bytes"] - m["bytes"] == 4 * 2 * 3000 * (18 + 6 + lm + 6 * lm)


def test_backend_errors():
    vec, dst, n, W = _inputs((5, 3, 6), torch.float64, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="backend must be"):
        power_spectrum(vec, dst, n, W, backend="cuda")
    with pytest.raises(ValueError, match="l_max"):
        harmonic_coefficients(-1)
    empty = power_spectrum(vec[:0], dst[:0], 4, W, backend="triton" if HAS_TRITON else "torch")
    assert empty.shape == (4, 6 * 6 * 5) and bool((empty == 0).all())  # no edges: zeros
