"""Imports as a researcher meets them: every third-party import is declared, importing a chapter
is light, and a missing extra is named in the error."""

import ast
import configparser
import functools
import json
import re
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "icml26_lit"
sys.path.insert(0, str(ROOT / "requirements"))
sys.path.insert(0, str(ROOT / "book"))
import bootstrap  # noqa: E402
import pins as pinfile  # noqa: E402

SUBSTRATES = ("sphere", "sim", "md", "flows", "physio", "lm")
# loaded by no `import icml26_lit.<package>`: each costs 0.5-4 s and is needed by few functions
HEAVY = ("scipy.stats", "plotly", "IPython", "torch_geometric", "sklearn", "ot")
# IPython comes with ipywidgets (a core requirement), which live_controls uses beside it
IMPLIED = {"ipython": "ipywidgets"}


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def settings() -> configparser.SectionProxy:
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    return cfg["DEFAULT"]


def declared(key: str) -> set[str]:
    return {canon(Requirement(r).name) for r in settings().get(key, "").split()}


CORE = declared("requirements") | declared("triton_requirements") | set(IMPLIED)


def packages() -> list[str]:
    return sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").exists())


def allowed(extra: str | None) -> set[str]:
    "The distributions a chapter may import: the core's, its extra's and its no-deps pins."
    if extra is None:
        return CORE
    nodeps = {canon(p.split("==")[0]) for p in pinfile.nodeps_for(extra)}
    return CORE | declared(f"{extra}_requirements") | nodeps


def third_party(source: str) -> set[str]:
    "Top-level names of the absolute imports in `source`, standard library left out."
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return {m for m in out if m not in sys.stdlib_module_names and m not in ("icml26_lit",)}


@functools.cache
def module_owners() -> dict[str, list[str]]:
    "Top-level module -> the installed distributions that provide it (slow: read once)."
    return packages_distributions()


def distributions(module: str) -> set[str]:
    return {canon(d) for d in module_owners().get(module, [module])}


def notebook_source(nb: Path) -> str:
    cells = json.loads(nb.read_text())["cells"][1:]  # the first cell is the Colab bootstrap
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    lines = "\n".join(code).splitlines()
    return "\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!")))


def test_every_import_of_the_package_is_declared():
    "A chapter imports only what the core or its extra installs; a substrate, only the core's."
    bad = []
    for name in packages():
        extra = None if name in SUBSTRATES or name == "core" else name
        for f in sorted((PKG / name).glob("*.py")):
            for m in sorted(third_party(f.read_text())):
                if not distributions(m) & allowed(extra):
                    bad.append(f"{f.relative_to(ROOT)}: {m} (extra {extra})")
    assert not bad, "undeclared imports:\n" + "\n".join(bad)


def test_every_import_of_the_notebooks_is_declared():
    "Each notebook's imports are covered by the extra its Colab setup cell installs."
    bad = []
    for nb in bootstrap.notebooks():
        extra = bootstrap.extra(nb)
        extra = None if extra == "triton" else extra
        for m in sorted(third_party(notebook_source(nb))):
            if not distributions(m) & allowed(extra):
                bad.append(f"{nb.relative_to(ROOT)}: {m} (extra {extra})")
    assert not bad, "undeclared imports:\n" + "\n".join(bad)


def test_the_scan_sees_an_undeclared_import():
    assert "shapely" in third_party("import numpy\nfrom shapely.geometry import Polygon\nimport os")
    assert not distributions("shapely") & allowed("ftrl")


LIGHT = """
import importlib, json, sys
heavy = json.loads(sys.argv[1])
report = {}
for name in json.loads(sys.argv[2]):
    before = set(sys.modules)
    importlib.import_module("icml26_lit." + name)
    new = sorted({m.split(".")[0] for m in set(sys.modules) - before})
    report[name] = [new, [h for h in heavy if h in sys.modules]]
print(json.dumps(report))
"""


def test_importing_a_chapter_is_light():
    "No chapter, substrate or the core loads scipy.stats, plotly, IPython, PyG, sklearn or POT."
    p = subprocess.run(
        [sys.executable, "-c", LIGHT, json.dumps(HEAVY), json.dumps(packages())],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    for name, (new, heavy) in report.items():
        print(f"{name}: {', '.join(new)}")  # what importing it loaded (pytest -s shows it)
    first = [(n, h) for n, (_, h) in report.items() if h]
    assert not first, f"{first[0][0]} loads {first[0][1]} at import (the first to load one)"


# a child interpreter in which the modules named by argv[1] cannot be imported
BLOCKER = """
import importlib, json, sys
from importlib.abc import MetaPathFinder
blocked = set(json.loads(sys.argv[1]))
class Blocker(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocker())
"""

BLOCKED = (
    BLOCKER
    + """
out = {}
for name in json.loads(sys.argv[2]):
    try:
        importlib.import_module("icml26_lit." + name)
        out[name] = "ok"
    except ImportError as e:
        out[name] = str(e)
print(json.dumps(out))
"""
)


def extra_modules() -> set[str]:
    "Top-level modules that only an extra installs (what a reader without extras lacks)."
    d = settings()
    dists = set()
    for key in d:
        if key.endswith("_requirements") and key not in ("dev_requirements", "test_requirements"):
            dists |= declared(key)
    dists -= CORE
    mods = {m for m, ds in module_owners().items() if {canon(x) for x in ds} & dists}
    return {m for m in mods if not m.startswith("_")}


def test_a_missing_extra_is_named():
    "With no extra installed, each chapter imports, or its ImportError names the pip command."
    names = [n for n in packages() if n not in SUBSTRATES and n != "core"]
    p = subprocess.run(
        [sys.executable, "-c", BLOCKED, json.dumps(sorted(extra_modules())), json.dumps(names)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    bad = {
        n: msg
        for n, msg in out.items()
        if msg != "ok" and f'pip install "icml26_lit[{n.replace("_", "-")}]"' not in msg
    }
    assert not bad, f"bare import errors without the extra: {bad}"


CALLS = (
    BLOCKER
    + """
import numpy as np
out = []
from icml26_lit.functional_kl.trajectory import w2_squared
try:
    w2_squared(np.zeros((3, 2)), np.ones((3, 2)))
except ImportError as e:
    out.append(str(e))
from icml26_lit.geopt.geometry import naca4, validate_contour
try:
    validate_contour(naca4("0012"))
except ImportError as e:
    out.append(str(e))
print(json.dumps(out))
"""
)


def test_a_function_that_needs_a_missing_extra_names_it():
    p = subprocess.run(
        [sys.executable, "-c", CALLS, json.dumps(["ot", "shapely"])],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(out) == 2, out
    assert 'pip install "icml26_lit[functional-kl]"' in out[0], out[0]
    assert 'pip install "icml26_lit[geopt]"' in out[1], out[1]
