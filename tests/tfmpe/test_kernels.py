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
    return (r(n, 1), torch.randint(0, 4, (n,), generator=generator), r(n, 2),
            torch.rand(n, generator=generator, dtype=dtype), r(n, 1) if functional else None,
            r(4, L), r(2, Hp), r(1, Hf) if functional else None, r(D, K) / math.sqrt(K), r(D))


def test_kernel_matches_reference():
    # awkward sizes: one token, 33 tokens (block 32 + 1), widths that are not powers of two
    check_kernel(lambda *a: token_embedding(*a, backend="triton"), token_embedding_reference,
                 make_inputs, sizes=[(1, 16, 8, 16, 8, True), (33, 10, 5, 3, 70, True),
                                     (7, 3, 1, 1, 5, False)],
                 dtypes=(torch.float32, torch.float64))


def test_kernel_gradcheck(fresh_seed):
    args = list(make_inputs((4, 2, 1, 1, 3, True), torch.float64, torch.Generator().manual_seed(fresh_seed)))
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
    args = [a.detach().clone().requires_grad_(i in (0, 5, 6, 7, 8, 9)) if a is not None else None
            for i, a in enumerate(args)]
    leaves = [a for a in args if a is not None and a.requires_grad]
    return torch.autograd.grad(fn(*args), leaves, g_out)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [(33, 10, 5, 3, 70, True), (70, 3, 1, 1, 5, False), (1, 16, 8, 16, 8, True)])
def test_triton_backward_matches_autograd(fresh_seed, dtype, size):
    # the Triton backward against PyTorch autograd through the reference: N not a multiple of the
    # block, D and K not powers of two, with and without the functional input
    gen = torch.Generator().manual_seed(fresh_seed)
    args = make_inputs(size, dtype, gen)
    g_out = torch.randn(size[0], size[4], generator=gen, dtype=dtype)
    ours = _grads(lambda *a: token_embedding(*a, backend="triton"), args, g_out)
    ref = _grads(token_embedding_reference, args, g_out)
    assert len(ours) == len(ref) == (6 if size[5] else 5)
    for x, y in zip(ours, ref):
        torch.testing.assert_close(x, y)


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
    for x, y in zip(ours, ref):
        torch.testing.assert_close(x, y)


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
