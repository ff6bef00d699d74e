import json

import pytest

from icml26_lit.core import decide, record_claim, load_claims, claims_table


def test_decide_exact_and_noisy():
    assert decide(2.0, 1.0, True) == "holds"
    assert decide(1.0, 1.0, True) == "does not hold"  # a tie is not a win
    assert decide(1.0, 2.0, False) == "holds"
    assert decide(1.05, 1.0, True, spread=(0.1, 0.1), n_seeds=3) == "not decided"
    assert decide(0.5, 1.0, True, spread=(0.01, 0.01), n_seeds=3) == "does not hold"
    assert decide(1.5, 1.0, True, n_seeds=1) == "not decided"
    assert decide(1.5, 1.0, True, margin=0.6) == "does not hold"


def test_decide_se_boundary():
    # se = sqrt((0.1^2 + 0.1^2)/2) = 0.1 ; holds iff delta > 0.2
    assert decide(1.21, 1.0, True, spread=0.1, n_seeds=2) == "holds"
    assert decide(1.19, 1.0, True, spread=0.1, n_seeds=2) == "not decided"


def test_decide_rejects_bad_numbers():
    with pytest.raises(ValueError, match="ours must be a finite number"):
        decide(float("nan"), 1.0, True)
    with pytest.raises(ValueError, match="n_seeds="):
        decide(1.0, 0.5, True, spread=0.1)


def test_record_claim_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    c = record_claim("42", "Ours is faster", ours=3.0, baseline=1.0, higher_is_better=True, scale="ci",
                     paper=6.5, paper_source="Table 1", metric="speed-up")
    assert c.verdict == "holds"
    stored = json.loads(next(tmp_path.glob("42--*.json")).read_text())
    assert stored["verdict"] == "holds" and stored["paper"] == 6.5
    assert [x.claim for x in load_claims("42")] == ["Ours is faster"]
    assert "Ours is faster" in claims_table("42")._repr_html_()
    assert "| Ours is faster |" in claims_table("42")._repr_markdown_()


def test_record_claim_validation(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    kw = dict(ours=1.0, baseline=0.0, higher_is_better=True, scale="ci")
    with pytest.raises(ValueError, match="paper=None needs a qualitative"):
        record_claim("01", "x", paper=None, paper_source="Table 3", **kw)
    with pytest.raises(ValueError, match="chapter must be a two-digit"):
        record_claim("1", "x", paper=1.0, paper_source="Table 3", **kw)
    with pytest.raises(ValueError, match="scale="):
        record_claim("01", "x", paper=1.0, paper_source="Table 3", **{**kw, "scale": "big"})
    assert not list(tmp_path.glob("*.json"))
