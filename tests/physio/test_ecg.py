"""Physio substrate: the 12-lead simulator's labels, rate, morphology and image."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.physio import (
    LABELS,
    LAYOUT,
    LEAD_MATRIX,
    LEADS,
    THRESHOLDS,
    check_labels,
    draw_parameters,
    random_labels,
    rasterise_ecg,
    simulate_record,
)


def labels_from(m: dict) -> tuple:
    "The protocol's thresholds applied to measurements, written here independently of the package."
    if not m["rhythm_regular"]:
        out = ["AF"]
    else:
        out = ["brady" if m["hr_bpm"] < 60 else "tachy" if m["hr_bpm"] > 100 else "sinus"]
    if m["pr_ms"] is not None and m["pr_ms"] > 200:
        out.append("AVB1")
    if m["qrs_ms"] > 120:
        out.append({"rsr": "RBBB", "qs": "LBBB"}[m["morphology"]])
    if m["sv1rv6_mm"] > 35 or m["r_I_mm"] > 15 or m["r_aVL_mm"] > 11:
        out.append("LVH")
    if m["st_inferior_mm"] >= 1:
        out.append("inferior_STE")
    if m["qtc_ms"] > 440:
        out.append("long_QT")
    return tuple(x for x in LABELS if x in out)


def test_lead_matrix_einthoven_goldberger():
    # II = I + III and aVR + aVL + aVF = 0 hold for the lead vectors themselves
    ix = {n: i for i, n in enumerate(LEADS)}
    L = LEAD_MATRIX
    np.testing.assert_allclose(L[ix["II"]], L[ix["I"]] + L[ix["III"]], atol=1e-12)
    np.testing.assert_allclose(L[ix["aVR"]] + L[ix["aVL"]] + L[ix["aVF"]], 0, atol=1e-12)


def test_labels_from_500_records():
    rng = np.random.default_rng(123)
    counts = dict.fromkeys(LABELS, 0)
    for _ in range(500):
        want = random_labels(rng, p_finding=0.2)
        rec = simulate_record(want, rng=rng, borderline_share=0.5)
        assert labels_from(rec["measurements"]) == want, (want, rec["measurements"])
        for x in want:
            counts[x] += 1
    assert min(counts.values()) >= 20, counts  # every label was exercised


def test_borderline_share():
    # with borderline_share 1 every value sits within 10% of a threshold of its region
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = draw_parameters(["sinus", "long_QT"], rng, borderline_share=1.0)
        assert 440 < p["qtc_ms"] <= 484 and p["pr_ms"] <= 200
        assert 60 <= p["hr_bpm"] <= 66 or 90 <= p["hr_bpm"] <= 100
    shares = []
    for b in (0.0, 0.5):
        near = [abs(draw_parameters(["tachy"], rng, b)["hr_bpm"] - 100) <= 10 for _ in range(2000)]
        shares.append(np.mean(near))
    # tachy 100-150 bpm: a uniform draw lands within 10 bpm of 100 with probability 0.2;
    # at share 0.5: 0.5 + 0.5 * 0.2 = 0.6. 2000 draws: sd <= 0.011, band 0.05 is > 4 sigma
    assert abs(shares[0] - 0.2) < 0.05 and abs(shares[1] - 0.6) < 0.05, shares


def test_rate_against_neurokit2():
    nk = pytest.importorskip("neurokit2")
    rng = np.random.default_rng(7)
    for labels in [
        ("sinus",),
        ("brady",),
        ("tachy",),
        ("sinus", "RBBB"),
        ("tachy", "LVH"),
        ("brady", "AVB1"),
        ("sinus", "LBBB"),
        ("tachy", "inferior_STE"),
    ]:
        rec = simulate_record(labels, rng=rng, fs=250.0, noise_mv=0.02)
        x = rec["signal"][LEADS.index("II")].numpy().astype(float)
        _, info = nk.ecg_peaks(x, sampling_rate=250)
        peaks = np.asarray(info["ECG_R_Peaks"]) / 250.0
        peaks = peaks[(peaks > 0.15) & (peaks < 10.0 - 0.3)]  # the window the simulator measures
        hr_nk = 60.0 / np.diff(peaks).mean()
        # a peak detector's R time jitters by ~1 sample (4 ms) at 250 Hz: over ~10 beats that
        # moves the mean rate by well under 1 bpm; 2 bpm is the band
        assert abs(hr_nk - rec["measurements"]["hr_bpm"]) < 2.0, (labels, hr_nk)


def test_af_is_irregular_and_sinus_regular():
    rng = np.random.default_rng(1)
    cv = {}
    for lab in ("AF", "sinus"):
        vals = []
        for _ in range(10):
            p = draw_parameters([lab], rng)
            from icml26_lit.physio import draw_beats

            on, _ = draw_beats(p, 10.0, rng)
            rr = np.diff(on)
            vals.append(rr.std() / rr.mean())
        cv[lab] = np.mean(vals)
    assert cv["AF"] > 0.12 and cv["sinus"] < 0.06, cv


def _qrs_window(rec, lead):
    "The noiseless QRS complex of `lead` (mV), rebuilt from the record's parameters."
    from icml26_lit.physio import beat_waves, calibrate_voltage, project

    p = rec["parameters"]
    qrs, _ = beat_waves(p, 0.4)
    k = calibrate_voltage(p, qrs)
    t = np.arange(-0.02, p["qrs_ms"] / 1000 + 0.02, 0.001)
    scaled = [(a, b, c, d * k, u) for a, b, c, d, u in qrs]
    return project(t, np.zeros(1), scaled)[LEADS.index(lead)]


def test_bundle_branch_morphology_in_v1():
    rng = np.random.default_rng(5)
    normal = _qrs_window(simulate_record(["sinus"], rng=rng), "V1")
    rbbb = _qrs_window(simulate_record(["sinus", "RBBB"], rng=rng), "V1")
    lbbb = _qrs_window(simulate_record(["sinus", "LBBB"], rng=rng), "V1")
    assert -normal.min() > normal.max()  # rS: the deep S dominates V1
    assert rbbb[-40:].max() > 0.2 * np.abs(rbbb).max()  # rSR': a late positive R'
    assert lbbb.max() < 0.1 * -lbbb.min()  # QS: (almost) no R in V1


def test_lvh_voltage_and_qtc_bazett():
    rng = np.random.default_rng(2)
    rec = simulate_record(["sinus", "LVH"], rng=rng)
    m = rec["measurements"]
    assert m["sv1rv6_mm"] > THRESHOLDS["lvh_sv1rv6_mm"]
    assert math.isclose(m["sv1rv6_mm"], rec["parameters"]["sv1rv6_mm"], rel_tol=1e-9)
    assert math.isclose(m["qtc_ms"], m["qt_ms"] / math.sqrt(60.0 / m["hr_bpm"]), rel_tol=1e-9)
    # the signal carries the voltage: the noiseless S in V1 is at most the record's minimum
    v1 = rec["signal"][LEADS.index("V1")].numpy()
    assert -v1.min() * 10 > 0.8 * m["sv1_mm"]


def test_record_shapes_and_image_layout():
    rec = simulate_record(["tachy"], rng=0, fs=100.0, duration=10.0)
    assert rec["signal"].shape == (12, 1000) and rec["signal"].dtype == torch.float32
    assert rec["image"].shape == (48, 192)
    assert float(rec["image"].min()) >= 0 and float(rec["image"].max()) <= 1
    # one lead alone drawn: only its panel has a trace
    sig = torch.zeros(12, 1000)
    sig[LEADS.index("V5")] = 1.0  # a flat line at +1 mV
    img = rasterise_ecg(sig, 100.0, grid=False, pixel_noise=0.0)
    r, c = next((r, c) for r, row in enumerate(LAYOUT) for c, n in enumerate(row) if n == "V5")
    rows_hit = img[:, c * 48 + 10].nonzero().flatten()
    # 0 mV sits at mid-panel (row 8 of 16); +1 mV is 16/3 rows higher; other panels show 0 mV
    assert r * 16 + 2 in rows_hit.tolist() or r * 16 + 3 in rows_hit.tolist()


def test_bad_input():
    with pytest.raises(ValueError, match="labels"):
        check_labels(["sinus", "STEMI"])
    with pytest.raises(ValueError, match="labels"):
        check_labels(["sinus", "tachy"])
    with pytest.raises(TypeError, match="labels"):
        check_labels("sinus")
    with pytest.raises(ValueError, match="borderline_share"):
        draw_parameters(["sinus"], np.random.default_rng(0), borderline_share=1.5)
    with pytest.raises(ValueError, match="fs"):
        simulate_record(["sinus"], fs=5)
    with pytest.raises(ValueError, match="signal"):
        rasterise_ecg(torch.zeros(11, 100), 100.0)
