"""The book pipeline: notebook selection, budgets, stale copies, failure reports, browser check."""

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import browser_check  # noqa: E402
import build_html  # noqa: E402
import execute  # noqa: E402
import layout  # noqa: E402


def test_budgets():
    assert layout.budget_s(Path("nbs/06_x/05_experiments.ipynb")) == 120
    assert layout.budget_s(Path("nbs/06_x/01_model.ipynb")) == 30


def test_stop_limit_follows_the_speed_probe(monkeypatch, capsys):
    exp, other = ROOT / "nbs/06_x/05_experiments.ipynb", ROOT / "nbs/06_x/01_model.ipynb"
    monkeypatch.setattr(execute, "SPEED", {})
    assert execute.stop_factor() == 1.0 and execute.timeout_s(exp) == 300
    # 150 s of a 120 s budget: reported over budget; 190 s: stopped on a reference-speed machine
    assert execute.timing_table({exp: (150.0, None, 100.0), other: (20.0, None, 100.0)}) == 0
    assert "OVER BUDGET" in capsys.readouterr().out
    assert execute.timing_table({exp: (190.0, None, 100.0)}) == 1
    # the slower of the two probes counts: 190 s passes on a machine 1.9x slower at the end
    monkeypatch.setattr(execute, "SPEED", {"start": 0.8, "end": 1.9})
    assert execute.stop_factor() == 1.9
    assert execute.timing_table({exp: (190.0, None, 100.0)}) == 0
    assert execute.timing_table({other: (86.0, None, 100.0)}) == 1  # 30 s x 1.5 x 1.9 = 85.5 s
    out = capsys.readouterr().out
    assert "start 0.80x, end 1.90x" in out and "OVER BUDGET" in out
    # never more than SPEED_CAP: a broken machine does not stretch the budgets without end
    monkeypatch.setattr(execute, "SPEED", {"start": 10.0})
    assert execute.stop_factor() == execute.SPEED_CAP == 3.0
    assert execute.timeout_s(other) == 3 * 120


def test_speed_probe_runs_in_a_fresh_process():
    f = execute.measure_speed()
    assert 0.05 < f < 20, f  # a ratio to the reference machine's probe time


def test_notebooks_front_page_last_and_core_always(capsys):
    nbs = layout.notebooks(["00"])
    assert [p.name for p in nbs[-2:]] == [
        "index.ipynb",
        "performance.ipynb",
    ]  # they read the others
    assert any(p.parent.name == "00_core" for p in nbs)
    with pytest.raises(SystemExit) as e:
        layout.notebooks(["77"])
    assert e.value.code == 2 and "unknown chapters ['77']" in capsys.readouterr().out


def test_a_chapter_outside_the_book_runs_only_when_named(tmp_path, monkeypatch):
    nbs = tmp_path / "nbs"
    for folder in ("00_core", "05_in", "06_out"):
        (nbs / folder).mkdir(parents=True)
        (nbs / folder / "01_a.ipynb").write_text("{}")
    (tmp_path / "book").mkdir()
    chapters = [dict(number="05", folder="05_in"), dict(number="06", folder=None)]
    (tmp_path / "book" / "chapters.json").write_text(json.dumps(chapters))
    monkeypatch.setattr(layout, "ROOT", tmp_path)
    monkeypatch.setattr(layout, "NBS", nbs)
    every = {p.parent.name for p in layout.notebooks(None)}
    assert every == {"00_core", "05_in"}
    assert {p.parent.name for p in layout.notebooks(["06"])} == {"00_core", "06_out"}


def _nb(cells):
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _code(src, tags=()):
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": list(tags)},
        "outputs": [],
        "source": src,
        "id": str(abs(hash(src)))[:8],
    }


def test_failing_notebook_is_named_with_its_cell(tmp_path):
    nb = tmp_path / "broken.ipynb"
    nb.write_text(json.dumps(_nb([_code("x = 1"), _code("raise ValueError('deliberate')")])))
    wall, err, peak = execute.run_one(nb, tmp_path / "out.ipynb", {}, [], execute._env(), 120)
    assert err is not None and "code cell 2" in err and "ValueError: deliberate" in err


