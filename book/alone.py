"""Run chapter notebooks the way a new user meets them: the wheel built from this checkout and the
chapter's extra installed into a fresh virtual environment, each notebook copied alone into an empty
folder outside the checkout, executed at its default parameters (scale "ci") with no network, no
`ICML26_RESULTS_DIR` and nothing of the repository on the path.

    python book/alone.py 02 05 09 11 14 17             # each chapter's experiments notebook
    python book/alone.py geopt --notebooks 06_experiments 90_exercises
    python book/alone.py --keep /tmp/alone afr_net     # keep the environments for a rerun
    make alone CHAPTERS="02 17"                        # the same through make

The environments take pip's configured indexes under requirements/pins.txt as constraints, with the
pinned CPU build of torch installed first. Prints, per chapter, the
install time and, per notebook, the wall time and the outcome; exits 1 if any notebook failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))
sys.path.insert(0, str(ROOT / "requirements"))

import execute  # noqa: E402
import pins  # noqa: E402

RUNNER = ["papermill", "ipykernel"]  # what a user's Jupyter brings; not the book's dependencies


def chapter_dir(name: str) -> Path:
    "The chapter folder nbs/NN_<slug> named by its number (`17`) or its package slug (`afr_net`)."
    dirs = sorted((ROOT / "nbs").glob("[0-9][0-9]_*"))
    hits = [d for d in dirs if name in (d.name[:2], d.name[3:], d.name)]
    if len(hits) != 1:
        raise SystemExit(f"no chapter folder for {name!r} under nbs/")
    return hits[0]


def experiments_notebook(ch: Path) -> Path:
    "The chapter's experiments notebook (the one that records its claims)."
    hits = sorted(ch.glob("*_experiments.ipynb"))
    if len(hits) != 1:
        raise SystemExit(f"{ch}: expected one *_experiments.ipynb, found {len(hits)}")
    return hits[0]


def build_wheel(dest: Path) -> Path:
    "The wheel of this checkout, built without its dependencies."
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    cmd = [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dest), str(ROOT)]
    subprocess.run(cmd, check=True, cwd=ROOT)
    return next(dest.glob("icml26_lit-*.whl"))


def make_env(where: Path, wheel: Path, slug: str) -> tuple[Path, float, str]:
    "A fresh venv with the wheel, its extra, the chapter's no-deps pins and a notebook runner."
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    py = where / "bin" / "python"
    pins_txt = str(ROOT / "requirements" / "pins.txt")
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-c", pins_txt]
    torch_pin = next(f"{n}=={v}" for n, v in pins.regular() if n == "torch")
    subprocess.run([*pip, torch_pin], check=True)  # first, so nothing pulls a CUDA build
    cuda = subprocess.run(
        [str(py), "-c", "import torch; print(torch.version.cuda)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if cuda != "None":
        raise SystemExit(f"{where}: pip installed a CUDA build of torch ({cuda}); stopping")
    spec = f"{wheel}[{slug.replace('_', '-')}]"  # a chapter's extra is its slug, hyphenated
    subprocess.run([*pip, spec, *RUNNER], check=True)
    nodeps = pins.nodeps_for(slug)
    if nodeps:
        subprocess.run([*pip, "--no-deps", *nodeps], check=True)
    what = f"{wheel.name}[{slug.replace('_', '-')}]"
    what += f" + --no-deps {' '.join(nodeps)}" if nodeps else ""
    return py, time.perf_counter() - t0, what


def run_alone(py: Path, nb: Path, folder: Path, timeout: float) -> tuple[bool, float, str]:
    "Copy `nb` alone into the empty `folder` and execute it there; (ok, wall seconds, tail)."
    folder.mkdir(parents=True)
    src = folder / nb.name
    shutil.copy(nb, src)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ICML26_RESULTS_DIR")}
    env["OMP_NUM_THREADS"] = "1"  # one thread, as the book times its notebooks
    env["PATH"] = f"{py.parent}:{env.get('PATH', '')}"
    # papermill through the book's runner, which only keeps its kernel client from waiting on a
    # channel forever (a known hang after ipywidgets cells); the notebook itself runs unchanged
    runner = ROOT / "book" / "papermill_client.py"
    cmd = [str(py), str(runner), str(src), str(folder / "out.ipynb"), "-k", "python3"]
    cmd += ["--log-level", "ERROR"]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            execute.offline_prefix() + cmd,
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        ok, tail = p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        ok, tail = False, f"stopped after {timeout:.0f} s"
    return ok, time.perf_counter() - t0, tail


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chapters", nargs="+", help="chapter numbers or package slugs: 02 or geopt")
    ap.add_argument("--notebooks", nargs="*", help="notebook stems (default: the experiments one)")
    ap.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per notebook")
    ap.add_argument("--json", type=Path, help="write the measurements here too")
    a = ap.parse_args(argv)
    work = a.keep or Path(tempfile.mkdtemp(prefix="icml26-alone-"))
    work.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(work / "wheel")
    report, bad = [], 0
    for name in a.chapters:
        ch = chapter_dir(name)
        slug = ch.name[3:]
        nbs = (
            [ch / f"{s}.ipynb" for s in a.notebooks] if a.notebooks else [experiments_notebook(ch)]
        )
        env_dir = work / slug / "venv"
        shutil.rmtree(work / slug, ignore_errors=True)
        py, t_install, what = make_env(env_dir, wheel, slug)
        print(f"{slug}: pip install {what}: {t_install:.0f} s", flush=True)
        for nb in nbs:
            ok, wall, tail = run_alone(py, nb, work / slug / nb.stem, a.timeout)
            bad += not ok
            print(
                f"  {'ok' if ok else 'FAILED':6s} {wall:7.1f} s  {nb.relative_to(ROOT)}", flush=True
            )
            if not ok:
                print(tail)
            report.append(
                dict(
                    chapter=slug,
                    notebook=str(nb.relative_to(ROOT)),
                    ok=ok,
                    wall_s=round(wall, 1),
                    install_s=round(t_install, 1),
                    install=what,
                )
            )
    if a.json:
        a.json.write_text(json.dumps(report, indent=1) + "\n")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
