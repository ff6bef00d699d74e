#!/usr/bin/env python
"""Does each extra install on Colab without downgrading what Colab ships? (`make colab-check`)

    python book/colab_check.py            # resolve every extra, write requirements/colab-check.txt

Colab's GPU runtime is rebuilt as a Python 3.13 environment whose site-packages holds one empty
`.dist-info` per package Colab ships, at Colab's version (`requirements/colab-constraints.txt`, and
its kept torch and triton). For each extra, pip resolves the locally built wheel with that extra
into that environment (`pip --python <it> install --dry-run --only-binary=:all: --report`; the
few packages PyPI has as source distributions only are built from source, as on Colab), so it
keeps what Colab has wherever that satisfies the extra, exactly as the Colab setup cell's install
does, and the report lists what it would install or change. The check fails when an extra would
downgrade a package Colab ships, change fastcore or ipywidgets at all (Colab's frontend runs
ipywidgets 7), or upgrade numpy while the setup cell does not tell the reader to restart the
runtime. Not part of `make test`: it needs the network (PyPI) and Python 3.13 (`PYTHON313`, or
`python3.13` on the PATH); it takes a few minutes.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "requirements" / "colab-constraints.txt"
REPORT = ROOT / "requirements" / "colab-check.txt"
NEVER_CHANGED = ("fastcore", "ipywidgets")  # a change breaks Colab's notebook frontend or nbdev
RESTART = ("numpy",)  # an upgrade is allowed only with "restart the runtime" printed
# published on PyPI as source distributions only (pure Python): pip builds them on Colab too
SOURCE_ONLY = ("MDAnalysisTests", "rouge-score", "reverse-geocoder", "nflows")


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def colab_pins(text: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    "Colab's versions (canonical name -> version) and the kept torch/triton from the header."
    text = CONSTRAINTS.read_text() if text is None else text
    pins, keep = {}, {}
    for line in text.splitlines():
        m = re.match(r"#\s*keep:\s*(.+)$", line)
        if m:
            keep = dict(p.split("==") for p in m.group(1).split())
            continue
        m = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)$", line.strip())
        if m:
            pins[canon(m.group(1))] = m.group(2)
    return pins, keep


def extras() -> list[str]:
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    keys = [k for k in cfg["DEFAULT"] if k.endswith("_requirements") and k != "dev_requirements"]
    return sorted(k[: -len("_requirements")].replace("_", "-") for k in keys)


def find_python313() -> str | None:
    "A Python 3.13 that runs: $PYTHON313, python3.13 on the PATH, or a pyenv install."
    home = Path.home() / ".pyenv" / "versions"
    found = [os.environ.get("PYTHON313"), shutil.which("python3.13")]
    found += sorted(str(p) for p in home.glob("3.13*/bin/python3.13"))
    for exe in filter(None, found):
        ok = subprocess.run([exe, "-c", "import sys; assert sys.version_info[:2] == (3, 13)"],
                            capture_output=True)  # fmt: skip
        if ok.returncode == 0:
            return exe
    return None


def colab_env(folder: Path, python313: str, pins: dict, keep: dict) -> Path:
    "A Python 3.13 environment that looks, to pip, like Colab's (metadata only, no code)."
    subprocess.run([python313, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next(folder.glob("lib/python3.13/site-packages"))
    for name, version in {**pins, **keep}.items():
        info = site / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "INSTALLER").write_text("pip\n")
        (info / "RECORD").write_text("")
    return folder / "bin" / "python"


def changes(report: dict, pins: dict) -> dict[str, tuple[str | None, str]]:
    "What pip would install: canonical name -> (Colab's version or None, the new version)."
    got = {canon(i["metadata"]["name"]): i["metadata"]["version"] for i in report["install"]}
    return {n: (pins.get(n), v) for n, v in got.items() if n != "icml26-lit"}


def verdict(moved: dict) -> tuple[bool, str]:
    "Pass or fail for one extra, and the line the report prints."
    from packaging.version import Version

    ups = {n: (a, b) for n, (a, b) in moved.items() if a is not None}
    new = sorted(n for n, (a, _) in moved.items() if a is None)
    down = [n for n, (a, b) in ups.items() if Version(b) < Version(a)]
    never = [n for n in ups if n in NEVER_CHANGED]
    words = ", ".join(f"{n} {a} -> {b}" for n, (a, b) in ups.items())
    tail = f"; adds {len(new)} package(s)" + (f" ({', '.join(new)})" if new else "")
    if down or never:
        return False, f"changes what Colab ships: {words}{tail}"
    if not ups:
        return True, "keeps every package Colab ships" + tail
    restart = [n for n in ups if n in RESTART]
    if restart and "restart the runtime" not in (ROOT / "book" / "bootstrap.py").read_text():
        return False, f"upgrades {words}, and the setup cell never says to restart the runtime"
    note = " (the setup cell says to restart the runtime)" if restart else ""
    return True, f"upgrades {words}{note}{tail}"


def check_extra(wheel: Path, extra: str, python: Path, pins: dict, pip: list) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [*pip, "--python", str(python), "install", "--dry-run", "--quiet",
               "--only-binary=:all:", *[f"--no-binary={n}" for n in SOURCE_ONLY],
               "--report", str(report), f"{wheel}[{extra}]"]  # fmt: skip
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            tail = " | ".join(
                ln for ln in p.stderr.strip().splitlines()[-3:] if "Location" not in ln
            )
            return False, f"pip could not resolve it: {tail}"
        return verdict(changes(json.loads(report.read_text()), pins))


def main() -> int:
    pins, keep = colab_pins()
    if not keep:
        print(f"{CONSTRAINTS}: no '# keep: torch==... triton==...' line")
        return 2
    python313 = find_python313()
    if python313 is None:
        print("colab-check needs Python 3.13 (Colab's): set PYTHON313=/path/to/python3.13")
        return 2
    pip = [sys.executable, "-m", "pip"]
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*pip, "wheel", "--quiet", "--no-deps", "-w", tmp, str(ROOT)], check=True)
        wheel = next(Path(tmp).glob("icml26_lit-*.whl"))
        python = colab_env(Path(tmp) / "colab", python313, pins, keep)
        names = extras()
        with ThreadPoolExecutor(4) as pool:  # pip waits on the network, not the CPU
            found = pool.map(lambda e: check_extra(wheel, e, python, pins, pip), names)
            rows = [(e, ok, text) for e, (ok, text) in zip(names, found)]
        for extra, ok, text in rows:
            print(f"{'ok  ' if ok else 'FAIL'} {extra}: {text}")
    head = CONSTRAINTS.read_text().splitlines()[1].lstrip("# ")
    pip_version = subprocess.run([*pip, "--version"], capture_output=True, text=True).stdout
    pip_version = pip_version.split()[1]
    out = [
        "# make colab-check: each extra of the wheel resolved for Colab's GPU runtime",
        f"# ({head}); Python 3.13, binary wheels only (sources: {', '.join(SOURCE_ONLY)}); "
        f"{time.time() - t0:.0f} s; "
        f"pip {pip_version}",
        *[f"{'ok  ' if ok else 'FAIL'} {extra}: {text}" for extra, ok, text in rows],
    ]
    REPORT.write_text("\n".join(out) + "\n")
    failed = [e for e, ok, _ in rows if not ok]
    print(f"wrote {REPORT.relative_to(ROOT)}; " + (f"FAILED: {failed}" if failed else "all pass"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
