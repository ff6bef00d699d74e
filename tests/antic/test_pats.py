"""Tests for the PATS selector and the uniform baseline."""

import math

import pytest
import torch

from icml26_lit.antic.pats import PATSSelector, UniformSelector, pearson, select_offline


@pytest.mark.parametrize("window", [1, 3, 5, 7])
def test_repeated_nonuniform_frame_keeps_one_per_window(window, fresh_seed):
    frame = torch.randn(12, 12, generator=torch.Generator().manual_seed(fresh_seed))
    n = 4 * window + 1
    kept = select_offline(torch.stack([frame] * n), PATSSelector(0.9, window))
    assert kept == list(range(0, n, window))


def test_white_noise_keeps_every_frame(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    frames = torch.randn(15, 16, 16, generator=g)
    assert select_offline(frames, PATSSelector(0.9, 5)) == list(range(15))


def test_break_keeps_previous_frame():
    # correlation with frame 0 falls below 0.9 first at frame k*; PATS keeps k*-1
    x = torch.linspace(0, 2 * math.pi, 32)
    frames = torch.stack([torch.sin(3 * x + 0.05 * k).repeat(32, 1) for k in range(25)])
    corr = [pearson(f, frames[0]) for f in frames]
    k_star = next(k for k, c in enumerate(corr) if c < 0.9)
    sel = PATSSelector(0.9, 100)
    released = []
    for k, f in enumerate(frames):
        sel.update(f)
        released += [i for i, _ in sel.pop_new()]
        if k == k_star:
            assert released[-1] == k_star - 1
            break


def test_pop_new_returns_the_frames_and_finish_keeps_last():
    frames = torch.randn(9, 8, 8, generator=torch.Generator().manual_seed(0))
    sel = PATSSelector(0.9, 5)
    got = {}
    for f in frames:
        sel.update(f)
        got.update(dict(sel.pop_new()))
    sel.finish()
    got.update(dict(sel.pop_new()))
    assert sorted(got) == sel.selected
    for i, f in got.items():
        assert torch.equal(f, frames[i])
    assert sel.held_frames() <= 2


def test_enstrophy_ratio_criterion_matches_hand_computation():
    # frames c_k * base with activity E_k = c_k^2 <base^2>; corr stays 1, so only the ratio decides
    base = torch.randn(10, 10, generator=torch.Generator().manual_seed(3))
    base = base / (base**2).mean().sqrt()  # <base^2> = 1, E_k = c_k^2
    c = [1.0, 1.1, 1.2, 1.25, 1.27, 1.28]
    sel = PATSSelector(0.9, 10)
    for ci in c:
        sel.update(ci * base)
    # by hand: anchor 0; f = |dE|; k=1: ratio 1 <= sqrt(max/mean)=1 -> skip
    # k=2: fluxes f1=.21, f2=.23: factor sqrt(.23/.22)=1.022,
    # ratio (E2-E0)/(E1-E0)=.44/.21 > factor -> keep 1
    assert sel.selected[:2] == [0, 1]


@pytest.mark.parametrize("r,keeps_frame_1", [(1.2, False), (1.3, True)])
def test_flux_factor_boundary_by_hand(r, keeps_frame_1):
    # E_0 = 1, E_1 = 1 + d, E_2 = 1 + r d (corr stays 1). At frame 2: f_1 = d, f_2 = (r - 1) d,
    # factor = sqrt(max f / mean f) = sqrt(2 / r) and ratio = (E_2 - E_0) / (E_1 - E_0) = r, so the
    # criterion breaks (and frame 1 is kept) exactly when r > sqrt(2 / r), i.e. r > 2^(1/3) = 1.26.
    base = torch.randn(10, 10, generator=torch.Generator().manual_seed(5))
    base = base / (base**2).mean().sqrt()
    d = 0.21
    sel = PATSSelector(0.9, 10)
    for e in (1.0, 1.0 + d, 1.0 + r * d):
        sel.update(math.sqrt(e) * base)
    assert sel.selected == ([0, 1] if keeps_frame_1 else [0])


def test_zero_variance_frames_are_guarded():
    sel = PATSSelector(0.9, 3)
    for _ in range(7):
        sel.update(torch.ones(6, 6))
    assert sel.finish() == [0, 3, 6]
    assert pearson(torch.ones(4), torch.ones(4)) == 1.0
    assert pearson(torch.ones(4), torch.arange(4.0)) == 0.0


def test_uniform_selector():
    assert select_offline(torch.zeros(10, 4, 4), UniformSelector(10, 10)) == list(range(10))
    assert select_offline(torch.zeros(10, 4, 4), UniformSelector(10, 2)) == [0, 9]


def test_bad_inputs():
    for thr in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="corr_threshold must be in"):
            PATSSelector(corr_threshold=thr)
    with pytest.raises(ValueError, match="window must be an int >= 1"):
        PATSSelector(window=0)
    sel = PATSSelector()
    bad = torch.zeros(4, 4)
    bad[1, 1] = float("inf")
    with pytest.raises(ValueError, match="frame 0 contains non-finite"):
        sel.update(bad)
    sel.update(torch.randn(4, 4))
    with pytest.raises(ValueError, match="frame 1 has shape"):
        sel.update(torch.randn(5, 5))
    with pytest.raises(ValueError, match="n_keep"):
        UniformSelector(10, 1)


def _rotating(n=24, T=30, step=0.04):
    c = torch.arange(n) * (2 * math.pi / n)
    y, x = torch.meshgrid(c, c, indexing="ij")
    return torch.stack(
        [torch.cos(3 * (x * math.cos(step * k) + y * math.sin(step * k))) for k in range(T)]
    )


def test_set_anchor_with_exact_reconstruction_keeps_the_official_decisions_and_one_raw_frame():
    frames = _rotating()
    official = select_offline(frames, PATSSelector(0.9, 8))
    sel, held = PATSSelector(0.9, 8), []
    for f in frames:
        held.append(sel.held_frames())  # what it holds when the next frame arrives
        sel.update(f)
        for i, kept in sel.pop_new():
            sel.set_anchor(i, kept.clone())  # a perfect reconstruction, a different tensor
    assert sel.finish() == official
    assert max(held) == 1
    # without set_anchor the selector holds the raw anchor as well
    sel, held = PATSSelector(0.9, 8), []
    for f in frames:
        held.append(sel.held_frames())
        sel.update(f)
        sel.pop_new()
    assert max(held) == 2


def test_set_anchor_changes_the_correlation_partner():
    # a "reconstruction" that is pure noise decorrelates everything: every frame is kept
    frames = _rotating(T=12)
    g = torch.Generator().manual_seed(0)
    sel = PATSSelector(0.9, 50)
    for f in frames:
        sel.update(f)
        for i, kept in sel.pop_new():
            sel.set_anchor(i, torch.randn(kept.shape, generator=g))
    assert sel.finish() == list(range(12))
    sel.set_anchor(sel.selected[0], torch.zeros(1))  # an older kept frame: ignored
    with pytest.raises(ValueError, match="must be a tensor of shape"):
        sel.set_anchor(sel.selected[-1], torch.zeros(3))
    bad = torch.zeros(24, 24)
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="stand-in for frame 11"):
        sel.set_anchor(sel.selected[-1], bad)