def test_parameters_are_injected_only_where_declared(tmp_path):
    nb = tmp_path / "p.ipynb"
    nb.write_text(
        json.dumps(
            _nb(
                [_code("scale = 'full'", tags=["parameters"]), _code("assert scale == 'ci', scale")]
            )
        )
    )
    wall, err, peak = execute.run_one(
        nb, tmp_path / "out.ipynb", {"scale": "ci"}, [], execute._env(), 120
    )
    assert err is None
    meta = json.loads((tmp_path / "out.ipynb").read_text())["metadata"]["icml26"]
    assert meta["source_sha"] == layout.sha(nb)


def test_prepare_hides_bootstrap_and_directives(tmp_path):
    out = tmp_path / "o.ipynb"
    out.write_text(
        json.dumps(
            _nb(
                [
                    _code("# icml26-lit: colab bootstrap (hidden)\nimport sys"),
                    _code("#| default_exp core.x"),
                    _code("#| export\ndef f(): pass"),
                    _code("scale = 'ci'", tags=["injected-parameters"]),
                ]
            )
        )
    )
    build_html.prepare_executed(out)
    cells = json.loads(out.read_text())["cells"]
    tags = [c["metadata"]["tags"] for c in cells]
    assert tags == [["remove-cell"], ["remove-cell"], [], ["injected-parameters", "remove-cell"]]
    assert "".join(cells[2]["source"]) == "def f(): pass"  # the directive line is not rendered


def test_prepare_hides_export_hide_cells_and_removes_input(tmp_path):
    out = tmp_path / "o.ipynb"
    out.write_text(
        json.dumps(
            _nb(
                [
                    _code("#| export\n#| hide\ndef secret(): pass"),
                    _code("#| remove-input\nfig = 1\nfig"),
                    _code("x = 1  # no directive"),
                ]
            )
        )
    )
    build_html.prepare_executed(out)
    cells = json.loads(out.read_text())["cells"]
    assert [c["metadata"]["tags"] for c in cells] == [["remove-cell"], ["remove-input"], []]
    assert (
        "".join(cells[1]["source"]) == "fig = 1\nfig"
        and "".join(cells[2]["source"]) == "x = 1  # no directive"
    )


def test_exercises_notebooks_choose_the_interpreter_themselves(tmp_path):
    env = execute._env()
    assert env["TRITON_INTERPRET"] == "0"
    assert "TRITON_INTERPRET" not in execute.nb_env(tmp_path / "90_exercises.ipynb", env)
    assert execute.nb_env(tmp_path / "07_experiments.ipynb", env)["TRITON_INTERPRET"] == "0"


def test_build_refuses_stale_executed_copy(tmp_path, monkeypatch, capsys):
    src = tmp_path / "nbs" / "a.ipynb"
    src.parent.mkdir()
    src.write_text(json.dumps(_nb([_code("1")])))
    exec_dir = tmp_path / "_build" / "exec"
    out = exec_dir / "nbs" / "a.ipynb"
    out.parent.mkdir(parents=True)
    data = _nb([_code("1")])
    data["metadata"]["icml26"] = {"source_sha": "not-the-source"}
    out.write_text(json.dumps(data))
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: nbs/a\n")
    for module in (layout, build_html):  # build_html reads exec_path from layout
        monkeypatch.setattr(module, "ROOT", tmp_path)
        monkeypatch.setattr(module, "EXEC", exec_dir)
    monkeypatch.setattr(build_html, "filtered_toc", lambda chapters: toc)
    assert build_html.build(None) == 1
    assert "older than its source notebook" in capsys.readouterr().out


def test_filtered_toc_keeps_only_chosen_chapters():
    toc = build_html.filtered_toc(["00"]).read_text()
    assert "nbs/00_core/" in toc and "nbs/index" in toc
    assert all(
        f"nbs/{d}" not in toc for d in ("01_", "04_", "06_", "09_", "10_", "12_", "13_", "18_")
    )


PAGE = """<!DOCTYPE html><html><head><script src="{plotly}"></script></head><body>
<div class="cell_output">
<div id="fig" class="plotly-graph-div" style="height:300px; width:400px;"></div>
<script>{script}</script></div><p>{text}</p></body></html>"""


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium (.ci/run installs it)")
def test_browser_check_catches_a_broken_figure(tmp_path):
    import plotly

    js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    good = tmp_path / "good.html"
    good.write_text(
        PAGE.format(
            plotly=js.as_uri(), script="Plotly.newPlot('fig', [{y: [1, 3, 2]}]);", text="fine"
        )
    )
    broken = tmp_path / "broken.html"
    broken.write_text(
        PAGE.format(
            plotly=js.as_uri(),
            script="Plotly.newPlot('fig', [{y: [1, 3, 2]}]); nope(",
            text="and raw $$x^2$$ math",
        )
    )
    assert browser_check.check_page(good, tmp_path) == []
    problems = browser_check.check_page(broken, tmp_path)
    assert any("broken.html: 1 of 1 plotly figures were not drawn" in p for p in problems), problems
    assert any("broken.html: untypeset math" in p for p in problems), problems


