"""The verdict machinery against textbook cases computed independently (scipy, and by hand)."""

import json
import math
import subprocess

import numpy as np
import pytest
from scipy import stats

from icml26_lit.core import claims_table, decide, load_claims, record_claim
from icml26_lit.core.claims import direction_only, magnitude, scoreboard_counts, scoreboard_rows

# p-values are compared with scipy's own at rel 1e-9: both evaluate the same t distribution tail
# from the same float64 statistic, which agrees to ~1e-15; the t cdf itself is accurate to ~1e-12.
P_REL = 1e-9


def test_hand_worked_welch():
    # ours [3, 4, 5]: mean 4, var 1; baseline [1, 2, 3, 4, 5]: mean 3, var 2.5
    # se^2 = 1/3 + 2.5/5 = 5/6; t = 1/sqrt(5/6) = 1.0954451; df = (5/6)^2 / (17/144) = 100/17
    d = decide([3, 4, 5], [1, 2, 3, 4, 5], higher_is_better=True)
    assert d.statistic == pytest.approx(1 / math.sqrt(5 / 6), rel=1e-12)
    assert d.df == pytest.approx(100 / 17, rel=1e-12)
    assert d.p_value == pytest.approx(stats.t.sf(1 / math.sqrt(5 / 6), 100 / 17), rel=P_REL)
    assert d.verdict == "not decided"  # p ~ 0.16
    lo, hi = d.ci_low, d.ci_high
    q = stats.t.ppf(0.95, 100 / 17)
    assert lo == pytest.approx(1 - q * math.sqrt(5 / 6), rel=1e-9)
    assert hi == pytest.approx(1 + q * math.sqrt(5 / 6), rel=1e-9)


def test_matches_scipy_welch_and_paired():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.3, 6), rng.normal(0.6, 0.5, 6)
    d = decide(a, b, higher_is_better=True)
    r = stats.ttest_ind(a, b, equal_var=False, alternative="greater")
    assert d.p_value == pytest.approx(r.pvalue, rel=P_REL) and d.statistic == pytest.approx(
        r.statistic
    )
    d = decide(a, b, higher_is_better=False, test="paired")
    r = stats.ttest_rel(a, b, alternative="less")  # lower is better: "ours better" is a < b
    assert d.p_value == pytest.approx(r.pvalue, rel=P_REL)


def test_two_seeds_do_not_decide_five_do():
    d = decide([1.0, 1.2], [0.8, 0.9], higher_is_better=True)  # gap/SE = 2.24
    assert d.statistic == pytest.approx(2.236, abs=1e-3) and d.verdict == "not decided"
    d = decide([1.0, 1.1, 1.05, 0.98, 1.02], [0.5, 0.55, 0.6, 0.52, 0.48], higher_is_better=True)
    assert d.verdict == "holds" and d.df == pytest.approx(8.0)
    d = decide([0.5, 0.4, 0.45], [1.0, 1.1, 1.05], higher_is_better=True)
    assert d.verdict == "does not hold"


def test_paired_decides_where_unpaired_cannot():
    base = np.array([1.0, 2.0, 3.0, 4.0, 5.0])  # seeds differ a lot in difficulty
    ours = base + np.array([0.10, 0.12, 0.09, 0.11, 0.10])
    assert decide(ours, base, higher_is_better=True).verdict == "not decided"
    assert decide(ours, base, higher_is_better=True, test="paired").verdict == "holds"


def test_non_inferiority_at_the_margin():
    base = np.array([1.0, 2.0, 3.0, 4.0])
    ours = base + np.array([-0.021, -0.019, -0.020, -0.020])  # 0.02 worse, very consistently
    kw = dict(higher_is_better=True, test="paired")
    assert decide(ours, base, **kw).verdict == "does not hold"
    assert decide(ours, base, margin=0.05, **kw).verdict == "holds"
    assert decide(ours, base, margin=0.01, **kw).verdict == "does not hold"
    assert decide(ours, base, margin=0.02, **kw).verdict == "not decided"  # at the edge
    # Welch shifts by the margin the same way: scipy on the shifted sample
    d = decide(ours, base, margin=0.05, higher_is_better=True)
    r = stats.ttest_ind(ours + 0.05, base, equal_var=False, alternative="greater")
    assert d.p_value == pytest.approx(r.pvalue, rel=P_REL)


