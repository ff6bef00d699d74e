"""The wheels a GPU machine's image lacks, carried to it for `make gpu` (it has no network).

`python book/gpu_pack.py download` (`make gpu-pack`, here, with network) fetches, for CPython 3.12
on x86-64 Linux, the package's core requirements with their dependencies and then each chapter
extra's own wheels, pinned by requirements/pins.txt, and keeps those whose distribution the
image does not already hold (requirements/gpu-image.txt), the smallest extras first, within a
size budget: an extra that would pass it is left out and named. `python book/gpu_pack.py install`
(run by `make gpu` on the GPU machine) installs, without network and without dependencies, the
carried wheels whose distribution is not installed there into `.gpu-site/`, which `make gpu` puts
on PYTHONPATH; the image's own packages are never replaced.
"""

from __future__ import annotations

import configparser
import importlib.metadata
import json
import math
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
WHEELS, SITE = ROOT / ".gpu-wheels", ROOT / ".gpu-site"
BUDGET_MB = 44.0  # the carried tree is limited; the repository itself is about 12 MB
PLATFORM = [
    "--only-binary=:all:",
    "--python-version", "3.12",
    "--implementation", "cp",
    "--platform", "manylinux_2_28_x86_64",
    "--platform", "manylinux2014_x86_64",
]  # fmt: skip


def canon(name: str) -> str:
    "PEP 503 normalised distribution name."
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_dist(filename: str) -> str:
    "The normalised distribution name of a wheel file name."
    if not filename.endswith(".whl") or filename.count("-") < 4:
        raise ValueError(f"not a wheel file name: {filename!r}")
    return canon(filename.split("-")[0])


def image_dists(path=None) -> set[str]:
    "Distributions the GPU image holds (one per line; '#' starts a comment)."
    lines = pathlib.Path(path or ROOT / "requirements" / "gpu-image.txt").read_text().splitlines()
    return {canon(x.split("#")[0].strip()) for x in lines if x.split("#")[0].strip()}


def requirement_groups(settings=None) -> dict[str, list[str]]:
    "'core' and each chapter extra -> its requirement names, from settings.ini."
    cfg = configparser.ConfigParser()
    cfg.read(settings or ROOT / "settings.ini")
    s = cfg["DEFAULT"]
    names = lambda v: [re.split(r"[<>=!~ ]", r)[0] for r in v.split()]
    skip = {"dev", "test", "triton"}
    groups = {"core": names(s["requirements"])}
    for key, value in s.items():
        if key.endswith("_requirements") and key[: -len("_requirements")] not in skip:
            groups[key[: -len("_requirements")]] = names(value)
    return groups


def select(wheels: list[pathlib.Path], image: set[str], kept: set[str]) -> list[pathlib.Path]:
    "The wheels whose distribution neither the image nor an earlier group provides."
    return [w for w in wheels if wheel_dist(w.name) not in image | kept]


def _mb(wheels: list[pathlib.Path]) -> float:
    return sum(w.stat().st_size for w in wheels) / 2**20


def _fetch(names: list[str], deps: list[str], image: set[str], kept: set[str], staging):
    "Download `names` into `staging`; (the new wheels, '') or (None, why not)."
    staging.mkdir(parents=True, exist_ok=True)
    pins = ROOT / "requirements" / "pins.txt"
    cmd = [sys.executable, "-m", "pip", "download", "-q", "-d", str(staging), *PLATFORM, *deps]
    r = subprocess.run([*cmd, "-c", str(pins), *names], capture_output=True, text=True)
    if r.returncode:
        return None, "no wheels: " + (r.stderr.strip().splitlines() or ["pip failed"])[-1]
    return select(sorted(staging.glob("*.whl")), image, kept), ""


def _candidates(image: set[str], tmp: pathlib.Path) -> list[tuple[str, list, str]]:
    "(group, wheels or None, why): the core with its dependencies, then the extras, smallest first."
    groups, out, core = requirement_groups(), [], set()
    names = [n for n in groups.pop("core") if canon(n) not in image]
    got, why = _fetch(names, [], image, set(), tmp / "core")
    out.append(("core", got, why))
    core = {wheel_dist(w.name) for w in got or []}
    extras = []
    for group, names in groups.items():  # an extra's own wheels: the image holds most of the rest
        todo = [n for n in names if canon(n) not in image | core]
        if todo:
            got, why = _fetch(todo, ["--no-deps"], image, core, tmp / group)
            extras.append((group, got, why))
    return out + sorted(extras, key=lambda e: math.inf if e[1] is None else _mb(e[1]))


def download(budget_mb: float = BUDGET_MB) -> dict:
    "Fill .gpu-wheels/ with the core, then the smallest extras, within `budget_mb` (a report)."
    image, kept, total, report = image_dists(), set(), 0.0, {"kept": {}, "left_out": {}}
    WHEELS.mkdir(exist_ok=True)
    for old in WHEELS.glob("*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        for group, got, why in _candidates(image, pathlib.Path(tmp)):
            new = None if got is None else [w for w in got if wheel_dist(w.name) not in kept]
            if new is None or total + _mb(new) > budget_mb:
                over = f"{_mb(new or []):.1f} MB would pass the {budget_mb} MB budget"
                report["left_out"][group] = why or over
                continue
            total += _mb(new)
            report["kept"][group] = sorted(w.name for w in new)
            for w in new:
                shutil.copy(w, WHEELS / w.name)
                kept.add(wheel_dist(w.name))
    report["total_mb"] = round(total, 1)
    (WHEELS / "pack.json").write_text(json.dumps(report, indent=1))
    return report


def missing(wheels: list[pathlib.Path]) -> list[pathlib.Path]:
    "The carried wheels whose distribution is not installed here."
    out = []
    for w in wheels:
        try:
            importlib.metadata.version(wheel_dist(w.name))
        except importlib.metadata.PackageNotFoundError:
            out.append(w)
    return out


def install() -> list[str]:
    "Install the missing carried wheels into .gpu-site/ (no network, no dependencies)."
    todo = missing(sorted(WHEELS.glob("*.whl")))
    if todo:
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        subprocess.run([*cmd, "--target", str(SITE), *map(str, todo)], check=True)
    return [w.name for w in todo]


if __name__ == "__main__":
    verb = sys.argv[1] if len(sys.argv) > 1 else ""
    if verb == "download":
        print(json.dumps(download(), indent=1))
    elif verb == "install":
        print("installed into .gpu-site:", ", ".join(install()) or "nothing (all present)")
    else:
        sys.exit("usage: python book/gpu_pack.py download|install")