def test_browser_check_flags_remote_scripts():
    assert browser_check.remote_scripts('<script src="https://cdn.example.org/x.js"></script>') == [
        "https://cdn.example.org/x.js"
    ]
    assert browser_check.remote_scripts('<script src="_static/x.js"></script>') == []


def test_launch_links_follow_git_url():
    links = browser_check.launch_links("nbs/00_core/00_how_this_book_works.html")
    assert links["colab"] == (
        "https://colab.research.google.com/github/icml26-lit/icml26-lit/blob/main/"
        "book/colab/00_core/00_how_this_book_works.ipynb"
    )
    assert links["binder"].endswith("?urlpath=tree/nbs/00_core/00_how_this_book_works.ipynb")
    # book pages have no Colab-ready copy: their button keeps the source notebook
    assert browser_check.launch_links("nbs/index.html")["colab"].endswith(
        "/blob/main/nbs/index.ipynb"
    )


def test_colab_buttons_open_the_copies(tmp_path):
    base = "https://colab.research.google.com/github/icml26-lit/icml26-lit/blob/main/"
    page = tmp_path / "p.html"
    page.write_text(
        f'<a href="{base}nbs/01_slepian/00_overview.ipynb">x</a>'
        f'<a href="{base}nbs/index.ipynb">y</a>'
    )
    assert build_html.point_colab_at_copies(tmp_path) == 1
    text = page.read_text()
    assert f"{base}book/colab/01_slepian/00_overview.ipynb" in text
    assert f"{base}nbs/index.ipynb" in text


def test_book_config_uses_git_url():
    cfg = (ROOT / "book" / "_config.yml").read_text()
    assert f"url: {browser_check.git_url()}" in cfg
    assert 'execute_notebooks: "off"' in cfg


def test_colab_bootstrap_is_first_and_inert_outside_colab():
    import re

    for nb in sorted((ROOT / "nbs").glob("*/*.ipynb")):
        first = json.loads(nb.read_text())["cells"][0]
        src = "".join(first["source"])
        assert first["cell_type"] == "code" and layout.BOOTSTRAP_MARK in src, (
            f"{nb}: the first cell must be the Colab bootstrap"
        )
        assert 'if "google.colab" in sys.modules:' in src, (
            f"{nb}: the bootstrap must do nothing outside Colab"
        )
        # the chapter's extra, spelled with hyphens, at the book's version tag
        pkg = r"icml26_lit\[[\w-]+\] @ git\+https://github.com/icml26-lit/icml26-lit@v\d+\.\d+\.\d+"
        assert re.search(pkg, src), nb


def test_papermill_stage_runs_offline(tmp_path):
    prefix = execute.offline_prefix()
    if not prefix:
        pytest.skip("no network namespaces here (needs root and unshare)")
    nb = tmp_path / "net.ipynb"
    nb.write_text(
        json.dumps(
            _nb(
                [
                    _code(
                        "import socket\n"
                        "names = [n for _, n in socket.if_nameindex()]\n"
                        # no interface but loopback: nothing can be downloaded
                        "assert names == ['lo'], names\n"
                        # and loopback is up
                        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); s.close()"
                    )
                ]
            )
        )
    )
    wall, err, peak = execute.run_one(nb, tmp_path / "out.ipynb", {}, prefix, execute._env(), 120)
    assert err is None, err
    wall, err, peak = execute.run_one(nb, tmp_path / "out2.ipynb", {}, [], execute._env(), 120)
    assert err is not None and "AssertionError" in err  # outside the namespace the check fails


def test_every_notebook_has_one_title_and_no_skipped_heading_levels():
    import re

    for nb in sorted((ROOT / "nbs").rglob("*.ipynb")):
        levels, fence = [], False
        for c in json.loads(nb.read_text())["cells"]:
            if c["cell_type"] != "markdown":
                continue
            for line in "".join(c["source"]).splitlines():
                if line.strip().startswith("```"):
                    fence = not fence
                elif not fence and (m := re.match(r"(#{1,6})\s", line)):
                    levels.append(len(m.group(1)))
        assert levels and levels[0] == 1 and levels.count(1) == 1, (
            f"{nb}: one '#' title first, got {levels[:4]}"
        )
        skips = [(a, b) for a, b in zip(levels, levels[1:]) if b > a + 1]
        assert not skips, f"{nb}: heading levels skip {skips[0]}"


