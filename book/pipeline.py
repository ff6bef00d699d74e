#!/usr/bin/env python
"""The book's pipeline: execute notebooks with papermill, build and check the HTML book, run one
experiment at a larger scale, and drive `make test` stage by stage.

    python book/pipeline.py execute [--chapters "01 06"]      # papermill, scale=ci, two at a time
    python book/pipeline.py build   [--chapters ...]          # Jupyter Book, executed copies
    python book/pipeline.py book    [--chapters ...]          # export + execute + build
    python book/pipeline.py test    [--chapters ...]          # every check, stage by stage
    python book/pipeline.py lint                              # import contracts, ruff
    python book/pipeline.py verdicts [--chapters ...]         # rewrite results/ci_verdicts.json
    python book/pipeline.py run NB --scale cpu|colab|full     # -> results/<slug>/<scale>.json
    python book/pipeline.py run NB --scale full --nproc 4     # the same on 4 torchrun ranks
    python book/pipeline.py run NB --scale full --nproc 2 --parallel data   # 2 ranks per unit (DDP)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import execute as execute_mod
from build_html import build
from execute import _env, execute, run_one
from layout import (
    BUILD,
    CLAIMS,
    PY,
    ROOT,
    TIMINGS,
    chapter_dirs,
    exec_path,
    has_parameters,
    notebooks,
    sha,
    test_dirs,
    write_timings,
)

# Every path ruff checks in `make test` (the same as `make lint`): the book's scripts, the tests,
# the notebooks and the generated package (format is checked on the sources, not the package)
RUFF_CLEAN = ["book", "tests", "nbs", "icml26_lit"]

PYTEST_TOTALS: dict = {}


# ----------------------------------------------------------------------------- sync and pytest
def lint_stage() -> int:
    "The import contracts over the whole package, then ruff (check and format) over RUFF_CLEAN."
    bindir = Path(PY).parent
    cmds = [
        [str(bindir / "lint-imports")],
        [str(bindir / "ruff"), "check", *RUFF_CLEAN],
        [
            str(bindir / "ruff"),
            "format",
            "--check",
            *(p for p in RUFF_CLEAN if not p.startswith("icml26_lit")),
        ],
    ]
    bad = 0
    for cmd in cmds:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        name = " ".join([Path(cmd[0]).name, *cmd[1:2]])
        print(f"  {'ok' if p.returncode == 0 else 'FAILED':6s} {name}")
        if p.returncode:
            print((p.stdout + p.stderr)[-6000:])
            bad += 1
    return 1 if bad else 0


def sync_check(chapters: list[str] | None) -> int:
    "Notebooks clean, the package exported from them: nbdev_clean, nbdev_export, argdocs no-ops."
    bindir = Path(PY).parent
    argdocs = [PY, str(ROOT / "book" / "argdocs.py"), "write"]
    for tool in ([str(bindir / "nbdev_clean")], [str(bindir / "nbdev_export")], argdocs):
        p = subprocess.run(tool, cwd=ROOT, capture_output=True, text=True)
        if p.returncode:
            print(f"{Path(tool[min(1, len(tool) - 1)]).name} failed:\n{p.stdout}{p.stderr}")
            return 1
    paths = ["nbs", "icml26_lit"]
    diff = subprocess.run(
        ["git", "status", "--porcelain", "--", *paths], cwd=ROOT, capture_output=True, text=True
    ).stdout.splitlines()
    if chapters:  # quick iteration: only tracked files must be unchanged
        diff = [l for l in diff if not l.startswith("??")]
    if diff:
        print(
            "notebooks or package out of sync (run `nbdev_clean && nbdev_export && "
            "python book/argdocs.py write` and commit both):"
        )
        print("\n".join("  " + l for l in diff[:40]))
        return 1
    print("notebooks are clean and the package is in sync with them")
    return 0


def pytest_stage(chapters: list[str] | None, workers: int = 2) -> int:
    "pytest over the chosen test folders on `workers` processes; per-folder times from junit."
    import xml.etree.ElementTree as ET

    dirs = [str(d.relative_to(ROOT)) for d in test_dirs(chapters)]
    junit = BUILD / "pytest-junit.xml"
    junit.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [PY, "-m", "pytest", *dirs, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
    if workers > 1:  # a test file stays on one worker: files that share state stay serial
        cmd += ["-n", str(workers), "--dist", "loadfile"]
    p = subprocess.run(cmd, cwd=ROOT, env=env, text=True, capture_output=True)
    if p.returncode:
        print(p.stdout[-8000:] + p.stderr[-2000:])
    totals = {"passed": 0, "failed": 0, "skipped": 0, "error": 0}
    folders: dict[str, list] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        folder = parts[1] if len(parts) > 2 and parts[0] == "tests" else "?"
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        kind = {"failure": "failed"}.get(kind, kind)
        totals[kind] += 1
        row = folders.setdefault(folder, [0.0, 0, 0])
        row[0] += float(case.get("time", 0))
        row[1 if kind in ("passed", "skipped") else 2] += 1
    for folder, (secs, ok, bad) in sorted(folders.items()):
        flag = "" if secs <= 60 else "  (over the 60 s budget)"
        print(
            f"  {'ok' if not bad else 'FAILED':6s} {secs:6.1f} s  "
            f"tests/{folder}: {ok} passed, {bad} failed{flag}"
        )
    TIMINGS["pytest_folders"] = {f: round(r[0], 1) for f, r in folders.items()}
    PYTEST_TOTALS.update(totals)
    return 1 if p.returncode else 0


# ----------------------------------------------------------------------------- verdict drift
def _ran(chapters: list[str] | None) -> set[str]:
    "The chapter numbers whose notebooks the papermill stage runs for `chapters`."
    return {nb.parent.name[:2] for nb in notebooks(chapters) if re.match(r"\d\d_", nb.parent.name)}


def _ci_claims(chapters: set[str]) -> list:
    "The ci claims the last papermill run wrote to _build/claims, of the given chapters."
    sys.path.insert(0, str(ROOT))
    from icml26_lit.core.claims import load_claims

    return [c for c in load_claims(directory=CLAIMS) if c.scale == "ci" and c.chapter in chapters]


def verdict_drift(chapters: list[str] | None) -> None:
    "Print each ci verdict that moved since results/ci_verdicts.json was written: never a failure."
    try:
        claims = _ci_claims(_ran(chapters))  # puts the checkout on sys.path first
        from icml26_lit.core.verdicts import (
            flips_report,
            read_ci_verdicts,
            verdict_flips,
            verdict_map,
        )

        recorded = read_ci_verdicts()
        if recorded is None:
            print("verdict drift: no results/ci_verdicts.json to compare with (`make verdicts`)")
            return
        flips = verdict_flips(claims, recorded)
        print(
            ("WARNING, verdict drift: " if flips else "verdict drift: ")
            + flips_report(flips, recorded)
        )
        old = recorded["verdicts"]
        new = [
            (ch, c)
            for ch, rows in verdict_map(claims).items()
            for c in rows
            if c not in old.get(ch, {})
        ]
        if new:
            print(
                f"verdict drift: {len(new)} ci row(s) not in the record (new or reworded claims):"
            )
            print("\n".join(f"  Chapter {ch}, row {c!r}" for ch, c in new))
    except Exception as e:  # the alarm must not break the build
        print(f"verdict drift: not checked ({type(e).__name__}: {e})")


def papermill_stage(chapters: list[str] | None) -> int:
    "Every notebook at scale=ci, then the verdict drift alarm (a warning, never a failure)."
    rc = execute(chapters)
    verdict_drift(chapters)
    return rc


def stale_chapters(chapters: set[str]) -> list[str]:
    "Chapters whose executed notebooks are missing or ran other code than the working tree's."
    pkg, out = execute_mod.package_sha(), []
    for d in chapter_dirs(None):
        if d.name[:2] not in chapters:
            continue
        for nb in sorted(d.glob("*.ipynb")):
            done = exec_path(nb)
            meta = (
                json.loads(done.read_text())["metadata"].get("icml26", {}) if done.exists() else {}
            )
            if meta.get("package_sha") != pkg or meta.get("source_sha") != sha(nb):
                out.append(f"{d.name[:2]} ({nb.relative_to(ROOT)} ran other code, or did not run)")
                break
    return out


def write_verdicts(chapters: list[str] | None) -> int:
    "`make verdicts`: rewrite results/ci_verdicts.json from the last ci run's claims, if current."
    sys.path.insert(0, str(ROOT))
    from icml26_lit.core.verdicts import (
        ci_verdicts_path,
        flips_report,
        read_ci_verdicts,
        verdict_flips,
        write_ci_verdicts,
    )

    claims = _ci_claims(_ran(chapters))
    if not claims:
        print("no ci claims in _build/claims: run `make test` (or `make book`) first")
        return 1
    stale = stale_chapters({c.chapter for c in claims})
    if stale:
        print("the claims of these chapters are older than the code; run them again first:")
        print("\n".join(f"  {s}" for s in stale))
        return 1
    path = ci_verdicts_path()
    if path is None:
        print("run inside the repository (or set ICML26_RESULTS_DIR) to write the record")
        return 1
    old = read_ci_verdicts(path)
    print(flips_report(verdict_flips(claims, old), old))
    data = write_ci_verdicts(claims, path, keep=old)
    rows = sum(len(v) for v in data["verdicts"].values())
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {rows} rows")
    return 0


# ----------------------------------------------------------------------------- make test
def test(chapters: list[str] | None) -> int:
    stages = [
        ("sync: nbdev_clean + nbdev_export + argdocs, no diff", lambda: sync_check(chapters)),
        ("lint: import contracts, ruff over book, tests, nbs, package", lint_stage),
        ("pytest (kernels in the interpreter, compile checks)", lambda: pytest_stage(chapters)),
        ("papermill: every notebook at scale=ci", lambda: papermill_stage(chapters)),
        ("book build, warnings as errors", lambda: build(chapters)),
        ("browser check (headless Chromium)", lambda: browser(chapters)),
    ]
    times, failed = [], []
    for name, fn in stages:
        if (
            failed
            and name.startswith(("book", "browser"))
            and any(f.startswith(("papermill", "book")) for f in failed)
        ):
            times.append((name, 0.0, "skipped"))
            continue
        print(f"\n=== {name}", flush=True)
        t0 = time.perf_counter()
        try:
            rc = fn()
        except SystemExit as e:
            print(e)
            rc = 1
        wall = time.perf_counter() - t0
        times.append((name, wall, "ok" if rc == 0 else "FAILED"))
        if rc:
            failed.append(name)
    TIMINGS["stages"] = {name: round(wall, 1) for name, wall, _ in times}
    write_timings()
    print("\n=== stage times")
    for name, wall, status in times:
        print(f"  {wall:8.1f} s  {status:8s} {name}")
    print(f"  {sum(w for _, w, _ in times):8.1f} s  in all")
    if failed:
        print("FAILED stages: " + "; ".join(failed))
    if PYTEST_TOTALS:  # the closing line: pytest's totals over every test folder
        t = PYTEST_TOTALS
        print(
            f"pytest: {t['passed']} passed, {t['failed'] + t['error']} failed, "
            f"{t['skipped']} skipped"
        )
    return 1 if failed else 0


def browser(chapters: list[str] | None) -> int:
    sys.path.insert(0, str(ROOT / "book"))
    from browser_check import main as check

    return check([])


# ----------------------------------------------------------------------------- make run
def run_at_scale(
    nb: str, scale: str, device: str, seed: int = 0, nproc: int = 1, parallel: str = "units"
) -> int:
    "Run one experiments notebook at a larger scale; write results/<slug>/<scale>.json."
    sys.path.insert(0, str(ROOT))
    from icml26_lit.core import Scale, get_device, load_claims, load_curves, provenance

    scale = Scale.get(scale).name
    dev = get_device(device)
    path = (ROOT / nb).resolve()
    if not path.exists() or path.suffix != ".ipynb":
        sys.exit(f"NB={nb!r} is not a notebook path (e.g. nbs/06_flashschnet/05_experiments.ipynb)")
    if not has_parameters(path):
        sys.exit(f"{nb} has no `parameters` cell: only experiments notebooks can be run at a scale")
    folder = path.parent.name
    m = re.search(
        r"default_exp (\w+)\.", path.read_text()
    )  # the chapter's package, e.g. flashschnet
    slug = m.group(1) if m else (folder[3:] if re.match(r"\d\d_", folder) else folder)
    try:
        mod = importlib.import_module(f"icml26_lit.{slug}.experiments")
    except ImportError:
        mod = None
    presets = getattr(getattr(mod, "CONFIG", None), "scales", None)
    if presets is not None and scale not in presets:
        print(f"{nb} has no {scale} preset (it has {', '.join(presets)}); no results file written")
        return 2
    if nproc > 1:  # the chapter's run_experiment on torchrun's ranks; rank 0 writes the file
        if not hasattr(mod, "run_experiment"):
            print(f"{nb}: icml26_lit.{slug}.experiments has no run_experiment; NPROC must be 1")
            return 2
        cmd = [str(Path(PY).parent / "torchrun"), "--standalone", f"--nproc-per-node={nproc}"]
        cmd += [str(ROOT / "book" / "run_distributed.py"), "--slug", slug, "--scale", scale]
        cmd += ["--seed", str(seed), "--device", device, "--notebook", nb, "--parallel", parallel]
        rc = subprocess.run(cmd, cwd=ROOT).returncode
        if rc:
            print(f"{nb}: a rank failed (exit status {rc}, see above); no results file written")
        return 1 if rc else 0
    claims = Path(tempfile.mkdtemp(prefix="claims-"))
    env = dict(_env(), ICML26_CLAIMS_DIR=str(claims), ICML26_BOOK="0")
    threads = os.environ.get("RUN_THREADS", "")  # make run ... THREADS=1 beside other work
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env.pop(k)  # a larger run may use every core
        if threads:  # on a shared machine, spinning threads burn CPU time waiting for a core
            env[k] = threads
    out = BUILD / "runs" / f"{slug}-{scale}-{path.stem}.ipynb"
    wall, err, _ = run_one(
        path, out, dict(scale=scale, seed=seed, device=device), [], env, 48 * 3600
    )
    if err:
        print(f"{nb} failed: {err}")
        return 1
    res = dict(
        notebook=str(path.relative_to(ROOT)),
        scale=scale,
        seed=seed,
        provenance=provenance(str(dev)),
        wall_s=round(wall, 1),
        # CPU seconds (papermill + kernel) and the 1-minute load average at the end: a wall time
        # measured beside other jobs is read against these
        cpu_s=round(execute_mod.CPU_S.get(path, 0.0), 1),
        load_avg_1min=round(os.getloadavg()[0], 2),
        claims=[asdict(c) for c in load_claims(directory=claims)],
        curves=load_curves(directory=claims),
    )
    dst = ROOT / "results" / slug / f"{scale}.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(res, indent=1))
    os.replace(tmp, dst)  # a results file is written whole or not at all
    print(
        f"{nb} at scale={scale} on {res['provenance']['device_name']}: {wall:.0f} s wall, "
        f"{res['cpu_s']:.0f} s cpu; wrote {dst}"
    )
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "command",
        choices=[
            "execute",
            "build",
            "book",
            "test",
            "run",
            "sync",
            "lint",
            "pytest",
            "browser",
            "verdicts",
        ],
    )
    p.add_argument("notebook", nargs="?")
    p.add_argument("--chapters", default="", help='two-digit chapter numbers, e.g. "06 09"')
    p.add_argument("--scale", default="colab", help="ci, cpu, colab or full")
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--nproc", type=int, default=1, help="processes for `run` (torchrun)")
    p.add_argument(
        "--parallel",
        default="units",
        choices=["units", "data"],
        help="with --nproc: split the units over the ranks, or train each unit together (DDP)",
    )
    a = p.parse_args(argv)
    chapters = a.chapters.split() or None
    if chapters:
        chapter_dirs(chapters)  # an unknown chapter: one line and exit status 2, before any stage
    sys.path.insert(0, str(ROOT / "book"))
    if a.command == "execute":
        return execute(chapters, a.jobs)
    if a.command == "build":
        return build(chapters)
    if a.command == "book":
        t0 = time.perf_counter()
        subprocess.run([str(Path(PY).parent / "nbdev_export")], cwd=ROOT, check=True)
        subprocess.run([PY, str(ROOT / "book" / "argdocs.py"), "write"], cwd=ROOT, check=True)
        rc = execute(chapters, a.jobs, reuse=True) or build(chapters)
        print(f"make book: {time.perf_counter() - t0:.0f} s")
        return rc
    if a.command == "test":
        return test(chapters)
    if a.command == "sync":
        return sync_check(chapters)
    if a.command == "lint":
        return lint_stage()
    if a.command == "pytest":
        return pytest_stage(chapters)
    if a.command == "browser":
        return browser(chapters)
    if a.command == "verdicts":
        return write_verdicts(chapters)
    if a.command == "run":
        if not a.notebook:
            sys.exit("make run needs NB=<notebook path>")
        return run_at_scale(a.notebook, a.scale, a.device, a.seed, a.nproc, a.parallel)
    return 2


if __name__ == "__main__":
    sys.exit(main())
