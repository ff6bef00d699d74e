"""The fused token-embedding kernel under Triton's interpreter."""

import math

import pytest
import torch

from icml26_lit.core import HAS_TRITON, KERNELS, check_kernel
from icml26_lit.tfmpe.kernels import token_embedding
from icml26_lit.tfmpe.tokens import token_embedding_reference

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def make_inputs(size, dtype, generator):
    n, L, Hp, Hf, D, functional = size
    r = lambda *s: torch.randn(*s, generator=generator, dtype=dtype)
    K = 1 + L + 2 * Hp + 1 + (2 * Hf if functional else 0)
    return (
        r(n, 1),
        torch.randint(0, 4, (n,), generator=generator),
        r(n, 2),
        torch.rand(n, generator=generator, dtype=dtype),
        r(n, 1) if functional else None,
        r(4, L),
        r(2, Hp),
        r(1, Hf) if functional else None,
        r(D, K) / math.sqrt(K),
        r(D),
    )


def test_kernel_matches_reference():
    # awkward sizes: one token, 33 tokens (block 32 + 1), widths that are not powers of two
    check_kernel(
        lambda *a: token_embedding(*a, backend="triton"),
        token_embedding_reference,
        make_inputs,
        sizes=[(1, 16, 8, 16, 8, True), (33, 10, 5, 3, 70, True), (7, 3, 1, 1, 5, False)],
        dtypes=(torch.float32, torch.float64),
    )


def test_kernel_gradcheck(fresh_seed):
    args = list(
        make_inputs((4, 2, 1, 1, 3, True), torch.float64, torch.Generator().manual_seed(fresh_seed))
    )
    for i in (0, 5, 6, 7, 8, 9):
        args[i].requires_grad_(True)
    assert torch.autograd.gradcheck(lambda *a: token_embedding(*a, backend="triton"), args)


def test_kernel_bad_input():
    args = list(make_inputs((4, 3, 2, 2, 5, True), torch.float32, torch.Generator().manual_seed(0)))
    bad = list(args)
    bad[1] = torch.tensor([0, 1, 2, 9])
    with pytest.raises(ValueError, match=r"label values must lie in \[0, 4\)"):
        token_embedding(*bad, backend="triton")
    bad = list(args)
    bad[8] = torch.zeros(5, 3)
    with pytest.raises(ValueError, match="weight must have shape"):
        token_embedding(*bad, backend="triton")
    bad = list(args)
    bad[7] = None
    with pytest.raises(ValueError, match="functional and fun_freqs must be given together"):
        token_embedding(*bad, backend="triton")


def test_kernel_is_registered():
    assert "10.token_embedding_fused" in KERNELS


def _grads(fn, args, g_out):
    args = [
        a.detach().clone().requires_grad_(i in (0, 5, 6, 7, 8, 9)) if a is not None else None
        for i, a in enumerate(args)
    ]
    leaves = [a for a in args if a is not None and a.requires_grad]
    return torch.autograd.grad(fn(*args), leaves, g_out)


def _rounding_bound(args, g_out):
    """Elementwise bound on |fp(grad) - grad| for each gradient of the embedding, in float64.

    A dot product of n terms rounded in any order is within gamma_n * sum|terms| of the exact
    value, gamma_n = n u / (1 - n u), u the unit roundoff of the dtype (Higham, Accuracy and
    Stability, 3.1). The Fourier features add their own error: the angle 2 pi x B sums P
    products and is scaled by 2 pi ((P + 2) u * 2 pi |x||B|), and cos/sin add a few ulp (4 u).
    Both sides of the comparison (Triton and PyTorch autograd) are within the bound of the
    exact gradient, so their difference is within twice the bound. A wrong index or a missing
    term gives errors of the size of the gradient itself, far above it.
    """
    value, label, position, time, functional, table, pos_freqs, fun_freqs, weight, bias = args
    u = torch.finfo(value.dtype).eps / 2
    gamma = lambda n: n * u / (1 - n * u)
    d = lambda x: x.detach().double()
    G, W = d(g_out).abs(), d(weight).abs()
    N, D = G.shape
    V, L, Hp = value.shape[1], table.shape[1], pos_freqs.shape[1]
    Wv, We = W[:, :V], W[:, V : V + L]

    def fourier(x, B, o):  # features, their error, and the |G W| of their cos/sin columns
        H = B.shape[1]
        ang = 2 * math.pi * d(x) @ d(B)
        err = u * ((x.shape[1] + 2) * 2 * math.pi * (d(x).abs() @ d(B).abs()) + 4)
        gc, gs = G @ W[:, o : o + H], G @ W[:, o + H : o + 2 * H]
        feats = torch.cat([ang.cos().abs(), ang.sin().abs()], 1)
        # dL/dB = 2 pi x^T (g_s cos - g_c sin): D-term dots, a product, then an N-term sum
        mag = 2 * math.pi * d(x).abs().t() @ (gs * ang.cos().abs() + gc * ang.sin().abs())
        mag_err = 2 * math.pi * d(x).abs().t() @ ((gs + gc) * err)
        bound_b = gamma(D + N + 4) * mag + (1 + gamma(D + N + 4)) * mag_err
        return feats, torch.cat([err, err], 1), bound_b

    fp, ep, bound_bp = fourier(position, pos_freqs, V + L)
    feats = [d(value).abs(), d(table)[label.long()].abs(), fp, d(time).abs()[:, None]]
    errs = [torch.zeros(N, V + L, dtype=torch.float64), ep, torch.zeros(N, 1, dtype=torch.float64)]
    bounds_f = []
    if functional is not None:
        ff, ef, bound_bf = fourier(functional, fun_freqs, V + L + 2 * Hp + 1)
        feats.append(ff)
        errs.append(ef)
        bounds_f = [bound_bf]
    Phi, E = torch.cat(feats, 1), torch.cat(errs, 1)
    onehot = torch.nn.functional.one_hot(label.long(), table.shape[0]).double()
    bound_v = gamma(D) * G @ Wv
    bound_e = gamma(D + N) * onehot.t() @ (G @ We)
    bound_w = gamma(N) * G.t() @ Phi + (1 + gamma(N)) * G.t() @ E
    bound_b = gamma(N) * G.sum(0)
    return [bound_v, bound_e, bound_bp, *bounds_f, bound_w, bound_b]


