"""ecg_r1.experiments' colab-scale metrics: BLEU-4 and ROUGE-L against sacrebleu and rouge-score,
the hallucinated-number counter on hand-made reports, the answers-only arm's targets."""

import math

import numpy as np
import pytest
import sacrebleu
from rouge_score import rouge_scorer

from icml26_lit.ecg_r1.experiments import (
    CONFIG,
    answer_only_targets,
    bleu4,
    consistency,
    hallucinated_numbers,
    hallucination_rate,
    rouge_l,
    stated_numbers,
)
from icml26_lit.ecg_r1.model import simulate_set
from icml26_lit.ecg_r1.protocol import (
    completion_text,
    labels_from_measurements,
    protocol_report,
    vocabulary,
)
from icml26_lit.lm import WordTokenizer


class _Split:  # rouge-score's tokenizer interface: whitespace tokens, case kept, as ours
    def tokenize(self, text):
        return text.split()


def _pairs(seed: int, n: int = 30) -> tuple:
    "Protocol reports of simulated records with random word edits: near and far pairs."
    rng = np.random.default_rng(seed)
    words = vocabulary("compact")
    recs = simulate_set(n, seed=seed + 1)
    hyps, refs = [], []
    for r in recs:
        ref = completion_text(*protocol_report(r["measurements"])[:2]).split()
        hyp = list(ref)
        for _ in range(int(rng.integers(0, 12))):  # substitutions, deletions, insertions
            k, op = int(rng.integers(len(hyp))), rng.integers(3)
            if op == 0:
                hyp[k] = str(rng.choice(words))
            elif op == 1 and len(hyp) > 1:
                del hyp[k]
            else:
                hyp.insert(k, str(rng.choice(words)))
        hyps.append(" ".join(hyp))
        refs.append(" ".join(ref))
    return hyps, refs


def test_bleu4_matches_sacrebleu():
    seed = int(np.random.default_rng().integers(1 << 20))
    hyps, refs = _pairs(seed)
    want = sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", smooth_method="none").score / 100
    # the same counts, then one log and one exp each: agreement to rounding (1e-12 relative)
    assert bleu4(hyps, refs) == pytest.approx(want, rel=1e-12, abs=1e-15), f"seed {seed}"
    short = [" ".join(h.split()[:5]) for h in hyps]  # the brevity penalty acts
    want = sacrebleu.corpus_bleu(short, [refs], tokenize="none", smooth_method="none").score / 100
    assert bleu4(short, refs) == pytest.approx(want, rel=1e-12, abs=1e-15), f"seed {seed}"


def test_rouge_l_matches_rouge_score():
    seed = int(np.random.default_rng().integers(1 << 20))
    hyps, refs = _pairs(seed)
    sc = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Split())
    for h, r in zip(hyps, refs):
        want = sc.score(r, h)["rougeL"].fmeasure  # score(target, prediction)
        assert rouge_l(h, r) == pytest.approx(want, rel=1e-12), f"seed {seed}: {h!r} vs {r!r}"
    c = consistency(refs, hyps)  # image-only texts are the hypotheses
    assert c["bleu4"] == pytest.approx(bleu4(hyps, refs), rel=1e-15)


def test_bleu_and_rouge_by_hand_and_bad_input():
    assert bleu4(["a b c d"], ["a b c d"]) == 1.0 and bleu4(["a b c"], ["x y z"]) == 0.0
    assert bleu4(["a b c d e"], ["a b c d e f"]) == pytest.approx(math.exp(1 - 6 / 5))
    assert rouge_l("a b c d", "a x c d") == pytest.approx(0.75)  # LCS 3 of 4 and 4
    assert rouge_l("", "a") == 0.0
    with pytest.raises(ValueError, match="hypotheses"):
        bleu4(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="hypotheses"):
        bleu4("a b", ["a b"])
    with pytest.raises(ValueError, match="signal_texts"):
        consistency(["a"], ["a", "b"])


_M = dict(  # one record's exact measurements, written by hand
    hr_bpm=112.0,
    rhythm_regular=True,
    pr_ms=182.0,
    qrs_ms=98.0,
    morphology="normal",
    sv1rv6_mm=36.0,
    r_I_mm=8.0,
    r_aVL_mm=5.0,
    st_inferior_mm=0.2,
    qt_ms=330.0,
)  # QTc = 330 / sqrt(60 / 112) = 450.9 ms


def test_hallucinated_numbers_on_hand_made_reports():
    ok = "<think> **Step 1** rate 110 tachy sinus **Step 2** PR 180 QRS 100 normal </think>"
    assert stated_numbers(ok) == [("hr", 110.0), ("pr", 180.0), ("qrs", 100.0)]
    assert hallucinated_numbers(ok, _M) == (3, 0)
    # rate 20 bpm off, SV1+RV6 6 mm off, ST 1.3 mm off, QTc 451 -> 480 (29 ms off): 4 of 6
    bad = "**Step 1** rate 90 **Step 2** PR 190 QRS 110 **Step 3** SV1+RV6 30 LVH "
    bad += "**Step 4** ST 1.5 inferior STE **Step 5** QTc 480 long"
    assert hallucinated_numbers(bad, _M) == (6, 4)
    full = "heart rate 110 bpm , rate is tachy ; PR 180 ms and QRS 100 ms ; QTc 450 ms by Bazett "
    full += "against 440 ms ; PR above 200 ms or QRS above 120 ms"  # thresholds are no statement
    assert hallucinated_numbers(full, _M) == (4, 0)
    af = dict(_M, rhythm_regular=False, pr_ms=None)
    assert hallucinated_numbers("rate 110 AF PR none QRS 100", af) == (2, 0)
    assert hallucinated_numbers("rate 110 AF PR 160 QRS 100", af) == (3, 1)  # no P waves
    assert hallucination_rate([ok, bad], [_M, _M]) == pytest.approx(4 / 9)  # pooled: 3 + 6 stated
    assert math.isnan(hallucination_rate(["no numbers"], [_M]))


def test_the_protocols_own_reports_state_no_hallucinated_number():
    ms = [r["measurements"] for r in simulate_set(100, seed=11)]
    for style in ("compact", "full"):
        texts = [completion_text(*protocol_report(m, style)[:2]) for m in ms]
        assert hallucination_rate(texts, ms) == 0.0
        assert sum(hallucinated_numbers(t, m)[0] for t, m in zip(texts, ms)) >= 500


def test_answer_only_targets_are_the_answers_of_the_protocol_reports():
    tok = WordTokenizer(vocabulary("compact"))
    ms = [r["measurements"] for r in simulate_set(50, seed=12)]
    labels = [labels_from_measurements(m) for m in ms]
    ids = answer_only_targets(tok, labels)
    assert all(i[-1] == tok.eos_id for i in ids)
    full = [completion_text(*protocol_report(m)[:2]) for m in ms]
    assert [tok.decode(i) for i in ids] == [f.split("</think>")[1].strip() for f in full]
    assert math.isnan(hallucination_rate([tok.decode(i) for i in ids], ms))  # no number stated
    with pytest.raises(ValueError, match="labels"):
        answer_only_targets(tok, [])
    with pytest.raises(ValueError, match="non-empty tuple"):
        answer_only_targets(tok, ["sinus"])  # one str, not a tuple of labels


def test_colab_preset_runs_the_extra_arms():
    cfg = CONFIG.get("colab")
    assert cfg.colab_claims and cfg.style == "full" and CONFIG.get("cpu").colab_claims
    assert not CONFIG.get("ci").colab_claims
