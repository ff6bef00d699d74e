"""Tests for icml26_lit.antic.kdv: the activity-quantile rule, the KdV activity, streaming."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.antic.kdv import KdVActivitySelector, QuantileActivitySelector, kdv_activity
from icml26_lit.antic.pats import select_offline
from icml26_lit.sim.kdv import KdV1D


def reference_rule(acts, high=0.95, low=0.05, window=10):
    "An independent loop over the official rule, with numpy's linear quantile."
    kept, hist = [0], [acts[0]]
    for i, a in enumerate(acts[1:], start=1):
        q_hi, q_lo = np.quantile(hist, high), np.quantile(hist, low)
        hist = (hist + [a])[-window:]
        if a > q_hi or a < q_lo:
            kept.append(i)
    return kept


def test_rule_on_a_hand_made_sequence():
    acts = [1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 0.5, 5.0]
    # 5 beats {1,1,1}; the next 5 beats 4.6 = Q95{1,1,5}; the third 5 equals Q95{1,5,5} = 5;
    # 0.5 is below Q05{5,5,5}; the last 5 lies inside [0.95, 5] of {5,5,0.5}
    assert select_offline(torch.tensor(acts), QuantileActivitySelector(window=3)) == [0, 3, 4, 6]
    # with a window of 1 every change is kept, equal neighbours are not
    assert select_offline(torch.tensor(acts), QuantileActivitySelector(window=1)) == [0, 3, 6, 7]


def test_rule_matches_independent_loop(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    acts = list(np.cumsum(rng.normal(size=200)) + rng.normal(size=200))
    for high, low, window in ((0.95, 0.05, 10), (0.8, 0.3, 4), (1.0, 0.0, 7), (0.6, 0.5, 1)):
        got = select_offline(torch.tensor(acts), QuantileActivitySelector(high, low, window))
        assert got == reference_rule(acts, high, low, window), (high, low, window)


def test_constant_activity_keeps_only_the_first():
    assert select_offline(torch.full((30,), 2.0), QuantileActivitySelector()) == [0]
    # a monotone trend leaves the band every time
    assert select_offline(torch.arange(30.0), QuantileActivitySelector()) == list(range(30))


def test_kdv_activity_is_max_abs_ut():
    s = KdV1D(128, length=2 * math.pi, alpha=1.0)
    # u = A cos x: u_xxx = A sin x and u u_x = -A^2 cos x sin x
    A = 0.5
    u = A * torch.cos(s.x)
    ut = -A * torch.sin(s.x) + A**2 * torch.cos(s.x) * torch.sin(s.x)
    # The activity goes through rfft, a multiplication by (ik)^3 and irfft. Rounding noise of
    # relative size ~eps per transform lands on every mode up to k_max = n/2 = 64, where the third
    # derivative amplifies it by k_max^3 = 2.6e5: an absolute error of order
    # eps * k_max^3 * max|u| (~3e-11 here), i.e. ~1e-10 relative to max|u_t| ~ 0.6.
    # We allow 4x that.
    eps = torch.finfo(torch.float64).eps
    k_max = 128 // 2
    tol = 4 * eps * k_max**3 * A / float(ut.abs().max())
    assert float(kdv_activity(s, u)) == pytest.approx(float(ut.abs().max()), rel=tol)
    # for a soliton u_t = -c u_x, so the activity scales like c^2.5 / alpha
    s2 = KdV1D(256)
    a1, a4 = (float(kdv_activity(s2, s2.soliton(c, 10.0))) for c in (1.0, 4.0))
    assert a4 / a1 == pytest.approx(4.0**2.5, rel=0.02)
    # batched
    both = kdv_activity(s2, torch.stack([s2.soliton(1.0, 10.0), s2.soliton(4.0, 10.0)]))
    torch.testing.assert_close(both, torch.tensor([a1, a4], dtype=torch.float64))


def test_kdv_selector_equals_rule_on_activities():
    s = KdV1D(128, dt=1e-3)
    traj = s.rollout(s.solitons([2.0, 0.5], [6.0, 12.0]), 40, 0.1)
    sel = KdVActivitySelector(s, window=5)
    kept = select_offline(traj, sel)
    acts = kdv_activity(s, traj)
    torch.testing.assert_close(torch.tensor(sel.activities, dtype=torch.float64), acts)
    assert kept == reference_rule(acts.tolist(), window=5)
    assert kept[0] == 0 and sel.held_frames() == 0


def test_streaming_interface_and_keep_last():
    s = KdV1D(64, dt=4e-3)
    u = s.soliton(1.0, 10.0)
    frames = [u, u, u, 2 * u, 2 * u, 2 * u]  # activities a, a, a, b, b, b with b > a
    sel = KdVActivitySelector(s, window=3, keep_last=True)
    popped = []
    for f in frames:
        sel.update(f)
        popped += sel.pop_new()
    # 0: the seed; 3: b > Q95{a,a,a}; 4: b > Q95{a,a,b} = a + 0.9 (b - a);
    # 5: b = Q95{a,b,b}, skipped
    assert [i for i, _ in popped] == [0, 3, 4] and sel.selected == [0, 3, 4]
    assert all(f is frames[i] for i, f in popped)
    assert sel.held_frames() == 1  # frame 5, held for finish()
    assert sel.finish() == [0, 3, 4, 5]
    last = sel.pop_new()
    assert [i for i, _ in last] == [5] and last[0][1] is frames[5] and sel.held_frames() == 0
    # without keep_last nothing is held and the last frame is not forced
    plain = KdVActivitySelector(s, window=3)
    assert select_offline(torch.stack(frames), plain) == [0, 3, 4] and plain.held_frames() == 0


def test_keep_last_does_not_duplicate():
    sel = QuantileActivitySelector(window=2, keep_last=True)
    for a in (1.0, 2.0, 3.0):
        sel.update(a)
    assert sel.held_frames() == 0 and sel.finish() == [0, 1, 2]
    sel = QuantileActivitySelector(window=2)
    for a in (1.0, 1.0, 1.0):
        sel.update(a)
    assert sel.finish() == [0]  # the official selector never forces the last frame


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        (dict(high_quantile=1.5), r"high_quantile must be a number in \[0, 1\]"),
        (dict(low_quantile=-0.1), r"low_quantile must be a number in \[0, 1\]"),
        (dict(high_quantile=0.3, low_quantile=0.5), "low_quantile must be below high_quantile"),
        (dict(high_quantile=0.5, low_quantile=0.5), "low_quantile must be below high_quantile"),
        (dict(window=0), "window must be an int >= 1"),
        (dict(window=2.5), "window must be an int >= 1"),
    ],
)
def test_bad_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        QuantileActivitySelector(**kwargs)
    with pytest.raises(ValueError, match=msg):
        KdVActivitySelector(KdV1D(32), **kwargs)


def test_bad_frames():
    s = KdV1D(32)
    with pytest.raises(TypeError, match="solver must be a KdV1D"):
        KdVActivitySelector("kdv")
    sel = KdVActivitySelector(s)
    sel.update(s.soliton(1.0, 5.0))
    bad = s.soliton(1.0, 5.0)
    bad[3] = float("nan")
    with pytest.raises(ValueError, match="frame 1 contains non-finite values"):
        sel.update(bad)
    with pytest.raises(ValueError, match=r"frame 1 must have shape \(32,\)"):
        sel.update(torch.zeros(31))
    with pytest.raises(TypeError, match="frame must be a torch.Tensor"):
        sel.update([0.0] * 32)
    with pytest.raises(ValueError, match="frame 0 contains non-finite values"):
        QuantileActivitySelector().update(float("inf"))
