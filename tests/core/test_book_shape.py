"""The chapter skeleton, the table of contents, package APIs and short export cells, as checks.

Each check takes a repository root and returns the problems it finds, one line each naming the
file and the rule, so the same functions test this repository and small violating examples
built in a temporary folder. Chapter 0 (`nbs/00_core`) is exempt from the overview and api
notebooks: `00_how_this_book_works` plays the overview's part and each core notebook documents
its own API.
"""

import configparser
import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_EXPORT_LINES = 60
# Export cells still over the limit, being split: (notebook path, the key of the cell's first line:
# its first 40 characters up to any "(", so that reformatting a signature keeps the key).
# The test fails if one of these is fixed but still listed, so the list only shrinks.
KNOWN_LONG: set[tuple[str, str]] = set()


def _cells(nb: Path) -> list[dict]:
    return json.loads(nb.read_text())["cells"]


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def chapters(root: Path) -> list[dict]:
    "The chapters that are in the book: book/chapters.json entries with a folder."
    return [c for c in json.loads((root / "book" / "chapters.json").read_text()) if c.get("folder")]


def substrates(root: Path) -> list[str]:
    "Substrate packages, from the layers contract of .importlinter (between chapters and core)."
    cfg = configparser.ConfigParser()
    cfg.read(root / ".importlinter")
    layers = [
        x.strip() for x in cfg["importlinter:contract:layers"]["layers"].split("\n") if x.strip()
    ]
    out = []
    for layer in layers[2:-1]:  # bench, chapters, substrates..., core
        out += [m.strip().removeprefix("icml26_lit.") for m in layer.split("|")]
    return out


def skeleton_problems(root: Path) -> list[str]:
    "Each chapter folder has 00_overview, kernels, experiments with parameters, api, 90_exercises."
    out = []
    for ch in chapters(root):
        folder = root / "nbs" / ch["folder"]
        names = sorted(p.stem for p in folder.glob("*.ipynb"))
        need = {
            "00_overview": lambda n: n == "00_overview",
            "a kernels notebook": lambda n: n.endswith("kernels"),
            "an experiments notebook": lambda n: n.endswith("experiments"),
            "an api notebook": lambda n: n.endswith("_api") and not n.endswith("s_api"),
            "90_exercises": lambda n: n == "90_exercises",
        }
        for what, match in need.items():
            if not any(match(n) for n in names):
                out.append(
                    f"nbs/{ch['folder']}: missing {what} (chapter skeleton, CONTRIBUTING.md)"
                )
        for n in names:
            if n.endswith("experiments"):
                tags = [
                    c.get("metadata", {}).get("tags", []) for c in _cells(folder / f"{n}.ipynb")
                ]
                if not any("parameters" in t for t in tags):
                    out.append(f"nbs/{ch['folder']}/{n}.ipynb: no papermill `parameters` cell")
    return out


def toc_problems(root: Path) -> list[str]:
    "Every notebook of Chapter 0 and of every chapter in the book is in _toc.yml."
    toc = set(re.findall(r"file:\s*(\S+)", (root / "_toc.yml").read_text()))
    out = []
    for folder in ["00_core"] + [c["folder"] for c in chapters(root)]:
        for nb in sorted((root / "nbs" / folder).glob("*.ipynb")):
            if f"nbs/{folder}/{nb.stem}" not in toc:
                out.append(f"nbs/{folder}/{nb.name}: not in _toc.yml (run `make toc`)")
    return out


def long_export_cells(root: Path) -> list[tuple[str, str, int]]:
    "(notebook, first-line key, length) of every export cell over MAX_EXPORT_LINES lines."
    out = []
    folders = ["00_core"] + [c["folder"] for c in chapters(root)]
    for nb in sorted(p for f in folders for p in (root / "nbs" / f).glob("*.ipynb")):
        for c in _cells(nb):
            lines = _src(c).splitlines()
            if c["cell_type"] == "code" and any(x.startswith("#| export") for x in lines[:3]):
                if len(lines) > MAX_EXPORT_LINES:
                    first = next((x for x in lines if not x.startswith("#|")), "")
                    key = first.strip()[:40].split("(")[0].rstrip()
                    out.append((str(nb.relative_to(root)), key, len(lines)))
    return out


def api_problems(root: Path, import_module=importlib.import_module) -> list[str]:
    "Each package has a non-empty __all__ that a star import honours; its api notebook calls each."
    out = []
    slugs = [(c["folder"][3:], c["folder"]) for c in chapters(root)] + [
        (s, None) for s in substrates(root)
    ]
    for slug, folder in slugs + [("core", None)]:
        mod = import_module(f"icml26_lit.{slug}")
        names = getattr(mod, "__all__", None)
        if not names:
            out.append(
                f"icml26_lit/{slug}/__init__.py: no __all__ "
                "(export the public API at package level)"
            )
            continue
        missing = [n for n in names if not hasattr(mod, n)]
        if missing:
            out.append(f"icml26_lit.{slug}.__all__ names what the package lacks: {missing}")
        if folder:
            apis = [p for p in (root / "nbs" / folder).glob("*_api.ipynb")]
            text = "\n".join(_src(c) for p in apis for c in _cells(p) if c["cell_type"] == "code")
            absent = [n for n in names if not re.search(rf"\b{re.escape(n)}\b", text)]
            if absent:
                out.append(f"nbs/{folder}: the api notebook shows no call of {absent}")
    return out


