"The measured time of each scale, as every chapter overview shows it (Platform F, item 4)."

import json
import pathlib
import re

import pytest

from icml26_lit.core import claims, scale_times

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _write(d, slug, scale, **res):
    (d / slug).mkdir(parents=True, exist_ok=True)
    (d / slug / f"{scale}.json").write_text(json.dumps(res))


def test_times_come_from_the_results_files(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_RESULTS_DIR", str(tmp_path))
    prov = dict(device_name="x86_64", date="2026-12-05T10:00:00", commit="abcdef0123")
    _write(tmp_path, "demo", "cpu", wall_s=830.2, cpu_s=582.0, provenance=prov)
    card = dict(device_name="Tesla T4", date="2026-12-07T10:00:00", commit="0123456789")
    _write(tmp_path, "demo", "colab", wall_s=901.0, provenance=card)
    rows = {r[0]: r[1:] for r in scale_times("demo").rows}
    assert rows["cpu"] == ("wall 830 s; CPU 582 s", "x86_64, 2026-12-05, commit abcdef0")
    assert rows["colab"] == ("wall 901 s", "Tesla T4, 2026-12-07, commit 0123456")
    assert rows["full"] == ("not yet measured on a card", "")
    assert "budget" in rows["ci"][1]
    md = scale_times("demo")._repr_markdown_()
    assert "| `colab` | wall 901 s | Tesla T4" in md
    assert "<td>Tesla T4, 2026-12-07, commit 0123456</td>" in scale_times("demo")._repr_html_()


def test_a_card_run_without_a_whole_run_time_still_names_the_card(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_RESULTS_DIR", str(tmp_path))
    _write(tmp_path, "demo", "full", wall_s=None, provenance=dict(device_name="NVIDIA H200"))
    rows = {r[0]: r[1:] for r in scale_times("demo").rows}
    assert rows["full"][0] == "rows measured, no whole-run time"
    assert rows["full"][1].startswith("NVIDIA H200")


def test_outside_a_checkout_it_says_so(monkeypatch):
    monkeypatch.setattr(claims, "results_dir", lambda: None)
    t = scale_times("slepian")
    assert t.rows is None and "inside the repository" in str(t)


@pytest.mark.parametrize("bad", ["", "Slepian", "../x", 3])
def test_bad_slug_is_named(bad):
    with pytest.raises(ValueError, match="slug"):
        scale_times(bad)


def test_every_overview_shows_its_own_chapter_times():
    for p in sorted(ROOT.glob("nbs/[0-9][0-9]_*/00_overview.ipynb")):
        if p.parent.name.startswith("00_"):
            continue
        slug = re.match(r"\d\d_(.+)", p.parent.name).group(1)
        src = "".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"])
        assert f'scale_times("{slug}")' in src, p
