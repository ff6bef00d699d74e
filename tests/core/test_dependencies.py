"""One source of truth for dependencies: pins, environment.yml and the package's extras agree."""
import configparser
import re
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict:
    out = {}
    for line in (ROOT / "requirements" / "pins.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            out[_canon(name)] = version
    return out


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
        assert name in p, f"{name} is declared in settings.ini ({reqs[0][0]}) but not pinned in requirements/pins.txt"
        for key, req in reqs:
            assert req.specifier.contains(p[name], prereleases=True), \
                f"pin {name}=={p[name]} does not satisfy {req} from settings.ini {key}"


def test_every_pin_is_declared():
    d = declared()
    extra = sorted(set(pins()) - set(d))
    assert not extra, f"pinned but declared nowhere in settings.ini (requirements or an extra): {extra}"


def test_environment_yml_has_the_same_pins():
    assert env_pins() == pins(), "environment.yml differs from requirements/pins.txt: run python requirements/make_environment.py"


def test_runtime_requirements_are_lower_bounds_only():
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    for key, value in cfg["DEFAULT"].items():
        if key == "requirements" or key.endswith("_requirements"):
            for r in value.split():
                assert "==" not in r, f"{key}: exact pin {r} in the package metadata breaks installs (use >=)"


def test_makefile_and_ci_use_the_pins():
    make = (ROOT / "Makefile").read_text()
    assert "requirements/pins.txt" in make
    assert "make test" in (ROOT / ".ci" / "run").read_text()