def test_one_sample_against_a_reference():
    x = [0.52, 0.55, 0.49, 0.58, 0.53]
    d = decide(x, reference=0.5, higher_is_better=True)
    r = stats.ttest_1samp(x, 0.5, alternative="greater")
    assert d.p_value == pytest.approx(r.pvalue, rel=P_REL) and d.verdict == "holds"
    assert d.n_baseline == 1 and d.estimate == pytest.approx(np.mean(x) - 0.5)
    assert decide(x, reference=0.6, higher_is_better=True).verdict == "does not hold"
    assert decide([0.5], reference=0.4, higher_is_better=True).verdict == "not decided"


def test_equivalence_holds_fails_and_cannot_decide():
    kw = dict(reference=0.0, higher_is_better=False, test="tolerance", tolerance=0.1)
    d = decide([0.01, -0.01, 0.02, 0.0, 0.005], **kw)
    assert d.verdict == "holds" and -0.1 <= d.ci_low and d.ci_high <= 0.1
    q = stats.t.ppf(0.975, 4)  # the (1 - alpha) two-sided interval
    x = np.array([0.01, -0.01, 0.02, 0.0, 0.005])
    assert d.ci_high == pytest.approx(x.mean() + q * x.std(ddof=1) / math.sqrt(5), rel=1e-9)
    assert decide([0.5, 0.52, 0.49, 0.51], **kw).verdict == "does not hold"
    assert decide([0.0, 0.2], **kw).verdict == "not decided"
    # single deterministic values: the comparison itself
    assert (
        decide(
            1e-14, baseline=0.0, higher_is_better=False, test="tolerance", tolerance=1e-12
        ).verdict
        == "holds"
    )
    assert (
        decide(
            1e-3, baseline=0.0, higher_is_better=False, test="tolerance", tolerance=1e-12
        ).verdict
        == "does not hold"
    )


def test_floors_on_both_sides():
    ours = [0.90, 0.92, 0.88, 0.91]
    at_chance = [0.50, 0.52, 0.48, 0.51]
    # ours above, the baseline at its floor: decided, and the reason says the baseline is there
    d = decide(ours, at_chance, higher_is_better=True, floor=0.5)
    assert d.verdict == "holds" and "at its floor 0.5" in d.reason
    assert (
        decide(ours, [0.70, 0.72, 0.69, 0.71], higher_is_better=True, floor=0.5).verdict == "holds"
    )
    # ours at the floor, the baseline above: does not hold
    d = decide(at_chance, ours, higher_is_better=True, floor=0.5)
    assert d.verdict == "does not hold" and "not above the floor" in d.reason
    # both at the floor: not decided, whatever the gap between them
    d = decide([0.5, 0.49, 0.51, 0.5], [0.45, 0.44, 0.46, 0.45], higher_is_better=True, floor=0.5)
    assert d.verdict == "not decided" and d.reason.startswith("both at the floor 0.5")


def test_non_inferiority_with_ours_at_the_floor_does_not_hold():
    # RMSE: climatology 0.985; ours at climatology, the baseline a little better, a wide margin:
    # without the floor this row holds "within the margin"; with it, it must not
    ours, base = [0.98, 0.99, 0.985, 0.987], [0.97, 0.975, 0.98, 0.978]
    kw = dict(higher_is_better=False, margin=0.05, test="paired")
    assert decide(ours, base, **kw).verdict == "holds"
    d = decide(ours, base, floor=0.985, **kw)
    assert d.verdict == "does not hold" and "not above the floor" in d.reason


