"""Kernels vs references under Triton's interpreter (conftest sets TRITON_INTERPRET=1)."""

import pytest
import torch

from icml26_lit.core import HAS_TRITON, check_kernel
from icml26_lit.flashschnet.kernels import (
    cfconv,
    cfconv_reference,
    flash_radial_basis,
    linear16,
    linear_reference,
    radial_basis_reference,
)
from icml26_lit.md.graph import radius_graph

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
R = 2.0


def _graph(n, dtype, g):
    # sparse: isolated beads
    pos = (torch.rand(n, 3, generator=g, dtype=torch.float64) * 4).to(dtype)
    return pos, radius_graph(pos, R)


def _cf_inputs(n, dtype, g, f):
    pos, ei = _graph(n, dtype, g)
    x = torch.randn(n, f, generator=g, dtype=torch.float64).to(dtype)
    w = torch.randn(ei.shape[1], f, generator=g, dtype=torch.float64).to(dtype)
    return x, w, ei, (pos[ei[1]] - pos[ei[0]]).norm(dim=-1)


def test_radial_basis_kernel_matches_reference(fresh_seed):
    mu = lambda dt: torch.linspace(0, R, 13, dtype=dt)
    check_kernel(
        lambda p, ei: flash_radial_basis(p, ei, mu(p.dtype), -2.0, R, backend="triton"),
        lambda p, ei: radial_basis_reference(p, ei, mu(p.dtype), -2.0, R),
        _graph,
        sizes=[1, 2, 37],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
    )


