"""Execute notebooks with papermill: offline, one thread each, with a time limit. An executed copy
records its source, parameters and package, so `make book` can reuse it."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from layout import (
    BUILD,
    CLAIMS,
    LAST,
    NBS,
    PY,
    ROOT,
    TIMINGS,
    budget_s,
    exec_path,
    has_parameters,
    notebooks,
    sha,
    write_timings,
)

CPU_S: dict[Path, float] = {}  # notebook -> CPU seconds of its last run (papermill + kernel)
# The machine's slowness against the reference machine the budgets were set on, measured by the
# speed probe (icml26_lit.core.scale.speed_probe) before and after the stage: the runner stops a
# notebook at 1.5 x its budget x this factor, clipped to [1, SPEED_CAP]
SPEED: dict[str, float] = {}
SPEED_CAP = 3.0  # beyond 3x slower the machine is broken, not slow: the budgets stay as they are


def _env() -> dict:
    env = dict(os.environ)
    # one thread each: numba too, because its OpenMP layer shares libgomp with torch, and code that
    # restores numba's thread count (aeon's MiniRocket does) would otherwise resize torch's pool
    env.update(
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        NUMBA_NUM_THREADS="1",
        ICML26_BOOK="1",
        ICML26_CLAIMS_DIR=str(CLAIMS),
        PYTHONPATH=str(ROOT),
        NUMBA_CACHE_DIR=str(BUILD / "numba"),
        MPLBACKEND="Agg",
        HF_HUB_OFFLINE="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        TRITON_INTERPRET="0",
    )
    return env


def installed_package() -> Path:
    "The package as users get it: the wheel built from this checkout, installed into a folder."
    wheels, site = BUILD / "wheel", BUILD / "wheel-site"
    for d in (wheels, site):
        shutil.rmtree(d, ignore_errors=True)
    pip = [PY, "-m", "pip", "--disable-pip-version-check"]
    build = [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(ROOT)]
    subprocess.run(build, check=True, cwd=ROOT)
    wheel = next(wheels.glob("icml26_lit-*.whl"))
    install = [*pip, "install", "-q", "--no-deps", "--target", str(site), str(wheel)]
    subprocess.run(install, check=True)
    return site


def as_a_user(nb: Path, env: dict, site: Path, run_dir: Path) -> tuple[Path, dict]:
    """A chapter notebook runs as a reader runs it: a copy in a folder outside the checkout, the
    installed wheel on the path instead of the repository, the committed results (the only
    repository files a notebook may read) through `ICML26_RESULTS_DIR`. The book's own pages
    (index, performance) read the checkout and run in it."""
    if nb.parent == NBS:
        return nb, env
    copy = run_dir / nb.parent.name / nb.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(nb, copy)
    return copy, dict(env, PYTHONPATH=str(site), ICML26_RESULTS_DIR=str(ROOT / "results"))


def measure_speed() -> float:
    "Run the speed probe in a fresh one-thread process; its time over the reference machine's."
    code = (
        "from icml26_lit.core.scale import speed_probe, PROBE_REFERENCE_S as r; "
        "print(speed_probe() / r)"
    )
    env = {k: v for k, v in _env().items() if k != "ICML26_SPEED_FACTOR"}
    r = subprocess.run(
        [PY, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    if r.returncode != 0:
        raise RuntimeError("the speed probe failed:\n" + r.stderr[-2000:])
    return float(r.stdout.split()[-1])


def stop_factor() -> float:
    "The factor on every budget's 1.5x stop limit: the slower probe of the run, in [1, SPEED_CAP]."
    return min(SPEED_CAP, max([1.0, *SPEED.values()]))


def nb_env(nb: Path, env: dict) -> dict:
    "One notebook's environment: exercises notebooks choose the Triton interpreter themselves."
    if nb.stem.startswith("90_exercises"):  # their bootstrap sets TRITON_INTERPRET=1 without CUDA
        return {k: v for k, v in env.items() if k != "TRITON_INTERPRET"}
    return env


def offline_prefix() -> list[str]:
    "Run inside a fresh network namespace with only loopback up, when we can (root + unshare)."
    if (
        os.environ.get("ICML26_ONLINE") == "1"
        or shutil.which("unshare") is None
        or os.geteuid() != 0
    ):
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
                return (
                    f"code cell {code_i} ({first[0][:60] if first else ''!r}): "
                    f"{o.get('ename')}: {str(o.get('evalue'))[:300]}"
                )
    return "(no cell error recorded; see the log)"


def run_one(
    nb: Path,
    out: Path,
    params: dict,
    offline: list[str],
    env: dict,
    timeout: float,
    retries: int = 4,
    src: Path | None = None,
):
    "Execute `nb` (or its copy `src`) into `out`; a run killed at `timeout` is retried."
    for attempt in range(retries + 1):
        wall, err, peak = _run_once(nb, out, params, offline, env, timeout, src or nb)
        if err is None or not err.startswith("timed out") or attempt == retries:
            return wall, err, peak
        if out.exists():  # keep what the hung run had executed, for diagnosis
            shutil.copy2(out, BUILD / "logs" / f"{nb.stem}.hung-{attempt + 1}.ipynb")
        print(f"  retry  {nb.name}: {err}; running it again", flush=True)


def _run_once(
    nb: Path, out: Path, params: dict, offline: list[str], env: dict, timeout: float, src: Path
):
    out.parent.mkdir(parents=True, exist_ok=True)
    # papermill through papermill_client.py: its kernel client never waits on a channel forever
    cmd = [
        PY,
        str(ROOT / "book" / "papermill_client.py"),
        str(src),
        str(out),
        "-k",
        "python3",
        "--cwd",
        str(src.parent),
        "--no-progress-bar",
    ]
    if has_parameters(nb):
        for k, v in params.items():
            cmd += ["-p", k, str(v)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        offline + cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
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
    _, status, usage = os.wait4(
        proc.pid, 0
    )  # usage covers the kernel too (a waited-for descendant)
    timer.cancel()
    proc.returncode = rc = os.waitstatus_to_exitcode(status)
    peak_mb = usage.ru_maxrss / 1024
    # CPU seconds of papermill and its kernel: on a loaded machine, wall time overstates what a
    # notebook costs; one-thread CPU time is close to its wall time on an idle core
    CPU_S[nb] = usage.ru_utime + usage.ru_stime
    if killed:
        rc, log = -9, f"killed after {timeout:.0f} s\n{log}"
    wall = time.perf_counter() - t0
    if rc == 0:
        data = json.loads(out.read_text())
        rel = nb.relative_to(ROOT) if nb.is_relative_to(ROOT) else nb
        data["metadata"]["icml26"] = dict(
            source=str(rel),
            source_sha=sha(nb),
            wall_s=round(wall, 2),
            cpu_s=round(CPU_S[nb], 2),
            params=params,
            package_sha=env.get("ICML26_PACKAGE_SHA"),
        )
        out.write_text(json.dumps(data, indent=1))
        return wall, None, peak_mb
    err = _failed_cell(out) if rc != -9 else f"timed out after {timeout:.0f} s"
    (BUILD / "logs").mkdir(parents=True, exist_ok=True)
    logf = BUILD / "logs" / (nb.stem + ".log")
    logf.write_text(log)
    return (
        wall,
        f"{err} (log: {logf.relative_to(ROOT) if logf.is_relative_to(ROOT) else logf})",
        peak_mb,
    )


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
    return (
        meta.get("source_sha") == sha(nb)
        and meta.get("params") == params
        and meta.get("package_sha") == pkg
    )


def execute(
    chapters: list[str] | None, jobs: int = 2, offline: bool = True, reuse: bool = False
) -> int:
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
    if (
        offline
        and os.environ.get("ICML26_ONLINE") != "1"
        and not (shutil.which("ip") or Path("/usr/sbin/ip").exists())
    ):
        print(
            "the papermill stage runs each notebook in a network namespace with only loopback up, "
            "which needs iproute2: apt-get install iproute2 (or set ICML26_ONLINE=1 to run "
            "without the check)"
        )
        return 1
    prefix = offline_prefix() if offline else []
    print(
        f"executing {len(nbs)} notebooks at scale=ci, {jobs} at a time"
        f"{', offline (network namespace with loopback only)' if prefix else ''}",
        flush=True,
    )
    SPEED.clear()
    SPEED["start"] = measure_speed()
    print(
        f"speed probe: this machine is {SPEED['start']:.2f}x the reference's time; the runner "
        f"stops a notebook at 1.5 x its budget x {stop_factor():.2f}",
        flush=True,
    )
    env = dict(_env(), ICML26_PACKAGE_SHA=pkg, ICML26_SPEED_FACTOR=f"{stop_factor():.3f}")
    t0 = time.perf_counter()
    site = installed_package()
    run_dir = Path(tempfile.mkdtemp(prefix="icml26-notebooks-"))
    print(
        f"chapter notebooks run from copies in {run_dir} against the wheel installed in "
        f"{site.relative_to(ROOT)} ({time.perf_counter() - t0:.0f} s to build and install)",
        flush=True,
    )
    user = {nb: as_a_user(nb, nb_env(nb, env), site, run_dir) for nb in nbs}
    first = [nb for nb in nbs if (nb.name not in LAST or nb.parent != NBS) and nb not in fresh]
    last = [nb for nb in nbs if nb not in first and nb not in fresh]
    results = {}
    for nb in sorted(fresh):
        meta = json.loads(exec_path(nb).read_text())["metadata"]["icml26"]
        results[nb] = (meta.get("wall_s", 0.0), None, 0.0)
        CPU_S[nb] = meta.get("cpu_s", 0.0)
    if fresh:
        print(f"  reused {len(fresh)} executed notebooks (same source, parameters and package)")
    with cf.ThreadPoolExecutor(jobs) as pool:
        futs = {
            pool.submit(
                run_one,
                nb,
                exec_path(nb),
                params,
                prefix,
                user[nb][1],
                timeout_s(nb),
                4,
                user[nb][0],
            ): nb
            for nb in first
        }
        for f in cf.as_completed(futs):
            nb = futs[f]
            results[nb] = f.result()
            wall, err, _ = results[nb]
            cpu = CPU_S.get(nb, 0.0)
            print(
                f"  {'FAILED' if err else 'ok':6s} {wall:7.1f} s  ({cpu:6.1f} s cpu)  "
                f"{nb.relative_to(ROOT)}",
                flush=True,
            )
    SPEED["end"] = measure_speed()  # a machine that slowed during the stage: the slower counts
    TIMINGS["speed"] = dict(SPEED, stop_factor=round(stop_factor(), 3))
    TIMINGS["notebooks"] = {str(nb.relative_to(ROOT)): round(r[0], 1) for nb, r in results.items()}
    TIMINGS["notebooks_cpu"] = {
        str(nb.relative_to(ROOT)): round(CPU_S.get(nb, 0.0), 1) for nb in results
    }
    write_timings()  # the Performance page, run last, projects the 19-chapter run from these
    for nb in last:
        src, nb_environ = user[nb]
        results[nb] = run_one(nb, exec_path(nb), params, prefix, nb_environ, timeout_s(nb), 4, src)
        print(
            f"  {'FAILED' if results[nb][1] else 'ok':6s} {results[nb][0]:7.1f} s  "
            f"{nb.relative_to(ROOT)}",
            flush=True,
        )
    shutil.rmtree(run_dir, ignore_errors=True)
    return timing_table(results)


def timeout_s(nb: Path) -> float:
    "Kill a notebook's kernel past twice its budget plus a minute, times the speed factor."
    return (2 * budget_s(nb) + 60) * stop_factor()


def timing_table(results: dict) -> int:
    print("\nnotebook timings (scale=ci)")
    if SPEED:
        print(
            "  speed probe: "
            + ", ".join(f"{k} {v:.2f}x" for k, v in SPEED.items())
            + f" the reference machine's time; stop limit 1.5 x budget x {stop_factor():.2f}"
        )
    print(
        f"  {'seconds':>8s} {'cpu s':>7s} {'budget':>7s} {'peak MB':>8s}  status          notebook"
    )
    bad = 0
    for nb in sorted(results, key=lambda p: str(p)):
        wall, err, peak = results[nb]
        b = budget_s(nb)
        status = (
            "FAILED"
            if err
            else ("OVER BUDGET" if wall > b else ("OVER 2 GB" if peak > 2048 else "ok"))
        )
        if err or wall > 1.5 * b * stop_factor():
            bad += 1
        cpu = CPU_S.get(nb, 0.0)
        print(f"  {wall:8.1f} {cpu:7.1f} {b:7d} {peak:8.0f}  {status:15s} {nb.relative_to(ROOT)}")
        if err:
            print(f"      -> {err}")
    total = sum(r[0] for r in results.values())
    print(f"  {total:8.1f} s of notebook time in all")
    over = [nb for nb, (w, e, _) in results.items() if not e and w > budget_s(nb)]
    if over:
        print(
            f"  {len(over)} notebook(s) over budget; more than 1.5x the budget"
            f" x {stop_factor():.2f} (the speed factor) fails the run"
        )
    fails = [nb for nb, (w, e, _) in results.items() if e]
    print(
        f"  peak memory of any notebook: {max((r[2] for r in results.values()), default=0):.0f} MB "
        f"(Binder gives 2048 MB)"
    )
    if fails:
        print("FAILED notebooks: " + ", ".join(str(nb.relative_to(ROOT)) for nb in fails))
    return 1 if bad else 0