def test_per_seed_floors_and_floors_against_a_reference():
    # each seed has its own climatology; ours clears it on every seed by a consistent gap
    f = [0.9, 1.4, 0.6, 1.1]
    ours = [x - 0.1 for x in f]
    base = [x - 0.05 for x in f]
    d = decide(ours, base, higher_is_better=False, test="paired", floor=f)
    assert d.verdict == "holds" and "floor" not in d.reason
    # against one mean floor the per-seed spread would hide the same skill
    d1 = decide(ours, base, higher_is_better=False, test="paired", floor=float(np.mean(f)))
    assert d1.verdict == "not decided"
    assert decide([0.4, 0.42, 0.41], reference=0.5, higher_is_better=False, floor=0.45).verdict == (
        "holds"
    )
    assert decide([0.5, 0.49, 0.51], reference=0.3, higher_is_better=False, floor=0.45).verdict == (
        "does not hold"
    )
    with pytest.raises(ValueError, match="one value per unit"):
        decide(ours, base, higher_is_better=False, floor=[0.1, 0.2])


def test_sign_test_matches_binomtest_and_refuses_t_tests_on_0_1():
    ours = [1, 1, 1, 0, 1, 0, 1, 1]
    pg = [0, 0, 0, 0, 1, 0, 1, 1]  # 3 discordant pairs, all ours
    d = decide(ours, pg, higher_is_better=True, test="sign")
    assert d.verdict == "not decided" and d.p_value == pytest.approx(0.125, rel=1e-12)
    assert d.p_value == pytest.approx(stats.binomtest(3, 3, 0.5, alternative="greater").pvalue)
    for k in range(1, 9):  # k discordant pairs all one way decide exactly from k = 5 on
        v = decide([1] * k, [0] * k, higher_is_better=True, test="sign").verdict
        assert v == ("holds" if k >= 5 else "not decided"), (k, v)
    assert decide([0] * 6, [1] * 6, higher_is_better=True, test="sign").verdict == "does not hold"
    # lower is better (failures counted as 1): the direction flips
    assert decide([0] * 6, [1] * 6, higher_is_better=False, test="sign").verdict == "holds"
    for t in ("paired", "welch"):
        with pytest.raises(ValueError, match="use test='sign'"):
            decide(ours, pg, higher_is_better=True, test=t)
    with pytest.raises(ValueError, match="why_no_floor"):
        decide(ours, pg, higher_is_better=True, test="sign", floor=0.0)
    d = decide([1] * 9 + [0], reference=0.5, higher_is_better=True, test="sign")
    assert d.p_value == pytest.approx(stats.binomtest(9, 10, 0.5, alternative="greater").pvalue)


def test_wilcoxon_matches_scipy_and_resists_one_diverged_seed():
    ours = np.array([0.07, 0.09, 0.12, 0.08, 0.10])
    node = np.array([0.15, 0.16, 0.17, 0.14, 4.22])  # the baseline diverged on one seed
    assert decide(ours, node, higher_is_better=False, test="paired").verdict == "not decided"
    d = decide(ours, node, higher_is_better=False, test="wilcoxon")
    r = stats.wilcoxon(node - ours, alternative="greater")
    assert d.verdict == "holds" and d.p_value == pytest.approx(r.pvalue, rel=P_REL)
    # the same diverged value on our side: ranks say not decided, never "holds"
    d = decide(
        np.r_[ours[:4], 4.22], np.r_[node[:4], 0.15], higher_is_better=False, test="wilcoxon"
    )
    assert d.verdict == "not decided"


def test_rounding_level_spread_gets_no_p_value():
    ratio = [4.0, 4.0 + 1.9e-15, 4.0, 4.0 - 1.9e-15, 4.0]
    d = decide(ratio, reference=2.5, higher_is_better=True)
    assert d.test == "exact" and d.p_value is None and d.verdict == "holds"
    assert "decided as an exact comparison" in d.reason
    d = decide(ratio, [2.5 + 1e-15, 2.5, 2.5, 2.5, 2.5 - 1e-15], higher_is_better=True)
    assert d.test == "exact" and d.verdict == "holds"
    # identical up to rounding is a tie, and a tie is no win
    d = decide(ratio, [4.0] * 5, higher_is_better=True, test="paired")
    assert d.test == "exact" and d.verdict == "does not hold" and "up to rounding" in d.reason
    # a real spread is still tested
    assert decide([4.0, 4.1, 3.9], reference=2.5, higher_is_better=True).p_value is not None


