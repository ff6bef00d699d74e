"Chapter 19: score_messages against a masked F.cross_entropy sum, on both backends."

import pytest
import torch
import torch.nn.functional as F

from icml26_lit.verbalized_persuasion.kernels import (
    bench_score_messages,
    score_messages,
    score_messages_reference,
)


def _inputs(B, T, D, V, dtype, g, keep=0.6):
    h = torch.randn(B, T, D, generator=g, dtype=dtype)
    w = torch.randn(V, D, generator=g, dtype=dtype) / D**0.5 * 3
    y = torch.randint(0, V, (B, T), generator=g)
    m = torch.rand(B, T, generator=g) < keep
    m[torch.arange(B), torch.randint(0, T, (B,), generator=g)] = True  # no empty message
    return h, w, y, m


def _cross_entropy_sum(h, w, y, m):
    "Independent oracle: per-token F.cross_entropy, zeroed outside the mask, summed per row."
    nll = torch.stack([F.cross_entropy(h[b] @ w.T, y[b], reduction="none") for b in range(len(h))])
    return -(nll * m).sum(-1)


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matches_masked_cross_entropy(backend, dtype, fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    # odd sizes: V not a block multiple and > 64, one-token messages, T = 1, B = 1
    for B, T, D, V in [(3, 5, 8, 131), (1, 1, 4, 7), (4, 9, 20, 3), (2, 17, 70, 65)]:
        h, w, y, m = _inputs(B, T, D, V, dtype, g)
        out = score_messages(h, w, y, m, backend=backend)
        # fp32: sums of <= 17 log-probs of size ~10 with ~1e-6 relative rounding each
        tol = dict(atol=1e-4, rtol=1e-5) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-10)
        torch.testing.assert_close(
            out, _cross_entropy_sum(h, w, y, m), **tol, msg=f"seed={fresh_seed}"
        )
        torch.testing.assert_close(out, score_messages_reference(h, w, y, m), **tol)


def test_gradients_triton_match_torch(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    h, w, y, m = _inputs(3, 6, 10, 37, torch.float64, g)
    grads = []
    for backend in ("triton", "torch"):
        hh, ww = h.clone().requires_grad_(True), w.clone().requires_grad_(True)
        grads.append(
            torch.autograd.grad(score_messages(hh, ww, y, m, backend=backend).sum(), (hh, ww))
        )
    for a, b in zip(*grads):  # fp64 sums of <= 37 terms: 1e-12 is ~1e4 ulps
        torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-10, msg=f"seed={fresh_seed}")
    assert grads[0][0][~m].abs().max() == 0  # masked positions get no gradient


def test_mask_only_selects():
    g = torch.Generator().manual_seed(1)
    h, w, y, _ = _inputs(2, 6, 8, 13, torch.float64, g)
    full = torch.ones(2, 6, dtype=torch.bool)
    first = torch.zeros(2, 6, dtype=torch.bool)
    first[:, :3] = True
    parts = score_messages(h, w, y, first) + score_messages(h, w, y, ~first)
    torch.testing.assert_close(parts, score_messages(h, w, y, full))


def test_benchmark_cpu_model():
    rows = bench_score_messages("cpu", Bs=(1000,), Vs=(300,))
    assert rows[0]["reference_logits_GB"] == pytest.approx(4 * 1000 * 64 * 300 / 1e9)


@pytest.mark.parametrize(
    "change,msg",
    [
        (dict(mask=torch.zeros(2, 3, dtype=torch.bool)), "all False"),
        (dict(mask=torch.ones(2, 3)), "mask"),
        (dict(targets=torch.zeros(2, 4, dtype=torch.long)), "targets"),
        (dict(hidden=torch.zeros(2, 3)), "hidden"),
        (dict(backend="cuda"), "backend"),
    ],
)
def test_bad_input(change, msg):
    args = dict(
        hidden=torch.zeros(2, 3, 4),
        weight=torch.zeros(5, 4),
        targets=torch.zeros(2, 3, dtype=torch.long),
        mask=torch.ones(2, 3, dtype=torch.bool),
    )
    args.update(change)
    with pytest.raises((ValueError, TypeError), match=msg):  # a wrong dtype is a TypeError
        score_messages(**args)