# --- this repository ---------------------------------------------------------------------------


def test_every_chapter_has_the_skeleton():
    assert skeleton_problems(ROOT) == []


def test_every_notebook_is_in_the_table_of_contents():
    assert toc_problems(ROOT) == []


def test_every_package_exports_its_api_and_the_api_notebook_shows_it():
    assert api_problems(ROOT) == []


def test_no_export_cell_over_60_lines():
    found = long_export_cells(ROOT)
    new = [f for f in found if (f[0], f[1]) not in KNOWN_LONG]
    assert not new, (
        "export cells over 60 lines (split them into functions, each demonstrated):\n"
        + "\n".join(f"{p}: {n} lines, starting {first!r}" for p, first, n in new)
    )
    fixed = KNOWN_LONG - {(f[0], f[1]) for f in found}
    assert not fixed, f"now within 60 lines: remove from KNOWN_LONG: {sorted(fixed)}"


def test_substrates_are_read_from_the_contract():
    assert {"flows", "sim", "sphere", "md"} <= set(substrates(ROOT))


# --- each check fails when its rule is broken --------------------------------------------------


def _nb(path: Path, cells: list[tuple[str, str]], tags=None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for i, (kind, src) in enumerate(cells):
        c = dict(cell_type=kind, metadata={}, source=src)
        if tags and i in tags:
            c["metadata"]["tags"] = tags[i]
        out.append(c)
    path.write_text(json.dumps(dict(cells=out)))


@pytest.fixture
def fake(tmp_path):
    "A repository with one complete chapter, 01_demo, whose package exports `f` and `g`."
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "chapters.json").write_text(
        json.dumps([{"number": "01", "folder": "01_demo"}, {"number": "02", "folder": None}])
    )
    (tmp_path / ".importlinter").write_text(
        "[importlinter:contract:layers]\nlayers =\n    icml26_lit.bench\n    icml26_lit.demo\n"
        "    icml26_lit.sim | icml26_lit.md\n    icml26_lit.core\n"
    )
    d = tmp_path / "nbs" / "01_demo"
    for n in ("00_overview", "01_idea", "02_kernels", "04_api", "90_exercises"):
        _nb(d / f"{n}.ipynb", [("code", "f(1)\ng(2)" if n == "04_api" else "x = 1")])
    _nb(d / "03_experiments.ipynb", [("code", 'scale = "ci"')], tags={0: ["parameters"]})
    _nb(tmp_path / "nbs" / "00_core" / "00_how_this_book_works.ipynb", [("markdown", "# hi")])
    toc = "\n".join(
        f"- file: nbs/{p.parent.name}/{p.stem}" for p in (tmp_path / "nbs").rglob("*.ipynb")
    )
    (tmp_path / "_toc.yml").write_text(toc + "\n")
    return tmp_path


class _Mod:
    def __init__(self, names, **attrs):
        self.__all__ = names
        self.__dict__.update(attrs)


def _importer(demo_all=("f", "g")):
    mods = {
        "icml26_lit.demo": _Mod(list(demo_all), f=1, g=2),
        "icml26_lit.sim": _Mod(["s"], s=1),
        "icml26_lit.md": _Mod(["m"], m=1),
        "icml26_lit.core": _Mod(["c"], c=1),
    }
    return mods.__getitem__


def test_checks_pass_on_a_complete_fake_chapter(fake):
    assert skeleton_problems(fake) == [] and toc_problems(fake) == []
    assert api_problems(fake, _importer()) == [] and long_export_cells(fake) == []


def test_skeleton_check_names_a_missing_overview_and_parameters_cell(fake):
    (fake / "nbs" / "01_demo" / "00_overview.ipynb").unlink()
    _nb(fake / "nbs" / "01_demo" / "03_experiments.ipynb", [("code", 'scale = "ci"')])
    assert skeleton_problems(fake) == [
        "nbs/01_demo: missing 00_overview (chapter skeleton, CONTRIBUTING.md)",
        "nbs/01_demo/03_experiments.ipynb: no papermill `parameters` cell",
    ]


def test_toc_check_names_a_notebook_left_out(fake):
    _nb(fake / "nbs" / "01_demo" / "05_more.ipynb", [("code", "x = 1")])
    assert toc_problems(fake) == ["nbs/01_demo/05_more.ipynb: not in _toc.yml (run `make toc`)"]


def test_api_check_names_a_package_without_all_and_a_name_the_api_notebook_skips(fake):
    assert api_problems(fake, _importer(("f", "g", "h"))) == [
        "icml26_lit.demo.__all__ names what the package lacks: ['h']",
        "nbs/01_demo: the api notebook shows no call of ['h']",
    ]
    empty = _importer(())
    assert api_problems(fake, empty) == [
        "icml26_lit/demo/__init__.py: no __all__ (export the public API at package level)"
    ]


def test_cell_length_check_names_a_long_export_cell(fake):
    body = "#| export\ndef f():\n" + "    x = 1\n" * 60
    _nb(fake / "nbs" / "01_demo" / "01_idea.ipynb", [("code", body), ("code", "#| export\nx = 1")])
    assert long_export_cells(fake) == [("nbs/01_demo/01_idea.ipynb", "def f", 62)]
