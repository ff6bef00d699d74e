#!/usr/bin/env python
"""The book's pipeline: execute notebooks with papermill, build and check the HTML book, run one
experiment at a larger scale, and drive `make test` stage by stage.

    python book/pipeline.py execute [--chapters "01 06"]      # papermill, scale=ci, two at a time
    python book/pipeline.py build   [--chapters ...]          # Jupyter Book from the executed copies
    python book/pipeline.py book    [--chapters ...]          # export + execute + build
    python book/pipeline.py test    [--chapters ...]          # every check, stage by stage
    python book/pipeline.py run NB --scale cpu|colab|full       # one notebook -> results/<slug>/<scale>.json
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
BUILD = ROOT / "_build"
EXEC = BUILD / "exec"
CLAIMS = BUILD / "claims"
HTML = ROOT / "book" / "_build" / "html"
PY = sys.executable
SUBSTRATES = ("sphere", "sim", "md", "flows")
BOOTSTRAP_MARK = "icml26-lit: colab bootstrap"
LAST = ("index.ipynb", "performance.ipynb")  # run after every chapter: they read its claims and times


# ----------------------------------------------------------------------------- selection
NO_CORE = os.environ.get("ICML26_NO_CORE") == "1"  # quick iteration on one chapter: skip chapter 0


def chapter_dirs(chapters: list[str] | None) -> list[Path]:
    "nbs/00_core and the chapter folders named by two-digit numbers (all when None)."
    dirs = sorted(p for p in NBS.iterdir() if p.is_dir() and re.match(r"\d\d_", p.name))
    if chapters:
        unknown = set(chapters) - {d.name[:2] for d in dirs}
        if unknown:
            print(f"CHAPTERS names unknown chapters {sorted(unknown)}; known: {' '.join(d.name[:2] for d in dirs)}")
            raise SystemExit(2)
        dirs = [d for d in dirs if (d.name[:2] == "00" and not NO_CORE) or d.name[:2] in chapters]
    return dirs


def notebooks(chapters: list[str] | None) -> list[Path]:
    "Every notebook to execute, the front page last."
    nbs = [nb for d in chapter_dirs(chapters) for nb in sorted(d.glob("*.ipynb"))]
    top = sorted(NBS.glob("*.ipynb"), key=lambda p: (p.name in LAST, p.name)) if not NO_CORE else []
    return nbs + top


def test_dirs(chapters: list[str] | None) -> list[Path]:
    "tests/core, tests/example, and each chosen chapter's tests and substrate tests."
    out = [] if NO_CORE else [ROOT / "tests" / "core", ROOT / "tests" / "example"]
    for d in chapter_dirs(chapters):
        if d.name.startswith("00"):
            continue
        out.append(ROOT / "tests" / d.name[3:])
        for nb in d.glob("*.ipynb"):
            for sub in re.findall(r"default_exp (\w+)\.", nb.read_text()):
                if sub in SUBSTRATES:
                    out.append(ROOT / "tests" / sub)
    seen, res = set(), []
    for p in out:
        if p not in seen and p.is_dir() and any(p.glob("test_*.py")):
            seen.add(p)
            res.append(p)
    return res


def budget_s(nb: Path) -> int:
    "The CI budget of a notebook: 120 s for experiments, 30 s for every other notebook."
    return 120 if "experiments" in nb.stem else 30


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def has_parameters(nb: Path) -> bool:
    cells = json.loads(nb.read_text())["cells"]
    return any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells)


def exec_path(nb: Path) -> Path:
    return EXEC / nb.relative_to(ROOT)


# ----------------------------------------------------------------------------- execute
def _env() -> dict:
    env = dict(os.environ)
    # one thread each: numba too, because its OpenMP layer shares libgomp with torch, and code that
    # restores numba's thread count (aeon's MiniRocket does) would otherwise resize torch's pool
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               ICML26_BOOK="1", ICML26_CLAIMS_DIR=str(CLAIMS), PYTHONPATH=str(ROOT),
               NUMBA_CACHE_DIR=str(BUILD / "numba"), MPLBACKEND="Agg", HF_HUB_OFFLINE="1",
               PYDEVD_DISABLE_FILE_VALIDATION="1", TRITON_INTERPRET="0")
    return env


def nb_env(nb: Path, env: dict) -> dict:
    "The environment for one notebook: exercises notebooks choose the Triton interpreter themselves."
    if nb.stem.startswith("90_exercises"):  # their bootstrap sets TRITON_INTERPRET=1 without CUDA
        return {k: v for k, v in env.items() if k != "TRITON_INTERPRET"}
    return env


def offline_prefix() -> list[str]:
    "Run inside a fresh network namespace with only loopback up, when we can (root + unshare)."
    if os.environ.get("ICML26_ONLINE") == "1" or shutil.which("unshare") is None or os.geteuid() != 0:
        return []
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True)
    if probe.returncode != 0:
        return []
    ip = shutil.which("ip") or "/usr/sbin/ip"
    return ["unshare", "--net", "--", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh"]


def _failed_cell(out: Path) -> str:
    "The first cell of an executed notebook that raised: its number, first line and error."
    try:
        cells = json.loads(out.read_text())["cells"]
    except Exception:
        return "(no output notebook was written)"
    code_i = 0
    for c in cells:
        if c["cell_type"] != "code":
            continue
        code_i += 1
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                first = "".join(c["source"]).strip().splitlines()[:1]
                return (f"code cell {code_i} ({first[0][:60] if first else ''!r}): "
                        f"{o.get('ename')}: {str(o.get('evalue'))[:300]}")
    return "(no cell error recorded; see the log)"


def run_one(nb: Path, out: Path, params: dict, offline: list[str], env: dict, timeout: float,
            retries: int = 4):
    "Execute `nb` into `out`; a run killed at `timeout` (a hung kernel, not a failing cell) is retried."
    for attempt in range(retries + 1):
        wall, err, peak = _run_once(nb, out, params, offline, env, timeout)
        if err is None or not err.startswith("timed out") or attempt == retries:
            return wall, err, peak
        if out.exists():  # keep what the hung run had executed, for diagnosis
            shutil.copy2(out, BUILD / "logs" / f"{nb.stem}.hung-{attempt + 1}.ipynb")
        print(f"  retry  {nb.name}: {err}; running it again", flush=True)


def _run_once(nb: Path, out: Path, params: dict, offline: list[str], env: dict, timeout: float):
    out.parent.mkdir(parents=True, exist_ok=True)
    # papermill through papermill_client.py: its kernel client never waits on a channel forever
    cmd = [PY, str(ROOT / "book" / "papermill_client.py"), str(nb), str(out), "-k", "python3",
           "--cwd", str(nb.parent), "--no-progress-bar"]
    if has_parameters(nb):
        for k, v in params.items():
            cmd += ["-p", k, str(v)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(offline + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    killed = []

    def _kill():
        killed.append(True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # papermill and its kernel
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, _kill)
    timer.start()
    log = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # usage covers the kernel too (a waited-for descendant)
    timer.cancel()
    proc.returncode = rc = os.waitstatus_to_exitcode(status)
    peak_mb = usage.ru_maxrss / 1024
    if killed:
        rc, log = -9, f"killed after {timeout:.0f} s\n{log}"
    wall = time.perf_counter() - t0
    if rc == 0:
        data = json.loads(out.read_text())
        rel = nb.relative_to(ROOT) if nb.is_relative_to(ROOT) else nb
        data["metadata"]["icml26"] = dict(source=str(rel), source_sha=sha(nb), wall_s=round(wall, 2),
                                          params=params, package_sha=env.get("ICML26_PACKAGE_SHA"))
        out.write_text(json.dumps(data, indent=1))
        return wall, None, peak_mb
    err = _failed_cell(out) if rc != -9 else f"timed out after {timeout:.0f} s"
    (BUILD / "logs").mkdir(parents=True, exist_ok=True)
    logf = BUILD / "logs" / (nb.stem + ".log")
    logf.write_text(log)
    return wall, f"{err} (log: {logf.relative_to(ROOT) if logf.is_relative_to(ROOT) else logf})", peak_mb


def package_sha() -> str:
    "One hash of the package's source: a notebook run against other code is not reused."
    h = hashlib.sha256()
    for f in sorted((ROOT / "icml26_lit").rglob("*.py")):
        h.update(f.relative_to(ROOT).as_posix().encode() + f.read_bytes())
    return h.hexdigest()


def reusable(nb: Path, params: dict, pkg: str) -> bool:
    "An executed copy whose source, parameters and package are those of this run (`make book`)."
    out = exec_path(nb)
    if nb.name in LAST or not out.exists():
        return False
    meta = json.loads(out.read_text())["metadata"].get("icml26", {})
    return (meta.get("source_sha") == sha(nb) and meta.get("params") == params
            and meta.get("package_sha") == pkg)


def execute(chapters: list[str] | None, jobs: int = 2, offline: bool = True, reuse: bool = False) -> int:
    "Execute the notebooks at scale=ci, two at a time; print the timing table; 1 on any failure."
    nbs = notebooks(chapters)
    params, pkg = dict(scale="ci", seed=0, device="auto"), package_sha()
    fresh = {nb for nb in nbs if reuse and reusable(nb, params, pkg)}
    CLAIMS.mkdir(parents=True, exist_ok=True)
    keep = None if not chapters else set(chapters)
    rerun = {nb.parent.name[:2] for nb in nbs if nb not in fresh and nb.parent != NBS}
    for f in CLAIMS.glob("*.json"):  # claims of the chapters about to run are recomputed
        if (keep is None or f.name[:2] in keep or f.name[:2] == "00") and f.name[:2] in rerun:
            f.unlink()
    if offline and os.environ.get("ICML26_ONLINE") != "1" and not (shutil.which("ip") or Path("/usr/sbin/ip").exists()):
        print("the papermill stage runs each notebook in a network namespace with only loopback up, which "
              "needs iproute2: apt-get install iproute2 (or set ICML26_ONLINE=1 to run without the check)")
        return 1
    prefix = offline_prefix() if offline else []
    print(f"executing {len(nbs)} notebooks at scale=ci, {jobs} at a time"
          f"{', offline (network namespace with loopback only)' if prefix else ''}", flush=True)
    env = dict(_env(), ICML26_PACKAGE_SHA=pkg)
    first = [nb for nb in nbs if (nb.name not in LAST or nb.parent != NBS) and nb not in fresh]
    last = [nb for nb in nbs if nb not in first and nb not in fresh]
    results = {}
    for nb in sorted(fresh):
        meta = json.loads(exec_path(nb).read_text())["metadata"]["icml26"]
        results[nb] = (meta.get("wall_s", 0.0), None, 0.0)
    if fresh:
        print(f"  reused {len(fresh)} executed notebooks (same source, parameters and package)")
    with cf.ThreadPoolExecutor(jobs) as pool:
        futs = {pool.submit(run_one, nb, exec_path(nb), params, prefix, nb_env(nb, env),
                            2 * budget_s(nb) + 60): nb for nb in first}
        for f in cf.as_completed(futs):
            nb = futs[f]
            results[nb] = f.result()
            wall, err, _ = results[nb]
            print(f"  {'FAILED' if err else 'ok':6s} {wall:7.1f} s  {nb.relative_to(ROOT)}", flush=True)
    TIMINGS["notebooks"] = {str(nb.relative_to(ROOT)): round(r[0], 1) for nb, r in results.items()}
    write_timings()  # the Performance page, run last, projects the 19-chapter run from these
    for nb in last:
        results[nb] = run_one(nb, exec_path(nb), params, prefix, env, 2 * budget_s(nb) + 60)
        print(f"  {'FAILED' if results[nb][1] else 'ok':6s} {results[nb][0]:7.1f} s  "
              f"{nb.relative_to(ROOT)}", flush=True)
    return timing_table(results)


def timing_table(results: dict) -> int:
    print("\nnotebook timings (scale=ci)")
    print(f"  {'seconds':>8s} {'budget':>7s} {'peak MB':>8s}  status          notebook")
    bad = 0
    for nb in sorted(results, key=lambda p: str(p)):
        wall, err, peak = results[nb]
        b = budget_s(nb)
        status = "FAILED" if err else ("OVER BUDGET" if wall > b else ("OVER 2 GB" if peak > 2048 else "ok"))
        if err or wall > 1.5 * b:
            bad += 1
        print(f"  {wall:8.1f} {b:7d} {peak:8.0f}  {status:15s} {nb.relative_to(ROOT)}")
        if err:
            print(f"      -> {err}")
    total = sum(r[0] for r in results.values())
    print(f"  {total:8.1f} s of notebook time in all")
    over = [nb for nb, (w, e, _) in results.items() if not e and w > budget_s(nb)]
    if over:
        print(f"  {len(over)} notebook(s) over budget; more than 1.5x the budget fails the run")
    fails = [nb for nb, (w, e, _) in results.items() if e]
    print(f"  peak memory of any notebook: {max((r[2] for r in results.values()), default=0):.0f} MB "
          f"(Binder gives 2048 MB)")
    if fails:
        print("FAILED notebooks: " + ", ".join(str(nb.relative_to(ROOT)) for nb in fails))
    return 1 if bad else 0


# ----------------------------------------------------------------------------- build
def toc_files(toc: Path) -> list[str]:
    return re.findall(r"(?:root|file):\s*(\S+)", toc.read_text())


def filtered_toc(chapters: list[str] | None) -> Path:
    "The book's _toc.yml, or one written by make_toc for the chosen chapters only."
    if not chapters:
        return ROOT / "_toc.yml"
    from make_toc import make_toc  # book/make_toc.py
    path = BUILD / "_toc.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(make_toc(only=[d.name[:2] for d in chapter_dirs(chapters)]))
    return path


DIRECTIVE = re.compile(r"#\|\s*([\w-]+)")


def prepare_executed(nb_out: Path) -> None:
    "Hide bootstrap, nbdev and injected cells in an executed copy; drop `#|` lines from the rest."
    data = json.loads(nb_out.read_text())
    for c in data["cells"]:
        src = "".join(c.get("source", ""))
        tags = c.setdefault("metadata", {}).setdefault("tags", [])
        lines = src.splitlines(keepends=True)
        n_dir = next((i for i, line in enumerate(lines) if not line.lstrip().startswith("#|")), len(lines))
        names = {m.group(1) for line in lines[:n_dir] if (m := DIRECTIVE.match(line.lstrip()))}
        code = c["cell_type"] == "code"
        hide = BOOTSTRAP_MARK in src or "injected-parameters" in tags or (code and names & {"default_exp", "hide"})
        if hide and "remove-cell" not in tags:
            tags.append("remove-cell")
        if code and "remove-input" in names and "remove-input" not in tags:
            tags.append("remove-input")
        if code and n_dir and not hide:  # the book shows code, not nbdev's directives
            c["source"] = "".join(lines[n_dir:])
    nb_out.write_text(json.dumps(data, indent=1))


def build(chapters: list[str] | None, warnings_as_errors: bool = True) -> int:
    "Build the HTML book from executed copies, refusing stale or missing ones."
    from vendor import vendor_assets  # book/vendor.py
    toc = filtered_toc(chapters)
    stale = []
    for f in toc_files(toc):
        src = ROOT / f
        if src.with_suffix(".md").exists():
            dst = EXEC / f"{f}.md"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src.with_suffix(".md"), dst)
            continue
        nb = src.with_suffix(".ipynb")
        out = exec_path(nb)
        if not nb.exists():
            stale.append(f"{f}: listed in the table of contents but {nb.relative_to(ROOT)} does not exist")
        elif not out.exists():
            stale.append(f"{f}: no executed copy; run `make book`")
        else:
            meta = json.loads(out.read_text())["metadata"].get("icml26", {})
            if meta.get("source_sha") != sha(nb) or out.stat().st_mtime < nb.stat().st_mtime:
                stale.append(f"{f}: the executed copy is older than its source notebook; run `make book`")
            else:
                prepare_executed(out)
    if stale:
        print("refusing to build the book from stale or missing executed notebooks:")
        print("\n".join("  " + s for s in stale))
        return 1
    # Jupyter Book adds every script under every static folder to every page when the source has
    # a `_static` folder, so ours is called `_assets` and the vendored libraries (MathJax has
    # hundreds of lazily loaded components) live in `_vendor`.
    shutil.copytree(ROOT / "book" / "_static", EXEC / "_assets", dirs_exist_ok=True)
    shutil.copytree(vendor_assets(BUILD / "vendor"), EXEC / "_vendor" / "vendor", dirs_exist_ok=True)
    shutil.copy2(ROOT / "book" / "references.bib", EXEC / "references.bib")
    if HTML.exists():
        shutil.rmtree(HTML)
    cmd = [str(Path(PY).parent / "jupyter-book"), "build", str(EXEC), "--config",
           str(ROOT / "book" / "_config.yml"), "--toc", str(toc), "--path-output", str(ROOT / "book")]
    if warnings_as_errors:
        cmd += ["-W", "-n", "--keep-going"]
    p = subprocess.run(cmd, text=True, capture_output=True)
    print(p.stdout[-6000:] if p.returncode else p.stdout[-600:])
    if p.returncode:
        print(p.stderr[-6000:])
        print("the book build failed (warnings are errors)")
        return 1
    print(f"the book is at {HTML / 'index.html'}  (open file://{HTML / 'index.html'})")
    return 0


# ----------------------------------------------------------------------------- sync and pytest
def sync_check(chapters: list[str] | None) -> int:
    "Notebooks clean and the package exported from them: nbdev_clean + nbdev_export change nothing."
    bindir = Path(PY).parent
    for tool in ("nbdev_clean", "nbdev_export"):
        p = subprocess.run([str(bindir / tool)], cwd=ROOT, capture_output=True, text=True)
        if p.returncode:
            print(f"{tool} failed:\n{p.stdout}{p.stderr}")
            return 1
    paths = ["nbs", "icml26_lit"]
    diff = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=ROOT, capture_output=True,
                          text=True).stdout.splitlines()
    if chapters:  # quick iteration: only tracked files must be unchanged
        diff = [l for l in diff if not l.startswith("??")]
    if diff:
        print("notebooks or package out of sync (run `nbdev_clean && nbdev_export` and commit both):")
        print("\n".join("  " + l for l in diff[:40]))
        return 1
    print("notebooks are clean and the package is in sync with them")
    return 0


def pytest_stage(chapters: list[str] | None, workers: int = 2) -> int:
    "pytest over every chosen test folder, on `workers` processes; per-folder times from the junit report."
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
        print(f"  {'ok' if not bad else 'FAILED':6s} {secs:6.1f} s  tests/{folder}: {ok} passed, {bad} failed{flag}")
    TIMINGS["pytest_folders"] = {f: round(r[0], 1) for f, r in folders.items()}
    PYTEST_TOTALS.update(totals)
    return 1 if p.returncode else 0


PYTEST_TOTALS: dict = {}
TIMINGS: dict = {}  # written to book/_build/timings.json by `make test`
TIMINGS_PATH = ROOT / "book" / "_build" / "timings.json"


def write_timings() -> None:
    "Per-stage, per-test-folder and per-notebook seconds of this run, for the Performance page."
    TIMINGS_PATH.parent.mkdir(parents=True, exist_ok=True)
    TIMINGS["written_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    TIMINGS_PATH.write_text(json.dumps(TIMINGS, indent=1))


# ----------------------------------------------------------------------------- make test
def test(chapters: list[str] | None) -> int:
    stages = [("sync: nbdev_clean + nbdev_export, no diff", lambda: sync_check(chapters)),
              ("pytest (kernels in the interpreter, compile checks)", lambda: pytest_stage(chapters)),
              ("papermill: every notebook at scale=ci", lambda: execute(chapters)),
              ("book build, warnings as errors", lambda: build(chapters)),
              ("browser check (headless Chromium)", lambda: browser(chapters))]
    times, failed = [], []
    for name, fn in stages:
        if failed and name.startswith(("book", "browser")) and any(f.startswith(("papermill", "book"))
                                                                  for f in failed):
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
        print(f"pytest: {t['passed']} passed, {t['failed'] + t['error']} failed, {t['skipped']} skipped")
    return 1 if failed else 0


def browser(chapters: list[str] | None) -> int:
    sys.path.insert(0, str(ROOT / "book"))
    from browser_check import main as check
    return check([])


# ----------------------------------------------------------------------------- make run
def run_at_scale(nb: str, scale: str, device: str, seed: int = 0) -> int:
    "Run one experiments notebook at a larger scale; write results/<slug>/<scale>.json."
    sys.path.insert(0, str(ROOT))
    from icml26_lit.core import Scale, get_device, provenance, load_claims
    scale = Scale.get(scale).name
    dev = get_device(device)
    path = (ROOT / nb).resolve()
    if not path.exists() or path.suffix != ".ipynb":
        sys.exit(f"NB={nb!r} is not a notebook path (e.g. nbs/06_flashschnet/05_experiments.ipynb)")
    if not has_parameters(path):
        sys.exit(f"{nb} has no `parameters` cell: only experiments notebooks can be run at a scale")
    folder = path.parent.name
    m = re.search(r"default_exp (\w+)\.", path.read_text())  # the chapter's package, e.g. flashschnet
    slug = m.group(1) if m else (folder[3:] if re.match(r"\d\d_", folder) else folder)
    try:
        mod = importlib.import_module(f"icml26_lit.{slug}.experiments")
    except ImportError:
        mod = None
    presets = getattr(getattr(mod, "CONFIG", None), "scales", None)
    if presets is not None and scale not in presets:
        print(f"{nb} has no {scale} preset (it has {', '.join(presets)}); no results file written")
        return 2
    claims = Path(tempfile.mkdtemp(prefix="claims-"))
    env = dict(_env(), ICML26_CLAIMS_DIR=str(claims), ICML26_BOOK="0")
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env.pop(k)  # a larger run may use every core
    out = BUILD / "runs" / f"{slug}-{scale}-{path.stem}.ipynb"
    wall, err, _ = run_one(path, out, dict(scale=scale, seed=seed, device=device), [], env, 48 * 3600)
    if err:
        print(f"{nb} failed: {err}")
        return 1
    res = dict(notebook=str(path.relative_to(ROOT)), scale=scale, seed=seed,
               provenance=provenance(str(dev)), wall_s=round(wall, 1),
               claims=[asdict(c) for c in load_claims(directory=claims)])
    dst = ROOT / "results" / slug / f"{scale}.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(res, indent=1))
    os.replace(tmp, dst)  # a results file is written whole or not at all
    print(f"{nb} at scale={scale} on {res['provenance']['device_name']}: {wall:.0f} s; wrote {dst}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["execute", "build", "book", "test", "run", "sync", "pytest", "browser"])
    p.add_argument("notebook", nargs="?")
    p.add_argument("--chapters", default="", help='two-digit chapter numbers, e.g. "06 09"')
    p.add_argument("--scale", default="colab", help="ci, cpu, colab or full")
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
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
        rc = execute(chapters, a.jobs, reuse=True) or build(chapters)
        print(f"make book: {time.perf_counter() - t0:.0f} s")
        return rc
    if a.command == "test":
        return test(chapters)
    if a.command == "sync":
        return sync_check(chapters)
    if a.command == "pytest":
        return pytest_stage(chapters)
    if a.command == "browser":
        return browser(chapters)
    if a.command == "run":
        if not a.notebook:
            sys.exit("make run needs NB=<notebook path>")
        return run_at_scale(a.notebook, a.scale, a.device, a.seed)
    return 2


if __name__ == "__main__":
    sys.exit(main())