def test_only_hung_runs_are_retried(tmp_path, monkeypatch):
    calls = []

    def fake(nb, out, params, offline, env, timeout, src=None):
        calls.append(nb.name)
        if nb.name == "hangs_once.ipynb" and calls.count(nb.name) == 1:
            return timeout, "timed out after 1 s", 10.0
        if nb.name == "fails.ipynb":
            return 0.1, "code cell 2 ('x'): ValueError: no", 10.0
        return 0.1, None, 10.0

    monkeypatch.setattr(execute, "_run_once", fake)
    monkeypatch.setattr(execute, "BUILD", tmp_path)
    assert (
        execute.run_one(tmp_path / "hangs_once.ipynb", tmp_path / "o.ipynb", {}, [], {}, 1)[1]
        is None
    )
    assert execute.run_one(tmp_path / "fails.ipynb", tmp_path / "o.ipynb", {}, [], {}, 1)[
        1
    ].startswith("code cell 2")
    assert calls == [
        "hangs_once.ipynb",
        "hangs_once.ipynb",
        "fails.ipynb",
    ]  # a failing cell is not retried


def test_papermill_client_waits_in_slices(monkeypatch):
    import asyncio
    from queue import Empty

    import papermill_client

    calls = []

    async def fake_get_msg(self, timeout=None):
        calls.append(timeout)
        if len(calls) < 3:
            raise Empty
        return {"msg": "reply"}

    monkeypatch.setattr(papermill_client, "_get_msg", fake_get_msg)
    get = papermill_client.AsyncZMQSocketChannel.get_msg
    assert get is papermill_client._get_msg_in_slices
    assert asyncio.run(get(None)) == {"msg": "reply"}
    assert calls == [1.0, 1.0, 1.0]  # a wait without a timeout became one-second polls
    calls.clear()
    with pytest.raises(Empty):
        asyncio.run(get(None, timeout=5))  # an explicit timeout is passed through unchanged
    assert calls == [5]


def test_notebook_env_keeps_torch_single_threaded_after_numba():
    import subprocess

    code = (
        "import numba, torch\n"
        "numba.set_num_threads(numba.get_num_threads())  # what aeon does after a fit\n"
        "print(torch.get_num_threads())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=execute._env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_make_book_reuses_only_an_unchanged_executed_copy(tmp_path, monkeypatch):
    src = tmp_path / "nbs" / "05_x" / "01_a.ipynb"
    src.parent.mkdir(parents=True)
    src.write_text(json.dumps(_nb([_code("x = 1")])))
    monkeypatch.setattr(execute, "exec_path", lambda nb: tmp_path / "exec" / nb.name)
    params = dict(scale="ci", seed=0, device="auto")
    env = dict(execute._env(), ICML26_PACKAGE_SHA="abc")
    wall, err, _ = execute.run_one(src, execute.exec_path(src), params, [], env, 120)
    assert err is None
    assert execute.reusable(src, params, "abc")
    assert not execute.reusable(src, params, "other package")
    assert not execute.reusable(src, dict(params, scale="cpu"), "abc")
    src.write_text(json.dumps(_nb([_code("x = 2")])))
    assert not execute.reusable(src, params, "abc")  # the source changed


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium (.ci/run installs it)")
def test_front_page_layout_catches_a_table_wider_than_1280_px(tmp_path):
    page = "<html><body><div>{}</div></body></html>"
    row = "<table class='icml26-headlines' style='width:{}px'><tr><td>x</td></tr></table>"
    fits, wide = tmp_path / "fits.html", tmp_path / "wide.html"
    fits.write_text(page.format(row.format(600)))
    wide.write_text(page.format(row.format(2400)))
    ok = browser_check.front_page_layout(fits)
    assert browser_check.layout_problems("fits", ok) == [], ok
    bad = browser_check.layout_problems("wide", browser_check.front_page_layout(wide))
    assert any("scrolls horizontally at 1280 px" in p for p in bad), bad
    assert any("the headline table is 2400 px wide" in p for p in bad), bad
    assert browser_check.layout_problems("none", {"page": [1280, 1280], "table": None}) == [
        "none: no headline table"
    ]