def test_radial_basis_backward_kernel_gradcheck(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    pos, ei = _graph(9, torch.float64, g)
    mu = torch.linspace(0, R, 5, dtype=torch.float64)
    fn = lambda p: flash_radial_basis(p, ei, mu, -3.0, R, backend="triton")
    assert torch.autograd.gradcheck(fn, (pos.clone().requires_grad_(),), fast_mode=True)
    # and equals the twin's gradient in float32
    p32 = pos.float().requires_grad_()
    gd, gp = torch.randn(ei.shape[1], generator=g), torch.randn(ei.shape[1], 5, generator=g)
    outs = {}
    for backend in ("triton", "torch"):
        d, phi = flash_radial_basis(p32, ei, mu.float(), -3.0, R, backend=backend)
        (outs[backend],) = torch.autograd.grad((d * gd).sum() + (phi * gp).sum(), p32)
    torch.testing.assert_close(outs["triton"], outs["torch"], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("mode", ["csr", "coo"])
@pytest.mark.parametrize("f", [20, 70])  # not a power of two; wider than one feature block (64)
def test_cfconv_kernel_matches_reference(fresh_seed, mode, f):
    check_kernel(
        lambda *a: cfconv(*a, R, mode=mode, backend="triton"),
        lambda *a: cfconv_reference(*a, R),
        lambda n, dt, g: _cf_inputs(n, dt, g, f),
        sizes=[1, 23],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
    )


@pytest.mark.parametrize("mode", ["csr", "coo"])
def test_cfconv_kernel_gradcheck_includes_cutoff_term(fresh_seed, mode):
    g = torch.Generator().manual_seed(fresh_seed)
    x, w, ei, d = _cf_inputs(8, torch.float64, g, 3)
    inputs = (x.requires_grad_(), w.requires_grad_(), d.requires_grad_())
    assert torch.autograd.gradcheck(
        lambda a, b, c: cfconv(a, b, ei, c, R, mode=mode, backend="triton"), inputs, fast_mode=True
    )
    # the gradient to dist is the cutoff-derivative term: it is non-zero and dropped only on request
    (gd,) = torch.autograd.grad(cfconv(x, w, ei, d, R, mode=mode, backend="triton").sum(), d)
    assert float(gd.abs().max()) > 0


def test_cfconv_16bit_filter_and_empty_graph(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x, w, ei, d = _cf_inputs(23, torch.float32, g, 20)
    out = cfconv(x, w.half(), ei, d, R, backend="triton")
    torch.testing.assert_close(
        out, cfconv_reference(x, w.half().float(), ei, d, R), atol=1e-5, rtol=1e-4
    )
    empty = torch.zeros(2, 0, dtype=torch.long)
    for backend in ("triton", "torch"):
        assert torch.equal(
            cfconv(x, torch.zeros(0, 20), empty, torch.zeros(0), R, backend=backend),
            torch.zeros(23, 20),
        )


def test_linear16_kernel(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    for m in (1, 70):
        x = torch.randn(m, 20, generator=g)
        w, b = (
            (torch.randn(24, 20, generator=g) * 0.3).half(),
            (torch.randn(24, generator=g) * 0.1).half(),
        )
        for tanh in (True, False):
            tri = linear16(x, w, b, tanh=tanh, backend="triton").float()
            twin = linear16(x, w, b, tanh=tanh, backend="torch").float()
            torch.testing.assert_close(tri, twin, atol=2e-3, rtol=2e-3)
            ref = linear_reference(x, w.float(), b.float(), tanh=tanh)
            assert float((tri - ref).abs().max()) < 2e-2


def test_linear16_backward_is_derivative_of_twin(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.randn(9, 20, generator=g, requires_grad=True)
    w = (torch.randn(16, 20, generator=g) * 0.3).half()
    gy = torch.randn(9, 16, generator=g)
    (gx,) = torch.autograd.grad(
        (linear16(x, w, None, tanh=True, out_dtype=torch.float32, backend="torch") * gy).sum(), x
    )
    y = torch.tanh(x @ w.float().t())
    (gx_ref,) = torch.autograd.grad((y * gy).sum(), x)
    torch.testing.assert_close(gx, gx_ref, atol=2e-2, rtol=2e-2)


def test_bad_inputs():
    x = torch.randn(4, 8)
    ei = torch.tensor([[0, 1], [1, 2]])
    w, d = torch.randn(2, 8), torch.rand(2)
    with pytest.raises(ValueError, match="cutoff must be a positive"):
        cfconv(x, w, ei, d, 0.0)
    with pytest.raises(ValueError, match="filter must have shape"):
        cfconv(x, torch.randn(3, 8), ei, d, 1.0)
    with pytest.raises(ValueError, match="outside"):
        cfconv(x, w, torch.tensor([[0, 9], [1, 2]]), d, 1.0)
    with pytest.raises(ValueError, match="mode must be"):
        cfconv(x, w, ei, d, 1.0, mode="dense")
    with pytest.raises(ValueError, match="dist contains NaN"):
        cfconv(x, w, ei, torch.tensor([1.0, float("nan")]), 1.0)
    with pytest.raises(ValueError, match="pos contains NaN"):
        flash_radial_basis(torch.full((3, 3), float("nan")), ei, torch.linspace(0, 1, 4), -1.0, 1.0)
    with pytest.raises(ValueError, match="gamma must be"):
        flash_radial_basis(torch.randn(3, 3), ei, torch.linspace(0, 1, 4), 1.0, 1.0)
    with pytest.raises(TypeError, match="weight must have dtype"):
        linear16(x, torch.randn(3, 8))


EDGE_BWD = [
    "06._cfconv_edge_bwd_kernel",
    "06._cfconv_edge_bwd_kernel_fp32",
    "06._cfconv_edge_bwd_kernel_fp64",
]


def test_edge_backward_registered_in_every_dtype_the_model_uses():
    "16-bit filter (+16-bit), float32 filter (the default path), float64 (the equivalence checks)."
    from icml26_lit.core.kernels import KERNELS

    assert set(EDGE_BWD) <= set(KERNELS)
    sig = {k: KERNELS[k].signature for k in EDGE_BWD}
    assert sig[EDGE_BWD[0]]["w_ptr"] == "*fp16" and sig[EDGE_BWD[0]]["gw_ptr"] == "*fp16"
    assert sig[EDGE_BWD[1]]["w_ptr"] == "*fp32" and sig[EDGE_BWD[1]]["gw_ptr"] == "*fp32"
    assert {v for v in sig[EDGE_BWD[2]].values() if v.startswith("*fp")} == {"*fp64"}


def test_default_path_edge_backward_compiles_for_t4_and_hopper():
    "The float32 edge backward (the default path's) compiles; tests/core compiles every variant."
    from icml26_lit.core.kernels import compile_registered

    out = compile_registered([EDGE_BWD[1]])
    assert not isinstance(out[EDGE_BWD[1]], str), out[EDGE_BWD[1]]
    assert [r.target for r in out[EDGE_BWD[1]]] == [(7, 5), (9, 0)]


def test_csr_path_kernels_issue_no_atomics():
    "The CSR path launches only these kernels; none of them contains an atomic (the COO one does)."
    import inspect

    from icml26_lit.flashschnet import kernels as K

    src = lambda k: inspect.getsource(getattr(k, "fn", k))
    for k in (
        K._rbf_fwd_kernel,
        K._rbf_bwd_edge_kernel,
        K._node_vec3_kernel,
        K._cfconv_csr_kernel,
        K._cfconv_edge_bwd_kernel,
        K._linear16_kernel,
        K._edge_geometry,
        K._cosine_cutoff,
    ):
        assert "tl.atomic" not in src(k), k
    assert "tl.atomic_add" in src(K._cfconv_coo_kernel)  # the check would see one