@pytest.mark.parametrize(
    "ours,base,margin,test,verdict,words",
    [
        (
            [1.0, 1.1, 1.05, 1.02],
            [0.5, 0.55, 0.6, 0.52],
            0.0,
            "welch",
            "holds",
            "ours better than the baseline by",
        ),
        (
            [0.5, 0.55, 0.6, 0.52],
            [1.0, 1.1, 1.05, 1.02],
            0.0,
            "welch",
            "does not hold",
            "ours worse than the baseline by",
        ),
        (
            [0.9988, 0.9989, 0.9987, 0.9988],
            [1.0, 1.0001, 0.9999, 1.0],
            0.02,
            "paired",
            "holds",
            "ours worse than the baseline by 0.0012, within the margin 0.02",
        ),
        (
            [1.01, 1.011, 1.009, 1.01],
            [1.0, 1.0001, 0.9999, 1.0],
            0.02,
            "paired",
            "holds",
            "ours better than the baseline by 0.01 (non-inferiority margin 0.02)",
        ),
        (
            [0.9, 0.91, 0.89, 0.9],
            [1.0, 1.0001, 0.9999, 1.0],
            0.02,
            "paired",
            "does not hold",
            "ours worse than the baseline by 0.1, beyond the margin 0.02",
        ),
        (
            [1.01, 1.02, 1.0, 1.01],
            [1.0, 1.0, 1.0, 1.0],
            0.0,
            "tolerance",
            "holds",
            "ours above the baseline by 0.01",
        ),
        (
            [0.99, 0.98, 1.0, 0.99],
            [1.0, 1.0, 1.0, 1.0],
            0.0,
            "tolerance",
            "holds",
            "ours below the baseline by 0.01",
        ),
    ],
)
def test_every_reason_states_the_direction(ours, base, margin, test, verdict, words):
    kw = dict(tolerance=0.05) if test == "tolerance" else dict(margin=margin)
    d = decide(ours, base, higher_is_better=True, test=test, **kw)
    assert d.verdict == verdict and words in d.reason, d
    assert ("better" in d.reason) != ("worse" in d.reason) or test == "tolerance"


def test_failed_calibration_is_never_a_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(
        higher_is_better=True,
        scale="ci",
        paper=None,
        paper_source="abstract (no number)",
        fails_if="the baseline wins",
        why_no_floor="a demonstration",
    )
    for o, b in (([2, 2.1, 2.2], [1, 1.1, 1.3]), ([1, 1.1, 1.3], [2, 2.1, 2.2])):
        c = record_claim(
            "00",
            f"row {o[0]}",
            ours=o,
            baseline=b,
            calibrated=False,
            calibration="band [0.15, 0.6] missed: 0.89",
            **kw,
        )
        assert c.verdict == "not decided" and c.reason.startswith("calibration failed (band")
    with pytest.raises(ValueError, match="calibration must be a non-empty"):
        record_claim("00", "z", ours=[1, 2], baseline=[0, 1], calibrated=False, **kw)
    with pytest.raises(ValueError, match="only with calibrated=False"):
        record_claim("00", "z", ours=[1, 2], baseline=[0, 1], calibration="x", **kw)


