"""The verdict drift alarm: the record of ci verdicts, flips against it, `make test`'s warning and
`make verdicts`' refusal of claims older than the code."""

import json
import sys
from pathlib import Path

import pytest

from icml26_lit.core.claims import load_claims, record_claim
from icml26_lit.core.verdicts import (
    ci_verdicts_path,
    flips_report,
    read_ci_verdicts,
    verdict_flips,
    verdict_map,
    write_ci_verdicts,
)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import pipeline  # noqa: E402


def _row(chapter, claim, verdict, scale="ci", direction_only=False):
    return dict(
        chapter=chapter, claim=claim, verdict=verdict, scale=scale, direction_only=direction_only
    )


RUN = [
    _row("02", "GeoPT beats the baseline", "holds"),
    _row("02", "Pre-training helps", "holds", direction_only=True),
    _row("06", "Flash matches the reference", "not decided"),
    _row("06", "Flash matches the reference", "holds", scale="cpu"),
]


def test_the_record_keeps_ci_rows_as_the_scoreboard_shows_them(tmp_path):
    rec = write_ci_verdicts(RUN, tmp_path / "v.json", commit="c0ffee")
    assert rec["verdicts"] == {
        "02": {
            "GeoPT beats the baseline": "holds",
            "Pre-training helps": "holds in direction only",
        },
        "06": {"Flash matches the reference": "not decided"},
    }
    assert read_ci_verdicts(tmp_path / "v.json") == rec
    raw = json.loads((tmp_path / "v.json").read_text())
    assert set(raw) == {"commit", "written", "verdicts"} and raw["commit"] == "c0ffee"
    assert read_ci_verdicts(tmp_path / "absent.json") is None
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a verdict record"):
        read_ci_verdicts(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="no ci claims"):
        write_ci_verdicts([_row("02", "x", "holds", scale="cpu")], tmp_path / "empty.json")
    assert not (tmp_path / "empty.json").exists()


def test_a_partial_run_keeps_the_other_chapters(tmp_path):
    old = write_ci_verdicts(RUN, tmp_path / "v.json")
    new = write_ci_verdicts([_row("06", "Other", "holds")], tmp_path / "v.json", keep=old)
    assert new["verdicts"] == {"02": old["verdicts"]["02"], "06": {"Other": "holds"}}


def test_flips_are_rows_in_both_with_another_verdict(tmp_path):
    rec = write_ci_verdicts(RUN, tmp_path / "v.json")
    now = [
        _row("02", "GeoPT beats the baseline", "not decided"),  # flipped
        _row("02", "Pre-training helps", "holds"),  # direction only -> holds: flipped
        _row("06", "Flash matches the reference", "not decided"),  # unchanged
        _row("06", "A new claim", "holds"),  # new: not a flip
        _row("02", "GeoPT beats the baseline", "holds", scale="cpu"),  # not a ci row
    ]
    flips = verdict_flips(now, rec)
    assert flips == [
        ("02", "GeoPT beats the baseline", "holds", "not decided"),
        ("02", "Pre-training helps", "holds in direction only", "holds"),
    ]
    assert verdict_flips(now, rec["verdicts"]) == flips
    assert verdict_flips(now, None) == [] and verdict_flips([], rec) == []
    text = flips_report(flips, rec)
    assert text.splitlines()[1] == (
        "  Chapter 02, row 'GeoPT beats the baseline': holds -> not decided"
    )
    assert "2 ci verdict(s) moved" in text
    assert flips_report([]) == "no ci verdict moved since the record was written"


def test_flips_of_claims_as_record_claim_writes_them(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path / "claims"))
    common = dict(
        higher_is_better=True,
        scale="ci",
        paper=None,
        paper_source="qualitative",
        fails_if="ours is not above the reference",
        test="exact",
        why_exact="deterministic",
        why_no_floor="a demonstration row",
    )
    record_claim("42", "ours beats 1", ours=[2.0], reference=1.0, **common)
    rec = write_ci_verdicts(load_claims("42"), tmp_path / "v.json")
    assert rec["verdicts"] == {"42": {"ours beats 1": "holds"}}
    record_claim("42", "ours beats 1", ours=[0.5], reference=1.0, **common)
    assert verdict_flips(load_claims("42"), rec) == [
        ("42", "ours beats 1", "holds", "does not hold")
    ]


def test_the_record_is_found_through_results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_RESULTS_DIR", str(tmp_path))
    assert ci_verdicts_path() == tmp_path / "ci_verdicts.json"
    assert read_ci_verdicts() is None
    write_ci_verdicts(RUN, ci_verdicts_path())
    assert read_ci_verdicts()["verdicts"]["06"] == {"Flash matches the reference": "not decided"}


