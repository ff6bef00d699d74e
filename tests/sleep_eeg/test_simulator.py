"""Chapter 15 simulator: the hypnogram chain, the EEG rhythms and the breathing rate."""

import numpy as np
import pytest
import torch

from icml26_lit.sleep_eeg import (
    multitaper_psd,
    simulate_eeg,
    simulate_hypnogram,
    simulate_respiration,
    simulate_sleep_cohort,
    stationary_law,
    transition_matrix,
)


def test_stage_fractions_match_the_stationary_law(fresh_seed):
    # without age or drift the chain is homogeneous; started from pi it stays in law pi, so each
    # night's stage fraction is unbiased for pi; nights are independent, so the SE of the mean
    # fraction is the spread across nights / sqrt(n_nights)
    pi = stationary_law(transition_matrix(20.0)[0])
    g = torch.Generator().manual_seed(fresh_seed)
    hyp = simulate_hypnogram(400, np.full(300, 55.0), g, drift=False, age_effect=False, initial=pi)
    per_night = np.stack([(hyp == s).mean(1) for s in range(5)], 1)  # (300, 5)
    se = per_night.std(0, ddof=1) / np.sqrt(len(per_night))
    assert np.all(np.abs(per_night.mean(0) - pi) < 3 * se), (per_night.mean(0), pi, se, fresh_seed)


def test_age_and_drift_move_the_chain(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    young = simulate_hypnogram(960, np.full(200, 25.0), g)
    old = simulate_hypnogram(960, np.full(200, 80.0), g)
    # less slow-wave sleep with age: the ratio is ~0.4 (spread ~0.02 over seeds)
    assert (old == 3).mean() < 0.6 * (young == 3).mean(), fresh_seed
    # REM grows through an 8-h night: the last 2 h hold ~1.8x the first 2 h (spread ~0.15)
    assert (young[:, 720:] == 4).mean() > 1.25 * (young[:, :240] == 4).mean(), fresh_seed


def test_n2_has_the_most_spindle_band_power(fresh_seed):
    c = simulate_sleep_cohort(8, 1.0, seed=fresh_seed)
    f, p = multitaper_psd(c.eeg.reshape(8, 120, 5, 384).double(), c.fs_eeg)
    # sigma power relative to the epoch's 0.5-30 Hz power: the absolute band power failed 8 of
    # 60 seeds (a few muscle bursts, or transition epochs carrying N2's spindles, move a stage's
    # mean over one hour of 8 subjects); the relative one put N2 at 1.67x the next stage or more
    # (median 3.0x) on all 60, and below W, N1 and REM once the spindles are removed
    rel = p[..., (f >= 12) & (f <= 14)].mean((-1, -2)) / p[..., (f >= 0.5) & (f <= 30)].mean(
        (-1, -2)
    )
    st = torch.as_tensor(c.stages)
    by_stage = [float(rel[st == s].mean()) if (st == s).any() else 0.0 for s in range(5)]
    others = max(v for s, v in enumerate(by_stage) if s != 2)
    assert by_stage[2] > 1.25 * others, (by_stage, fresh_seed)


def test_breathing_rate_against_neurokit2(fresh_seed):
    nk = pytest.importorskip("neurokit2")
    g = torch.Generator().manual_seed(fresh_seed)
    for stage in (0, 2, 3, 4):  # 20 minutes of one stage, the variability of that stage
        y, rate = simulate_respiration(np.full(40, stage), 45.0, True, 10, generator=g)
        clean = nk.rsp_clean(y.numpy().astype(np.float64), sampling_rate=10)
        r = nk.rsp_rate(clean, sampling_rate=10)
        # neurokit2's peak-to-peak rate averaged over 20 minutes against the simulator's mean rate
        assert abs(np.nanmean(r) - 60 * float(rate.mean())) < 0.5, (stage, fresh_seed)


def test_coupling_zero_removes_stage_effects():
    g = torch.Generator().manual_seed(0)
    _, r_w = simulate_respiration(np.zeros(20, int), 40.0, False, coupling=0.0, generator=g)
    g = torch.Generator().manual_seed(0)
    _, r_n3 = simulate_respiration(np.full(20, 3), 40.0, False, coupling=0.0, generator=g)
    torch.testing.assert_close(r_w, r_n3)  # same draws, no stage effect: identical rates


def test_cohort_shapes_and_seed():
    c = simulate_sleep_cohort(3, 0.5, fs_eeg=128, seed=5)
    assert c.eeg.shape == (3, 60, 3840) and c.resp.shape == (3, 60 * 300)
    assert np.all((c.age >= 20) & (c.age <= 85))
    assert torch.equal(c.resp, simulate_sleep_cohort(3, 0.5, fs_eeg=128, seed=5).resp)


def test_simulator_bad_input():
    with pytest.raises(ValueError, match="age"):
        transition_matrix(-1.0)
    with pytest.raises(ValueError, match="age"):
        simulate_hypnogram(10, [30.0, float("nan")])
    with pytest.raises(ValueError, match="n_epochs"):
        simulate_hypnogram(0)
    with pytest.raises(ValueError, match="fs"):
        simulate_eeg([0, 1], 30.0, False, 1.0, fs=64.01)
    with pytest.raises(ValueError, match="stages"):
        simulate_eeg([0, 7], 30.0, False, 1.0)
    with pytest.raises(ValueError, match="gain"):
        simulate_eeg([0, 1], 30.0, False, -1.0)
    with pytest.raises(ValueError, match="coupling"):
        simulate_respiration([0, 1], 30.0, False, coupling=2.0)
    with pytest.raises(ValueError, match="hours"):
        simulate_sleep_cohort(2, 0.01)
    with pytest.raises(ValueError, match="n_subjects"):
        simulate_sleep_cohort(0, 1.0)
    with pytest.raises(ValueError, match="fs_resp"):
        simulate_sleep_cohort(2, 1.0, fs_resp=7.33)