def test_one_headline_per_chapter_and_scale(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(
        ours=[2, 2.1, 2.2],
        baseline=[1, 1.1, 1.3],
        higher_is_better=True,
        paper=None,
        paper_source="abstract (no number)",
        fails_if="the baseline wins",
        why_no_floor="toy",
    )
    record_claim("05", "the headline", headline=True, scale="ci", **kw)
    record_claim("05", "the headline", headline=True, scale="ci", **kw)  # re-recording is fine
    record_claim("05", "another headline", headline=True, scale="cpu", **kw)  # another scale
    record_claim("06", "another chapter", headline=True, scale="ci", **kw)
    with pytest.raises(ValueError, match="already has a headline at scale ci"):
        record_claim("05", "a second headline", headline=True, scale="ci", **kw)
    assert [c.claim for c in load_claims("05") if c.headline and c.scale == "ci"] == [
        "the headline"
    ]


def test_a_row_needs_a_floor_or_the_reason_it_has_none(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(
        ours=[2, 2.1],
        baseline=[1, 1.1],
        higher_is_better=True,
        scale="ci",
        paper=None,
        paper_source="abstract (no number)",
        fails_if="the baseline wins",
    )
    with pytest.raises(ValueError, match="give floor= .* or why_no_floor="):
        record_claim("00", "x", **kw)
    with pytest.raises(ValueError, match="not both"):
        record_claim("00", "x", floor=0.5, why_no_floor="none", **kw)
    assert not list(tmp_path.iterdir())
    assert record_claim("00", "x", floor=0.5, **kw).floor == 0.5


def test_curves_round_trip(tmp_path, monkeypatch):
    from icml26_lit.core.claims import load_curves, record_curve

    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    c = record_curve(
        "07",
        "DKMP",
        [0, 10, 20],
        [1.0, 0.5, 0.3],
        metric="MAE",
        seed=3,
        scale="ci",
        higher_is_better=False,
        floor=0.9,
    )
    assert load_curves("07") == [c] and load_curves("08") == []
    for bad, msg in (
        (dict(steps=[0, 0, 1]), "increase"),
        (dict(values=[1.0, 2.0]), "equal"),
        (dict(seed=1.5), "seed"),
        (dict(values=[1, float("nan"), 2]), "NaN"),
    ):
        args = dict(steps=[0, 10, 20], values=[1.0, 0.5, 0.3], seed=0) | bad
        with pytest.raises((ValueError, TypeError), match=msg):
            record_curve(
                "07",
                "DKMP",
                args["steps"],
                args["values"],
                metric="MAE",
                seed=args["seed"],
                scale="ci",
            )


@pytest.mark.parametrize(
    "effect,hib,o,b,want",
    [
        ("ratio", False, 1.0, 73.0, 73.0),
        ("ratio", True, 0.9, 0.6, 1.5),
        ("reduction", False, 0.25, 1.0, 0.75),
        ("reduction", True, 0.8, 0.6, 0.25),
        ("percent_reduction", False, 0.25, 1.0, 75.0),
        (None, True, 0.3, 0.2, 0.3),
    ],
)
def test_effect_kinds(effect, hib, o, b, want):
    assert magnitude(o, b, hib, effect) == pytest.approx(want)


def test_direction_only(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(
        higher_is_better=False,
        scale="ci",
        paper=73.0,
        paper_source="Table 4",
        effect="ratio",
        test="paired",
        fails_if="ours uses more energy",
        why_no_floor="energy has no trivial predictor",
    )
    c = record_claim("13", "less energy", ours=[1.0, 1.1, 0.9], baseline=[3.4, 3.5, 3.3], **kw)
    assert (
        c.verdict == "holds" and c.direction_only and c.shown_verdict == "holds in direction only"
    )
    assert c.magnitude == pytest.approx(3.4)
    c = record_claim("13", "less energy 2", ours=[1.0, 1.1, 0.9], baseline=[50, 55, 52], **kw)
    assert not c.direction_only and c.shown_verdict == "holds"
    c = record_claim(
        "13",
        "other metric",
        ours=[1.0, 1.1, 0.9],
        baseline=[3.4, 3.5, 3.3],
        paper_metric="synaptic operations, not our op counts",
        **kw,
    )
    assert c.magnitude is None and not c.direction_only
    assert direction_only(-1.0, 2.0) and not direction_only(1.5, 2.0)


def test_exact_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(
        higher_is_better=False,
        scale="ci",
        paper=None,
        paper_source="abstract (no number)",
        test="exact",
        fails_if="the flash path saves as much as the plain one",
        why_no_floor="bytes have no trivial predictor",
    )
    c = record_claim(
        "06", "less memory", ours=0.56, baseline=2.34, why_exact="bytes are counted", **kw
    )
    assert c.verdict == "holds" and c.test == "exact"
    assert decide(2.0, 2.0, higher_is_better=True, test="exact").verdict == "does not hold"
    with pytest.raises(ValueError, match="why_exact"):
        record_claim("06", "less memory", ours=0.56, baseline=2.34, **kw)
    with pytest.raises(ValueError, match="test='exact' takes one"):
        record_claim("06", "less memory", ours=[0.5, 0.6], baseline=2.34, why_exact="x", **kw)


def test_round_trip_and_table(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    c = record_claim(
        "42",
        "Ours is faster",
        ours=[3.0, 3.2, 2.9],
        baseline=[1.0, 1.1, 0.9],
        higher_is_better=True,
        scale="ci",
        paper=6.5,
        paper_source="Table 1",
        metric="speed-up",
        effect="ratio",
        fails_if="the baseline is as fast",
        test="paired",
        why_no_floor="a speed-up has no trivial predictor",
    )
    stored = json.loads(next(tmp_path.glob("42--*.json")).read_text())
    assert stored["ours"] == [3.0, 3.2, 2.9] and stored["test"] == "paired"
    assert (
        stored["df"] == 2 and 0 < stored["p_value"] < 0.05 and stored["ci_low"] < stored["ci_high"]
    )
    assert (
        stored["fails_if"] == "the baseline is as fast"
        and stored["verdict"] == c.verdict == "holds"
    )
    [back] = load_claims("42")
    assert back == c
    md = claims_table("42")._repr_markdown_()
    assert "| Ours is faster |" in md and "paired; p = " in md and "/ 6.5 (ratio)" in md


def test_scoreboard_counts(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path / "claims"))
    kw = dict(
        higher_is_better=True,
        scale="ci",
        paper=None,
        paper_source="abstract (no number)",
        fails_if="the baseline wins",
        test="paired",
        why_no_floor="a demonstration",
    )
    record_claim("00", "a", ours=[2, 2.1, 2.2], baseline=[1, 1.1, 1.3], **kw)
    record_claim("00", "b", ours=[1, 1.1, 1.3], baseline=[2, 2.1, 2.2], **kw)
    (tmp_path / "nbs" / "00_demo").mkdir(parents=True)
    (tmp_path / "nbs" / "00_demo" / "01_a.ipynb").write_text("{}")
    chs = [dict(number="00", title="Demo", part="0", claim="c", folder="00_demo")]
    rows = scoreboard_rows(chs, load_claims(), tmp_path / "results", tmp_path / "nbs")
    assert scoreboard_counts(rows)["00"] == {
        "holds": 1,
        "holds in direction only": 0,
        "does not hold": 1,
        "not decided": 0,
    }
    assert "paired; p = " in rows[0]["details"]


BAD = [
    (dict(ours=[1.0, float("nan")]), ValueError, "ours holds NaN"),
    (dict(baseline=[1.0, float("inf")]), ValueError, "baseline holds NaN or inf"),
    (dict(test="paired", baseline=[1.0, 2.0, 3.0]), ValueError, "equal lengths"),
    (dict(alpha=0.0), ValueError, "alpha must lie in"),
    (dict(alpha=0.6), ValueError, "alpha must lie in"),
    (dict(margin=-0.1), ValueError, "margin must be >= 0"),
    (dict(test="tolerance", tolerance=-1.0), ValueError, "tolerance must be >= 0"),
    (dict(test="tolerance"), ValueError, "needs tolerance="),
    (dict(tolerance=0.1), ValueError, "only for test='tolerance'"),
    (dict(test="exact", why_exact="counted"), ValueError, "test='exact' takes one"),
    (dict(reference=0.5), ValueError, "not both"),
    (dict(baseline=None), ValueError, "give baseline="),
    (dict(test="bayes"), ValueError, "test='bayes' is not a known test"),
    (dict(effect="speedup"), ValueError, "effect='speedup' is not known"),
    (dict(fails_if=None), ValueError, "fails_if must be a non-empty"),
    (dict(fails_if="  "), ValueError, "fails_if must be a non-empty"),
    (dict(ours="0.5"), TypeError, "ours must be a number or a sequence"),
    (dict(higher_is_better="yes"), TypeError, "higher_is_better"),
    (dict(chapter="1"), ValueError, "chapter must be a two-digit"),
    (dict(scale="laptop"), ValueError, "scale='laptop'"),
    (dict(paper=None, paper_source="Table 3"), ValueError, "paper=None needs a qualitative"),
    (dict(floor=[0.5, 0.4, 0.3], why_no_floor=None), ValueError, "one value per unit"),
    (dict(floor=0.5, why_no_floor="x"), ValueError, "not both"),
    (dict(why_no_floor=None), ValueError, "why_no_floor="),
    (dict(headline="yes"), TypeError, "headline must be True or False"),
]


@pytest.mark.parametrize("change,err,msg", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_input_names_the_argument_and_writes_nothing(tmp_path, monkeypatch, change, err, msg):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(
        chapter="01",
        claim="x",
        ours=[1.0, 1.1],
        baseline=[0.5, 0.6],
        higher_is_better=True,
        scale="ci",
        paper=1.0,
        paper_source="Table 3",
        fails_if="the baseline wins",
        why_no_floor="a test of the argument checks",
    )
    kw.update(change)
    chapter, claim = kw.pop("chapter"), kw.pop("claim")
    with pytest.raises(err, match=msg.replace("(", r"\(").replace("[", r"\[")):
        record_claim(chapter, claim, **kw)
    assert not list(tmp_path.iterdir())


def test_results_file_is_stale_once_the_experiments_change_after_it(tmp_path):
    from icml26_lit.core.claims import results_stale

    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    exp = tmp_path / "icml26_lit" / "demo" / "experiments.py"
    res = tmp_path / "results" / "demo" / "cpu.json"
    exp.parent.mkdir(parents=True)
    res.parent.mkdir(parents=True)
    exp.write_text("x = 1\n")
    res.write_text("{}")
    assert results_stale(res, "demo", tmp_path) is None  # no repository yet
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    assert results_stale(res, "demo", tmp_path) is None  # not committed: nothing to compare
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "code and results")
    assert results_stale(res, "demo", tmp_path) is False  # written with the code it ran
    (tmp_path / "README").write_text("other change")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "unrelated")
    assert results_stale(res, "demo", tmp_path) is False
    exp.write_text("x = (1)  # reformatted, with a comment\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "format")
    assert results_stale(res, "demo", tmp_path) is False  # the same syntax tree
    exp.write_text("x = 2\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "new experiments")
    assert results_stale(res, "demo", tmp_path) is True


def test_wilcoxon_floor_says_when_too_few_seeds_can_clear_it():
    # four seeds all better than the floor: the signed-rank test's least one-sided p is 1/16
    d = decide(
        [1.0, 1.1, 1.2, 1.3],
        [3, 3.1, 3.2, 3.4],
        higher_is_better=False,
        test="wilcoxon",
        floor=[2.0] * 4,
    )
    assert d.verdict == "not decided"
    assert "on 4 seeds the signed-rank test cannot reach 0.05" in d.reason
    five = decide(
        [1.0, 1.1, 1.2, 1.3, 1.4],
        [3, 3.1, 3.2, 3.4, 3.5],
        higher_is_better=False,
        test="wilcoxon",
        floor=[2.0] * 5,
    )
    assert "cannot reach" not in five.reason  # 1/32 < 0.05: five seeds can clear it
