"""Chapter 14: prime attention's identities, the filters and the model."""

import math

import pytest
import torch
import torch.nn.functional as F

from icml26_lit.prime_attention import PrimeITransformer, prime_attention
from icml26_lit.prime_attention.filters import PrimeFilters, pair_mask
from icml26_lit.prime_attention.model import n_filter_parameters


def _qkv(seed, B=2, H=3, N=7, d=5, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, N, d, generator=g, dtype=dtype) for _ in range(3)]


def test_ones_is_standard_attention(fresh_seed):
    q, k, v = _qkv(fresh_seed)
    # fp32: one softmax over 7 scores and two sums of 5 and 7 terms, values O(1): ~1e-7
    torch.testing.assert_close(
        prime_attention(q, k, v, torch.ones(3, 7, 7, 5)),
        F.scaled_dot_product_attention(q, k, v),
        atol=1e-6,
        rtol=1e-6,
    )


def test_scalar_filters_equal_dense_einsum(fresh_seed):
    q, k, v = _qkv(fresh_seed, dtype=torch.float64)
    c = (
        torch.rand(
            3, 7, 7, generator=torch.Generator().manual_seed(fresh_seed + 1), dtype=torch.float64
        )
        + 0.5
    )
    s = torch.einsum("bhid,bhjd->bhij", q, k) * c / math.sqrt(5)
    want = torch.einsum("bhij,bhjd->bhid", torch.softmax(s, -1) * c, v)
    got = prime_attention(q, k, v, c[..., None].expand(3, 7, 7, 5).contiguous())
    # fp64, sums of <= 7 terms: ~1e-15; 1e-12 leaves room for another BLAS
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_channel_permutation_equivariance(fresh_seed):
    q, k, v = _qkv(fresh_seed, dtype=torch.float64)
    filt = 1 + 0.5 * torch.randn(
        3, 7, 7, 5, generator=torch.Generator().manual_seed(fresh_seed), dtype=torch.float64
    )
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(fresh_seed))
    out = prime_attention(q, k, v, filt)
    outp = prime_attention(q[:, :, perm], k[:, :, perm], v[:, :, perm], filt[:, perm][:, :, perm])
    # fp64 reordering only
    torch.testing.assert_close(outp, out[:, :, perm], rtol=1e-12, atol=1e-12)


