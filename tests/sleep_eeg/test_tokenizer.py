"""Chapter 15 tokenizer: the quantiser against brute force and vector-quantize-pytorch."""

import pytest
import torch

from icml26_lit.core import interpreter_enabled
from icml26_lit.sleep_eeg.tokenizer import (
    SpectrogramTokenizer,
    VectorQuantizer,
    fit_tokenizer,
    spectrogram_mae,
)


def test_chosen_code_is_the_brute_force_minimum(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    vq = VectorQuantizer(33, 6, generator=g).eval()
    z = torch.randn(400, 6, generator=g)
    q, idx, _ = vq(z)
    d = ((z[:, None].double() - vq.codebook[None].double()) ** 2).sum(-1)
    best = d.min(-1).values
    chosen = d.gather(1, idx[:, None]).squeeze(1)
    # fp32 sums of 6 squares: ties closer than ~1e-5 may resolve either way; count them
    near = int((chosen - best > 0).sum())
    assert float((chosen - best).max()) <= 1e-5 and near <= 2, (near, fresh_seed)
    torch.testing.assert_close(q, vq.codebook[idx])


def test_quantised_output_matches_vector_quantize_pytorch(fresh_seed):
    vqp = pytest.importorskip("vector_quantize_pytorch")
    g = torch.Generator().manual_seed(fresh_seed)
    ours = VectorQuantizer(20, 8, generator=g).eval()
    ref = vqp.VectorQuantize(dim=8, codebook_size=20, decay=0.99, commitment_weight=0.25).eval()
    with torch.no_grad():
        ref._codebook.embed.copy_(ours.codebook[None])  # the shared codebook
        ref._codebook.initted.fill_(True)
    z = torch.randn(2, 50, 8, generator=g)
    q_ref, i_ref, _ = ref(z)
    q, i, _ = ours(z.reshape(-1, 8))
    assert torch.equal(i.reshape(2, 50), i_ref), fresh_seed
    # both gather the same fp32 code (straight-through adds and subtracts z: one ulp of |z|)
    torch.testing.assert_close(q.reshape(2, 50, 8), q_ref, atol=1e-6, rtol=1e-6)


def test_straight_through_gradient_is_identity(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    vq = VectorQuantizer(16, 4, generator=g).eval()
    z = torch.randn(30, 4, generator=g, dtype=torch.float64, requires_grad=True)
    vq.codebook = vq.codebook.double()
    jac = torch.autograd.functional.jacobian(lambda x: vq(x)[0], z)  # (30, 4, 30, 4)
    torch.testing.assert_close(jac, torch.eye(120, dtype=torch.float64).reshape(30, 4, 30, 4))


def test_ema_moves_codes_to_cluster_means():
    # two well-separated clusters, two codes: the EMA fixed point is the two cluster means
    g = torch.Generator().manual_seed(0)
    a = torch.randn(200, 2, generator=g) * 0.1 + torch.tensor([5.0, 0.0])
    b = torch.randn(200, 2, generator=g) * 0.1 - torch.tensor([5.0, 0.0])
    z = torch.cat([a, b])
    vq = VectorQuantizer(2, 2, decay=0.9, generator=g)
    for _ in range(300):
        vq(z)
    got = vq.codebook[vq.codebook[:, 0].argsort()]
    want = torch.stack([b.mean(0), a.mean(0)])
    # after 300 steps at decay 0.9 the EMA has forgotten its start (0.9^300 ~ 2e-14); the
    # Laplace smoothing shifts the codes by ~eps K / n, below 1e-6
    torch.testing.assert_close(got, want, atol=1e-4, rtol=0)


def test_dead_codes_restart():
    g = torch.Generator().manual_seed(0)
    vq = VectorQuantizer(8, 2, generator=g)
    vq(torch.randn(64, 2, generator=g) * 3)  # codes start spread out
    z = torch.randn(64, 2, generator=g) * 0.01 + 10  # then one far, tight cluster
    for _ in range(400):
        vq(z)
    # one code takes the cluster; the 7 others, unused, reach the 0.1 threshold after ~230 steps
    # (0.99^230 ~ 0.1) and restart at batch latents
    assert vq.n_restarts >= 7
    assert ((vq.codebook - 10).abs() < 0.1).all()


@pytest.mark.skipif(not interpreter_enabled(), reason="needs TRITON_INTERPRET=1")
def test_tokenizer_triton_equals_torch(fresh_seed):
    outs = {}
    for backend in ("torch", "triton"):
        g = torch.Generator().manual_seed(fresh_seed)
        tok = SpectrogramTokenizer(16, 4, hidden=8, backend=backend, generator=g)
        s = torch.randn(3, 7, 5, 32, generator=g)
        recon, idx, commit = tok(s)
        loss = (recon - s).abs().mean() + commit
        loss.backward()
        grads = [p.grad.clone() for p in tok.parameters()]
        outs[backend] = (recon, idx, commit, grads, tok.quantizer.codebook.clone())
    a, b = outs["torch"], outs["triton"]
    assert torch.equal(a[1], b[1]), fresh_seed
    for x, y in zip([a[0], a[2], a[4], *a[3]], [b[0], b[2], b[4], *b[3]]):
        torch.testing.assert_close(x, y)


def test_round_trip_and_training_reduce_error():
    g = torch.Generator().manual_seed(0)
    s = torch.randn(1, 400, 5, 32, generator=g) * 0.3 + torch.randn(1, 1, 5, 32, generator=g)
    tok = SpectrogramTokenizer(16, 8, generator=g)
    before = spectrogram_mae(tok.decode(tok.encode(s)), s)
    losses = fit_tokenizer(tok, s[0], steps=100, batch=64, generator=g)
    after = spectrogram_mae(tok.decode(tok.encode(s)), s)
    assert losses[-1] < losses[0] and float(after) < float(before)


def test_tokenizer_bad_input():
    tok = SpectrogramTokenizer(8, 4)
    with pytest.raises(ValueError, match="s must have shape"):
        tok(torch.randn(3, 4, 32))
    with pytest.raises(ValueError, match="s contains NaN"):
        tok(torch.full((2, 5, 32), float("nan")))
    with pytest.raises(ValueError, match="tokens"):
        tok.decode(torch.tensor([9]))
    with pytest.raises(ValueError, match="n_codes"):
        VectorQuantizer(0, 4)
    with pytest.raises(ValueError, match="z must have shape"):
        VectorQuantizer(4, 4)(torch.randn(3, 5))
    with pytest.raises(ValueError, match="pred"):
        spectrogram_mae(torch.randn(2, 3), torch.randn(2, 4))


def test_bad_inputs_are_refused_by_name():
    import numpy as np

    from icml26_lit.sleep_eeg.simulator import stationary_law
    from icml26_lit.sleep_eeg.tokenizer import (
        SpectrogramTokenizer,
        fit_tokenizer,
        spectrogram_mae,
    )

    flat = torch.ones(2, 3, 5, 32)
    with pytest.raises(ValueError, match="constant night"):
        spectrogram_mae(flat, flat)
    with pytest.raises(ValueError, match="row-stochastic"):
        stationary_law(np.ones((5, 5)))
    with pytest.raises(ValueError, match="square"):
        stationary_law(np.ones((5, 4)) / 4)
    tok = SpectrogramTokenizer(4, 2, generator=torch.Generator().manual_seed(0))
    spec = torch.randn(8, 5, 32)
    with pytest.raises(ValueError, match="batch"):
        fit_tokenizer(tok, spec, 1, batch=0)
    for lr in (0.0, -1e-3, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lr"):
            fit_tokenizer(tok, spec, 1, batch=4, lr=lr)
