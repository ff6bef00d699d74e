"""Chapter 13: data of the experiments (no download), the baseline's op count, one smoke step."""

import socket

import pytest
import torch

from icml26_lit.sh2rfssm.experiments import (
    CONFIG,
    TONE_NAMES,
    LIFScanNet,
    RateReadout,
    lif_ops,
    load_basic_motions_tensors,
    load_japanese_vowels_raw,
    make_pulse_rate,
    make_tone_bursts,
    resplit_japanese_vowels,
    tone_data,
)


def test_basic_motions_loads_without_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    X, y, Xt, yt, classes = load_basic_motions_tensors()
    assert X.shape == (40, 100, 6) and Xt.shape == (40, 100, 6)
    assert sorted(torch.bincount(y).tolist()) == [10, 10, 10, 10] and len(classes) == 4
    torch.testing.assert_close(X.mean((0, 1)), torch.zeros(6), atol=1e-5, rtol=0)  # z-scored


def test_japanese_vowels_loads_without_network_and_resplits(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    series, labels, n_train = load_japanese_vowels_raw()
    assert len(series) == 640 and n_train == 270 and sorted(set(labels.tolist())) == list(range(9))
    assert all(s.shape[0] == 12 and 7 <= s.shape[1] <= 29 for s in series)
    X, y, Xt, yt = resplit_japanese_vowels(series, labels, n_train, seed=3)
    assert X.shape[1:] == (29, 12) and X.shape[0] + Xt.shape[0] == 640
    assert abs(X.shape[0] - 270) <= 9  # rounding per class
    # stratified: every class keeps its share within one series
    for c in range(9):
        share = (labels == c).sum() * X.shape[0] / 640
        assert abs(int((y == c).sum()) - share) <= 1
    # front padding: series shorter than 29 steps start with exact zeros
    n_short = sum(s.shape[1] < 29 for s in series)
    assert n_short > 0 and int((torch.cat([X, Xt])[:, 0].abs().sum(1) == 0).sum()) == n_short
    X2, *_ = resplit_japanese_vowels(series, labels, n_train, seed=3)
    torch.testing.assert_close(X, X2)  # same seed, same split
    X4, *_ = resplit_japanese_vowels(series, labels, n_train, seed=4)
    assert not torch.equal(X, X4)  # seeds redraw the data
    with pytest.raises(ValueError, match="n_train must be in"):
        resplit_japanese_vowels(series, labels, 0, seed=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        resplit_japanese_vowels(series, labels, 270, seed=-1)


def test_tone_data_differs_by_seed():
    cfg = CONFIG.get("ci")
    cfg = type(cfg)({**cfg, "tone_length": 64, "tone_burst": 16, "tone_train": 4, "tone_test": 4})
    a, b = tone_data(cfg, 0), tone_data(cfg, 1)
    assert not torch.equal(a[0], b[0]) and torch.equal(a[0], tone_data(cfg, 0)[0])


def test_tone_bursts_contain_their_tone():
    x, y = make_tone_bursts(12, 1024, burst=256, noise=0.0, seed=3)
    assert x.shape == (12, 1024, 1)
    from icml26_lit.sh2rfssm.experiments import TONE_FREQS

    for i in range(12):
        spec = torch.fft.rfft(x[i, :, 0]).abs()
        peak = float(spec.argmax()) * 2 * torch.pi / 1024
        assert abs(peak - TONE_FREQS[int(y[i])]) < 0.02
    with pytest.raises(ValueError, match="burst"):
        make_tone_bursts(2, 100, burst=200)
    with pytest.raises(ValueError, match="length must be a positive integer"):
        make_tone_bursts(2, 0)


def test_pulse_rate_and_rate_readout():
    x, r = make_pulse_rate(2, 3000, seed=0)
    assert x.shape == r.shape == (2, 3000, 1) and bool((r > 0).all())
    ro = RateReadout(3, window=4)
    with torch.no_grad():
        ro.readout.weight.fill_(1.0)
        ro.readout.bias.zero_()
    z = torch.zeros(1, 10, 3)
    z[0, 2] = 1
    out = ro(z)[0, :, 0]
    torch.testing.assert_close(out, torch.tensor([0, 0, 0.75, 0.75, 0.75, 0.75, 0, 0, 0, 0]))


def test_lif_ops_counts():
    torch.manual_seed(0)
    m = LIFScanNet(2, 5, 3)
    x = torch.randn(4, 30, 2) * 3
    y = torch.randint(0, 3, (4,))
    ops = lif_ops(m, x, y)
    with torch.no_grad():
        logits, (s1, s2) = m(x, return_spikes=True)
    n1, n2 = float(s1.sum()) / 4, float(s2.sum()) / 4
    assert ops["mac"] == 30 * 2 * 5 + 2 * 30 * 5 + 5 * 3
    assert ops["ac"] == pytest.approx(n1 * 5 + n2)
    assert ops["acc"] == pytest.approx(float((logits.argmax(1) == y).float().mean()))


def test_lif_layer_equals_snntorch_leaky_without_reset(fresh_seed):
    import snntorch as snn

    g = torch.Generator().manual_seed(fresh_seed)
    m = LIFScanNet(1, 4, 2).double()
    with torch.no_grad():
        m.beta_logit[0].copy_(torch.randn(4, generator=g, dtype=torch.float64))
    cur = torch.randn(2, 60, 4, generator=g, dtype=torch.float64)
    mem_scan = m.membrane(cur, 0)
    beta = torch.sigmoid(m.beta_logit[0]).detach()
    lif = snn.Leaky(beta=beta, reset_mechanism="none", threshold=1.0)
    mem, spk_ref, mem_ref = torch.zeros(2, 4, dtype=torch.float64), [], []
    for t in range(60):
        spk, mem = lif(cur[:, t], mem)
        spk_ref.append(spk)
        mem_ref.append(mem)
    torch.testing.assert_close(mem_scan, torch.stack(mem_ref, 1), msg=f"seed={fresh_seed}")
    spk_scan = m.spike_fn(mem_scan - 1.0)
    far = (mem_scan - 1.0).abs() > 1e-9
    assert bool((spk_scan[far] == torch.stack(spk_ref, 1)[far]).all())


def test_configs_share_keys():
    keys = set(CONFIG.get("ci"))
    for name in ("cpu", "colab", "full"):
        assert set(CONFIG.get(name)) == keys, name
    for name in ("ci", "cpu", "colab", "full"):
        cfg = CONFIG.get(name)
        # every arm's carried pick comes from the grid every arm was tuned on
        assert set(cfg["tone_picks"]) == set(TONE_NAMES) == set(cfg["tone_arms"]), name
        for lr, threshold in cfg["tone_picks"].values():
            assert lr in cfg["pilot_lrs"] and threshold in cfg["pilot_thresholds"], name
        # the headline's two arms are always tuned by the same pilot
        assert {"sh2rfssm", "lru", "lru_ann"} <= set(cfg["pilot_arms"]), name


def test_lif_threshold_validated():
    with pytest.raises(ValueError, match="threshold must be a positive number"):
        LIFScanNet(1, 4, 2, threshold=0.0)