def test_p1_parameter_count_and_init():
    std = PrimeITransformer(
        12, 48, 12, attention="standard", generator=torch.Generator().manual_seed(0)
    )
    p1 = PrimeITransformer(12, 48, 12, generator=torch.Generator().manual_seed(0))
    extra = sum(p.numel() for p in p1.parameters()) - sum(p.numel() for p in std.parameters())
    assert extra == 2 * 4 * 12**2 * 8 == n_filter_parameters(p1)
    x = torch.randn(3, 48, 12, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(p1(x), std(x), atol=1e-5, rtol=1e-5)  # F = 1 at init, fp32
    p2 = PrimeITransformer(12, 48, 12, mode="sparse", mask=pair_mask(torch.rand(12, 12), 0.25))
    assert n_filter_parameters(p2) == 2 * 4 * 33 * 8


def test_sparse_mask_convention():
    m = torch.zeros(4, 4, dtype=torch.bool)
    m[0, 2] = True  # channel 0 drives channel 2: the filter F_20
    f = PrimeFilters(1, 4, 2, mode="sparse", mask=m)
    with torch.no_grad():
        f.weight.fill_(3.0)
    F_ = f()
    assert torch.equal(F_[0, 2, 0], torch.full((2,), 3.0)) and float(F_.sum()) == 2 * 15 + 6


def test_filter_scores_convention():
    model = PrimeITransformer(
        4, 8, 2, n_heads=2, d_model=8, generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        model.layers[0].attn.filters.weight[:, 3, 1] += 1.0  # F_31: query 3, key 1
    sc = model.filter_scores()
    assert sc[1, 3] > 0 and float(sc.sum()) == pytest.approx(float(sc[1, 3]))
    assert float(sc[1, 3]) == pytest.approx(math.sqrt(4))  # ||1 * ones(4)|| averaged over heads


def test_model_triton_equals_torch_forward_backward(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.randn(3, 10, 5, generator=g)
    y = torch.randn(3, 4, 5, generator=g)
    grads = []
    for backend in ("torch", "triton"):
        m = PrimeITransformer(
            5, 10, 4, backend=backend, generator=torch.Generator().manual_seed(fresh_seed)
        )
        with torch.no_grad():
            for layer in m.layers:
                layer.attn.filters.weight.add_(
                    0.3
                    * torch.randn(
                        layer.attn.filters.weight.shape, generator=torch.Generator().manual_seed(1)
                    )
                )
        out = m(x)
        F.mse_loss(out, y).backward()
        grads.append((out.detach(), [p.grad.clone() for p in m.parameters()]))
    # fp32 through 2 layers: the kernel sums in another order, ~1e-6 relative
    torch.testing.assert_close(grads[1][0], grads[0][0], atol=1e-5, rtol=1e-5)
    for a, b in zip(grads[1][1], grads[0][1]):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_global_rng_untouched():
    s = torch.random.get_rng_state()
    PrimeITransformer(6, 12, 3, mode="dynamic", generator=torch.Generator().manual_seed(0))
    assert torch.equal(torch.random.get_rng_state(), s)


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        (dict(lookback=1), "lookback must be an integer >= 2"),
        (dict(horizon=0), "horizon must be an integer >= 1"),
        (dict(sparsity=0.0, mode="sparse"), "sparsity must be in (0, 1]"),
        (dict(sparsity=1.5, mode="sparse"), "sparsity must be in (0, 1]"),
        (dict(mode="banded"), "mode must be one of"),
        (dict(attention="linear"), "attention must be one of"),
        (dict(backend="gpu"), "backend='gpu'"),
        (
            dict(mask=torch.ones(3, 3, dtype=torch.bool), mode="sparse"),
            "mask must be a bool tensor of shape (6, 6)",
        ),
    ],
)
def test_model_bad_input(kwargs, msg):
    args = dict(n_channels=6, lookback=12, horizon=3)
    args.update(kwargs)
    with pytest.raises(
        ValueError, match=msg.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ):
        PrimeITransformer(**args)


def test_forward_and_op_bad_input():
    m = PrimeITransformer(6, 12, 3)
    with pytest.raises(ValueError, match="x contains NaN"):
        m(torch.full((2, 12, 6), float("nan")))
    with pytest.raises(ValueError, match=r"x must have shape \(B, 12, 6\)"):
        m(torch.zeros(2, 11, 6))
    q, k, v = _qkv(0)
    with pytest.raises(ValueError, match="3 heads"):
        prime_attention(q, k, v, torch.ones(2, 7, 7, 5))
    with pytest.raises(ValueError, match="7 channels"):
        prime_attention(q, k, v, torch.ones(3, 6, 6, 5))
    with pytest.raises(ValueError, match="head width 5"):
        prime_attention(q, k, v, torch.ones(3, 7, 7, 4))


def test_pair_bias_control_matches_p1_parameters_and_starts_standard(fresh_seed):
    from icml26_lit.prime_attention import PrimeAttentionLayer

    g = lambda: torch.Generator().manual_seed(fresh_seed)
    std, p1, pb = (
        PrimeITransformer(6, 12, 3, attention=a, generator=g())
        for a in ("standard", "prime", "pair_bias")
    )
    n = lambda m: sum(p.numel() for p in m.parameters())
    assert n(pb) - n(std) == n(p1) - n(std) == n_filter_parameters(p1) == 2 * 4 * 36 * 8
    x = torch.randn(4, 12, 6, generator=g())
    # b = 0 at init, same linears: only the summation order differs (fp32 through 2 layers)
    torch.testing.assert_close(pb(x), std(x), atol=1e-5, rtol=1e-5)
    layer = PrimeAttentionLayer(5, 8, 2, attention="pair_bias", generator=g())
    with torch.no_grad():
        layer.pair_bias.normal_(generator=g())
    z = torch.randn(2, 5, 8, generator=g(), dtype=torch.float64)
    layer = layer.double()
    # the definition: s_ij = q_i.(k_j + b_ij)/sqrt d, o_i = sum_j a_ij (v_j + b_ij)
    q, k, v = (lin(z).view(2, 5, 2, 4).transpose(1, 2) for lin in (layer.q, layer.k, layer.v))
    b = layer.pair_bias
    kb, vb = k[:, :, None] + b, v[:, :, None] + b  # (B, H, N_query, N_key, d)
    a = torch.softmax(torch.einsum("bhid,bhijd->bhij", q, kb) / 2.0, -1)
    o = torch.einsum("bhij,bhijd->bhid", a, vb)
    want = layer.out(o.transpose(1, 2).reshape(2, 5, 8))
    torch.testing.assert_close(layer(z), want, rtol=1e-12, atol=1e-12)  # fp64, sums of 5 terms


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        (dict(n_channels=0), "n_channels must be a positive integer"),
        (dict(d_model=10), "d_model=10 must be divisible by n_heads=4"),
        (dict(attention="linear"), "attention must be one of"),
        (dict(backend="gpu"), "backend='gpu' is not valid"),
    ],
)
def test_attention_layer_bad_input(kwargs, msg):
    from icml26_lit.prime_attention import PrimeAttentionLayer

    args = dict(n_channels=6, d_model=16, n_heads=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        PrimeAttentionLayer(**args)
