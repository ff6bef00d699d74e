"""ecg_r1.model: IMD frequencies, the encoders and the model's forward and backward."""

import numpy as np
import pytest
import torch

from icml26_lit.ecg_r1 import (
    ECGR1Model,
    ImageEncoder,
    SignalEncoder,
    interleaved_modality_dropout,
    make_examples,
    report_vocabulary,
    simulate_ecg,
)
from icml26_lit.ecg_r1.model import reinit
from icml26_lit.lm import WordTokenizer


def test_imd_frequencies_1e5_draws(fresh_seed):
    ex = dict(signal=torch.zeros(1), image=torch.zeros(1), order=("ecg", "image"))
    g = torch.Generator().manual_seed(fresh_seed)
    n = 100_000
    counts = {}
    for _ in range(n):
        k = interleaved_modality_dropout(ex, p_drop=0.5, p_int=0.1, generator=g)["order"]
        counts[k] = counts.get(k, 0) + 1
    want = {("ecg",): 0.25, ("image",): 0.25, ("image", "ecg"): 0.05, ("ecg", "image"): 0.45}
    assert set(counts) == set(want)
    for k, p in want.items():
        sd = (p * (1 - p) / n) ** 0.5  # binomial standard deviation
        assert abs(counts[k] / n - p) < 3.5 * sd, (k, counts[k] / n, fresh_seed)


def test_imd_data_follows_tags_and_never_leaves_none():
    g = torch.Generator().manual_seed(0)
    for _ in range(200):
        out = interleaved_modality_dropout(
            dict(signal=1, image=None, order=("ecg",)), p_drop=1.0, generator=g
        )
        assert out["order"] == ("ecg",) and out["signal"] == 1  # restored, never empty
        out = interleaved_modality_dropout(
            dict(signal=1, image=2, order=("ecg", "image")), generator=g
        )
        assert (out["signal"] is not None) == ("ecg" in out["order"])
        assert (out["image"] is not None) == ("image" in out["order"])


def test_imd_bad_input():
    ex = dict(signal=1, image=2, order=("ecg", "image"))
    with pytest.raises(ValueError, match="p_drop"):
        interleaved_modality_dropout(ex, p_drop=1.5)
    with pytest.raises(ValueError, match="p_int"):
        interleaved_modality_dropout(ex, p_int=-0.1)
    with pytest.raises(ValueError, match="no modality tag"):
        interleaved_modality_dropout(dict(signal=1, image=2, order=()))


def _model(backend):
    g = torch.Generator().manual_seed(0)
    se, ie = reinit(SignalEncoder(), g), reinit(ImageEncoder(), g)
    return ECGR1Model(
        WordTokenizer(report_vocabulary()),
        se,
        ie,
        d_model=32,
        n_layers=1,
        n_heads=2,
        generator=torch.Generator().manual_seed(1),
        backend=backend,
    )


def test_model_forward_backward_triton_matches_torch():
    recs = [simulate_ecg(lab, seed=i) for i, lab in enumerate([["sinus"], ["AF", "LVH"]])]
    sig = torch.stack([r[0] for r in recs])
    img = torch.stack([r[1] for r in recs])
    grads, losses = [], []
    for be in ("torch", "triton"):
        m = _model(be)
        sf, imf = m.features(sig, img)
        exs = make_examples(sf, imf)
        exs[1] = dict(exs[1], image=None, order=("ecg",))  # prompts of different lengths
        tg = [[1, 5, 9, 2], [7, 2]]
        loss = m.sft_loss(exs, tg)
        loss.backward()
        losses.append(loss.detach())
        grads.append([p.grad.clone() for p in m.parameters() if p.requires_grad])
    # fp32: the kernel sums the vocabulary in another order than torch, 1e-5 is ample
    torch.testing.assert_close(losses[0], losses[1], atol=1e-5, rtol=1e-5)
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_encoders_and_model_bad_input():
    with pytest.raises(ValueError, match="signal must have shape"):
        SignalEncoder()(torch.zeros(1, 11, 1000))
    with pytest.raises(ValueError, match="image must have shape"):
        ImageEncoder()(torch.zeros(1, 50, 192))
    m = _model("torch")
    with pytest.raises(ValueError, match="no modality tag"):
        m.prompt([dict(signal=None, image=None, order=())])
    with pytest.raises(ValueError, match="condition"):
        make_examples(torch.zeros(1, 10, 32), torch.zeros(1, 12, 32), "audio")
    with pytest.raises(ValueError, match="seed"):
        simulate_ecg(["sinus"], seed=-1)
    loss = m.sft_loss(
        make_examples(*m.features(torch.zeros(1, 12, 1000), torch.zeros(1, 48, 192))), [[3, 2]]
    )
    assert np.isfinite(float(loss.detach()))
