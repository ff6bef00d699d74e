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


def test_baseline_at_its_floor_is_not_evidence():
    ours = [0.90, 0.92, 0.88, 0.91]
    at_chance = [0.50, 0.52, 0.48, 0.51]
    d = decide(ours, at_chance, higher_is_better=True, floor=0.5)
    assert d.verdict == "not decided" and "floor" in d.reason
    assert (
        decide(ours, [0.70, 0.72, 0.69, 0.71], higher_is_better=True, floor=0.5).verdict == "holds"
    )
    assert decide(ours, at_chance, higher_is_better=True).verdict == "holds"  # without the floor


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
    (dict(floor=0.5, baseline=None, reference=0.3), ValueError, "floor= applies to a baseline"),
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
