"""One source of truth for dependencies: pins, environment.yml and the package's extras agree."""

import configparser
import json
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "requirements"))
sys.path.insert(0, str(ROOT / "book"))
import bootstrap  # noqa: E402
import pins as pinfile  # noqa: E402


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict:
    "The regular pins (above the no-deps block), canonical name -> version."
    return {_canon(n): v for n, v in pinfile.regular()}


def nodeps() -> dict:
    return {_canon(n): (v, chapters) for n, v, chapters in pinfile.nodeps()}


def env_pins() -> dict:
    out = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"\s+- ([A-Za-z0-9_.-]+)==(\S+)$", line)
        if m:
            out[_canon(m.group(1))] = m.group(2)
    return out


def declared() -> dict:
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    d = cfg["DEFAULT"]
    reqs = {}
    for key, value in d.items():
        if key == "requirements" or key.endswith("_requirements"):
            for r in value.split():
                req = Requirement(r)
                reqs.setdefault(_canon(req.name), []).append((key, req))
    return reqs


def test_every_declared_package_is_pinned_within_its_bounds():
    p = pins()
    for name, reqs in declared().items():
        assert name in p, (
            f"{name} is declared in settings.ini ({reqs[0][0]}) "
            "but not pinned in requirements/pins.txt"
        )
        for key, req in reqs:
            assert req.specifier.contains(p[name], prereleases=True), (
                f"pin {name}=={p[name]} does not satisfy {req} from settings.ini {key}"
            )


def test_every_pin_is_declared():
    d = declared()
    extra = sorted(set(pins()) - set(d))
    assert not extra, (
        f"pinned but declared nowhere in settings.ini (requirements or an extra): {extra}"
    )


def test_environment_yml_has_the_same_pins():
    "The regular pins; Binder's postBuild installs the no-deps block (environment.yml cannot)."
    assert env_pins() == pins(), (
        "environment.yml differs from requirements/pins.txt: "
        "run python requirements/make_environment.py"
    )


def test_runtime_requirements_are_lower_bounds_only():
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    for key, value in cfg["DEFAULT"].items():
        if key == "requirements" or key.endswith("_requirements"):
            for r in value.split():
                assert "==" not in r, (
                    f"{key}: exact pin {r} in the package metadata breaks installs (use >=)"
                )


def test_makefile_and_ci_use_the_pins():
    make = (ROOT / "Makefile").read_text()
    assert "requirements/pins.txt" in make
    assert "make test" in (ROOT / ".ci" / "run").read_text()


# The no-deps block: packages installed with `pip install --no-deps -c requirements/pins.txt`.
SAMPLE = """torch==2.13.0
scipy==1.17.1  # a comment
# installed with --no-deps: why
torchcfm==1.0.7  # functional_kl
neurolib==0.6.2  # afr_net other_chapter
"""


def test_pins_file_parser_splits_the_no_deps_block():
    assert pinfile.regular(SAMPLE) == [("torch", "2.13.0"), ("scipy", "1.17.1")]
    assert pinfile.nodeps(SAMPLE) == [
        ("torchcfm", "1.0.7", ["functional_kl"]),
        ("neurolib", "0.6.2", ["afr_net", "other_chapter"]),
    ]
    assert pinfile.nodeps_for("other_chapter", SAMPLE) == ["neurolib==0.6.2"]
    assert pinfile.nodeps_for("ftrl", SAMPLE) == []


def test_pins_file_parser_rejects_a_no_deps_pin_without_its_chapter_and_a_range():
    with pytest.raises(ValueError, match="names no chapter"):
        pinfile.nodeps("# installed with --no-deps\ntorchcfm==1.0.7\n")
    with pytest.raises(ValueError, match="not `name==version`"):
        pinfile.regular("torch>=2.4\n")


def test_no_deps_packages_are_declared_in_no_extra():
    "An extra would make pip resolve the package's dependencies, which is what the block avoids."
    d = declared()
    both = sorted(set(nodeps()) & set(d))
    assert not both, (
        "no-deps packages also declared in settings.ini "
        f"(pip would pull their dependencies): {both}"
    )
    assert not set(nodeps()) & set(pins()), "a package is both a regular and a no-deps pin"


def test_no_deps_packages_name_chapters_that_exist():
    slugs = {p.name for p in (ROOT / "icml26_lit").iterdir() if (p / "__init__.py").exists()}
    for name, (_, chapters) in nodeps().items():
        missing = sorted(set(chapters) - slugs)
        assert not missing, f"no-deps pin {name} names chapters with no package: {missing}"


def test_venv_postbuild_and_bootstrap_install_the_no_deps_block_with_no_deps():
    make = (ROOT / "Makefile").read_text()
    assert "requirements/pins.py nodeps" in make and "--no-deps -c $(PINS)" in make
    post = (ROOT / "postBuild").read_text()
    assert "requirements/pins.py nodeps" in post and "--no-deps -c requirements/pins.txt" in post
    # every notebook of a chapter that needs a no-deps package installs exactly those pins,
    # the others none
    for nb in bootstrap.notebooks():
        want = pinfile.nodeps_for(bootstrap.extra(nb))
        first = "".join(json.loads(nb.read_text())["cells"][0]["source"])
        if want:
            assert "--no-deps" in first and json.dumps(want) in first, (
                f"{nb}: bootstrap misses {want}"
            )
        else:
            assert "--no-deps" not in first, (
                f"{nb}: bootstrap installs no-deps packages it does not need"
            )


def test_bootstrap_template_adds_the_no_deps_install(monkeypatch, tmp_path):
    nb = tmp_path / "nbs" / "11_functional_kl" / "01_x.ipynb"
    nb.parent.mkdir(parents=True)
    monkeypatch.setattr(pinfile, "PINS", tmp_path / "pins.txt")
    (tmp_path / "pins.txt").write_text(SAMPLE)
    text = bootstrap.source(nb)
    assert '"--no-deps"' in text and '["torchcfm==1.0.7"]' in text
    compile(text, "bootstrap", "exec")  # the generated cell is valid Python