# --- make test's warning and make verdicts ----------------------------------------------------


def _claims_dir(tmp_path, rows) -> Path:
    d = tmp_path / "claims"
    d.mkdir()
    for i, r in enumerate(rows):
        c = dict(r, fails_if="x", metric="", ours=[1.0], baseline=None, reference=1.0)
        c.update(higher_is_better=True, paper=None, paper_source="", test="exact", reason="")
        (d / f"{r['chapter']}--{i}.json").write_text(json.dumps(c))
    return d


@pytest.fixture
def book(tmp_path, monkeypatch):
    "A results folder with a record, and a claims folder of a later ci run of chapters 02 and 06."
    monkeypatch.setenv("ICML26_RESULTS_DIR", str(tmp_path / "results"))
    (tmp_path / "results").mkdir()
    write_ci_verdicts(RUN, tmp_path / "results" / "ci_verdicts.json", commit="c0ffee")
    later = [_row("02", "GeoPT beats the baseline", "not decided"), _row("06", "New", "holds")]
    monkeypatch.setattr(pipeline, "CLAIMS", _claims_dir(tmp_path, later))
    monkeypatch.setattr(pipeline, "_ran", lambda chapters: {"02", "06"})
    return tmp_path


def test_make_test_prints_each_flip_by_chapter_and_row(book, capsys):
    pipeline.verdict_drift(None)
    out = capsys.readouterr().out
    assert "WARNING, verdict drift: 1 ci verdict(s) moved" in out
    assert "Chapter 02, row 'GeoPT beats the baseline': holds -> not decided" in out
    assert "1 ci row(s) not in the record" in out and "Chapter 06, row 'New'" in out


def test_the_drift_check_never_fails_the_build(book, monkeypatch, capsys):
    (book / "results" / "ci_verdicts.json").write_text("not json")
    pipeline.verdict_drift(None)
    assert "verdict drift: not checked (JSONDecodeError" in capsys.readouterr().out
    monkeypatch.setattr(pipeline, "execute", lambda chapters: 0)
    assert pipeline.papermill_stage(None) == 0


def test_make_verdicts_refuses_claims_older_than_the_code(book, monkeypatch, capsys):
    monkeypatch.setattr(pipeline, "stale_chapters", lambda chs: ["06 (nbs/06_x/a.ipynb ...)"])
    assert pipeline.write_verdicts(None) == 1
    assert "older than the code" in capsys.readouterr().out
    assert read_ci_verdicts()["commit"] == "c0ffee"  # untouched
    monkeypatch.setattr(pipeline, "stale_chapters", lambda chs: [])
    assert pipeline.write_verdicts(None) == 0
    rec = read_ci_verdicts()
    assert rec["verdicts"] == {
        "02": {"GeoPT beats the baseline": "not decided"},
        "06": {"New": "holds"},
    }
    out = capsys.readouterr().out
    assert "holds -> not decided" in out and "2 rows" in out


def test_stale_chapters_compares_the_executed_copies_with_the_tree(tmp_path, monkeypatch):
    nbs = tmp_path / "nbs" / "42_demo"
    nbs.mkdir(parents=True)
    nb = nbs / "01_a.ipynb"
    nb.write_text("{}")
    monkeypatch.setattr(pipeline, "chapter_dirs", lambda chapters: [nbs])
    monkeypatch.setattr(pipeline, "ROOT", tmp_path)
    monkeypatch.setattr(pipeline.execute_mod, "package_sha", lambda: "pkg")
    done = tmp_path / "exec.ipynb"
    monkeypatch.setattr(pipeline, "exec_path", lambda p: done)
    assert pipeline.stale_chapters({"42"}) == [
        "42 (nbs/42_demo/01_a.ipynb ran other code, or did not run)"
    ]
    meta = dict(package_sha="pkg", source_sha=pipeline.sha(nb))
    done.write_text(json.dumps(dict(metadata=dict(icml26=meta))))
    assert pipeline.stale_chapters({"42"}) == [] and pipeline.stale_chapters({"43"}) == []
    nb.write_text('{"changed": 1}')
    assert len(pipeline.stale_chapters({"42"})) == 1


def test_verdict_map_reads_claim_objects_too(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    record_claim(
        "42",
        "a row",
        ours=[2.0],
        reference=1.0,
        higher_is_better=True,
        scale="cpu",
        paper=None,
        paper_source="qualitative",
        fails_if="not above",
        test="exact",
        why_exact="deterministic",
        why_no_floor="a demonstration row",
    )
    assert verdict_map(load_claims("42")) == {}  # a cpu row is not recorded