def _assert_within(ours, ref, bounds):
    for i, (x, y, b) in enumerate(zip(ours, ref, bounds)):
        assert x.shape == y.shape == b.shape, (i, x.shape, y.shape, b.shape)
        excess = (x.double() - y.double()).abs() / (2 * b + 1e-300)
        assert float(excess.max()) <= 1.0, (
            f"gradient {i}: |ours - ref| is {float(excess.max()):.2f} times the rounding bound"
        )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "size", [(33, 10, 5, 3, 70, True), (70, 3, 1, 1, 5, False), (1, 16, 8, 16, 8, True)]
)
def test_triton_backward_matches_autograd(fresh_seed, dtype, size):
    # the Triton backward against PyTorch autograd through the reference: N not a multiple of the
    # block, D and K not powers of two, with and without the functional input
    gen = torch.Generator().manual_seed(fresh_seed)
    args = make_inputs(size, dtype, gen)
    g_out = torch.randn(size[0], size[4], generator=gen, dtype=dtype)
    ours = _grads(lambda *a: token_embedding(*a, backend="triton"), args, g_out)
    ref = _grads(token_embedding_reference, args, g_out)
    assert len(ours) == len(ref) == (6 if size[5] else 5)
    # tolerance: the rounding bound of each gradient's reductions (N tokens, D latent columns),
    # elementwise from the magnitudes of the summands; fp32 sums in another order than autograd
    _assert_within(ours, ref, _rounding_bound(args, g_out))


def test_rounding_bound_catches_a_wrong_gradient(fresh_seed):
    # the check above can fail: gradients of the labels shifted by one, or of a weight scaled by
    # 1 + 1e-4, lie far outside the rounding bound in fp32
    gen = torch.Generator().manual_seed(fresh_seed)
    args = list(make_inputs((33, 10, 5, 3, 70, True), torch.float32, gen))
    g_out = torch.randn(33, 70, generator=gen)
    ref = _grads(token_embedding_reference, args, g_out)
    bounds = _rounding_bound(args, g_out)
    shifted = list(args)
    shifted[1] = (args[1] + 1) % 4
    with pytest.raises(AssertionError, match="times the rounding bound"):
        _assert_within(_grads(token_embedding_reference, shifted, g_out), ref, bounds)
    scaled = list(args)
    scaled[8] = args[8] * (1 + 1e-4)
    with pytest.raises(AssertionError, match="times the rounding bound"):
        _assert_within(_grads(token_embedding_reference, scaled, g_out), ref, bounds)


def test_triton_backward_chunks_and_int32_labels(fresh_seed, monkeypatch):
    # several token tiles per program (a cap of 2 chunks over 5 tiles) and int32 labels
    import icml26_lit.tfmpe.kernels as K

    monkeypatch.setattr(K, "_MAX_CHUNKS", 2)
    gen = torch.Generator().manual_seed(fresh_seed)
    args = list(make_inputs((150, 5, 3, 2, 17, True), torch.float64, gen))
    g_out = torch.randn(150, 17, generator=gen, dtype=torch.float64)
    ref = _grads(token_embedding_reference, args, g_out)
    args[1] = args[1].to(torch.int32)
    ours = _grads(lambda *a: token_embedding(*a, backend="triton"), args, g_out)
    _assert_within(ours, ref, _rounding_bound(args, g_out))  # fp64: the same bound with u = 2^-53


def test_triton_backward_partial_needs(fresh_seed):
    # only the value needs a gradient: the others are None and dv is still right
    gen = torch.Generator().manual_seed(fresh_seed)
    args = list(make_inputs((9, 4, 2, 2, 6, True), torch.float64, gen))
    v = args[0].clone().requires_grad_(True)
    g_out = torch.randn(9, 6, generator=gen, dtype=torch.float64)
    (ours,) = torch.autograd.grad(token_embedding(v, *args[1:], backend="triton"), [v], g_out)
    (ref,) = torch.autograd.grad(token_embedding_reference(v, *args[1:]), [v], g_out)
    torch.testing.assert_close(ours, ref)


def test_backward_kernels_are_registered():
    assert "10.token_embedding_bwd_tokens" in KERNELS
    assert "10.token_embedding_bwd_weight" in KERNELS


def test_auto_takes_pytorch_where_the_kernel_lost():
    # the committed dispatch table times the fused kernel slower than PyTorch on the H200, so
    # backend="auto" resolves to PyTorch there; on CPU it is PyTorch without consulting it
    import json

    from icml26_lit.core.bench import _code_hash, auto_choice
    from icml26_lit.core.claims import results_dir

    table = json.loads((results_dir() / "bench" / "dispatch.json").read_text())
    key = "10.token_embedding"
    choice, why = auto_choice(key, table, _code_hash("10", "token_embedding"))
    assert choice == "torch" and "Triton slower than PyTorch" in why, why
    args = make_inputs((9, 4, 2, 3, 6, True), torch.float64, torch.Generator().manual_seed(0))
    assert torch.equal(token_embedding(*args, backend="auto"), token_embedding_reference(*args))
