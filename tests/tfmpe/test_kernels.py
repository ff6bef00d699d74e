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
