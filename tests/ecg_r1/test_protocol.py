"""ecg_r1.protocol: thresholds, Bazett, the report and the official rewards."""

import math

import numpy as np
import pytest

from icml26_lit.ecg_r1 import (
    LABELS,
    completion_text,
    diagnosis_reward,
    evidence_reward,
    format_reward,
    labels_from_measurements,
    protocol_report,
    qtc_bazett,
    report_vocabulary,
)
from icml26_lit.physio import random_labels, simulate_record

M0 = dict(
    hr_bpm=75.0,
    rhythm_regular=True,
    pr_ms=160.0,
    qrs_ms=90.0,
    morphology="normal",
    sv1rv6_mm=20.0,
    r_I_mm=8.0,
    r_aVL_mm=5.0,
    st_inferior_mm=0.0,
    qt_ms=380.0,
)


def test_qtc_bazett_by_hand():
    # QT 400 ms at 75 bpm: RR 0.8 s, 400 / sqrt(0.8) = 447.21 ms
    assert abs(qtc_bazett(400, 75) - 400 / math.sqrt(0.8)) < 1e-9
    assert round(qtc_bazett(400, 75), 1) == 447.2
    with pytest.raises(ValueError, match="hr_bpm"):
        qtc_bazett(400, 5)


def test_lvh_36_vs_34_mm():
    assert "LVH" in labels_from_measurements(dict(M0, sv1rv6_mm=36.0))
    assert "LVH" not in labels_from_measurements(dict(M0, sv1rv6_mm=34.0))
    assert "LVH" in labels_from_measurements(dict(M0, r_aVL_mm=12.0))  # the aVL criterion
    assert labels_from_measurements(dict(M0, qt_ms=400.0)) == ("sinus", "long_QT")  # 447 ms


def test_labels_from_500_records_match_the_request():
    rng = np.random.default_rng(11)
    n_tokens = []
    for _ in range(500):
        want = random_labels(rng, p_finding=0.2)
        rec = simulate_record(want, rng=rng, borderline_share=0.5)
        think, labels, anchors = protocol_report(rec["measurements"])
        assert labels == want, (want, rec["measurements"])
        text = completion_text(think, labels)
        n_tokens.append(len(text.split()))
        # every anchor is cited in its own step: the target scores 1 on every reward
        assert evidence_reward(text, anchors) == 1.0 and diagnosis_reward(text, want) == 1.0
    assert max(n_tokens) + 1 <= 48  # + <eos>: the ci target budget


def test_vocabulary_is_closed_and_enumerated():
    vc, vf = report_vocabulary("compact"), report_vocabulary("full")
    assert set(LABELS) <= set(vc) <= set(vf) and len(vc) == len(set(vc))
    rng = np.random.default_rng(2)
    for _ in range(100):
        m = simulate_record(random_labels(rng), rng=rng)["measurements"]
        for style, voc in (("compact", vc), ("full", vf)):
            think, labels, _ = protocol_report(m, style)
            assert set(completion_text(think, labels).split()) <= set(voc)


def test_official_worked_cases():
    # Jaccard: predicted {tachy, lvh}, true {tachy, rbbb}: 1 / 3; {a, b} vs {a}: 0.5
    assert diagnosis_reward("<answer> tachy ; LVH </answer>", ["tachy", "RBBB"]) == 1 / 3
    assert diagnosis_reward("<answer>sinus;AVB1</answer>", ["sinus"]) == 0.5
    assert diagnosis_reward("<answer> Sinus </answer>", ["sinus"]) == 1.0  # no ';', lower-cased
    # a str label is one label, not its characters (it scored 0 before)
    assert diagnosis_reward("<answer> sinus </answer>", "sinus") == 1.0
    assert diagnosis_reward("<answer> sinus </answer>", ("sinus",)) == 1.0
    assert diagnosis_reward("<answer> s ; i ; n ; u </answer>", "sinus") == 0.0
    assert diagnosis_reward("no answer", ["sinus"]) == 0.0
    assert diagnosis_reward("<answer> </answer>", []) == 1.0
    # evidence 0.75: step 1 has both anchors, step 3 one of two; the '+' is matched literally
    text = "<think> **Step 1** rate 110 Tachy **Step 3** SV1+RV6 36 normal </think>"
    anchors = {1: ["rate 110", "tachy"], 3: ["SV1+RV6 36", "LVH"]}
    assert evidence_reward(text, anchors) == 0.75
    assert evidence_reward(text.replace("SV1+RV6", "SV11RV6"), anchors) == 0.5  # not a regex '+'
    # a step with anchors that the completion lacks scores 0 there
    assert evidence_reward(text, {**anchors, 5: ["QTc 410"]}) == 0.5
    # format: empty <think> is 0
    assert format_reward("<think>  </think><answer>sinus</answer>") == 0.0
    assert format_reward("<think> x </think>") == 1.0
    assert evidence_reward("<think></think>", anchors) == 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="qrs_ms"):
        labels_from_measurements(dict(M0, qrs_ms=1000.0))
    with pytest.raises(ValueError, match="lacks"):
        labels_from_measurements({"hr_bpm": 70})
    with pytest.raises(ValueError, match="style"):
        protocol_report(M0, style="prose")
    with pytest.raises(TypeError, match="anchors"):
        evidence_reward("<think> x </think>", ["a"])
