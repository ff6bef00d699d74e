"""One chapter's experiment on many processes: run under torchrun, one process per rank.

    torchrun --standalone --nproc-per-node 4 book/run_distributed.py --slug example --scale full
    (or `make run NB=<experiments notebook> SCALE=full NPROC=4`)

The chapter's experiments module supplies run_experiment(cfg, seed, device), which splits its
units over the ranks with icml26_lit.core.distributed.map_units, and record_claims(results, cfg,
scale). Rank 0 records the claims and writes the results file: to a temporary name, renamed once
complete, so a run that fails on any rank leaves no file that looks finished.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parse_sets(items: list[str]) -> dict:
    "key=value overrides of the preset (values read as Python literals)."
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise SystemExit(f"--set {item!r}: expected key=value")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


def jsonable(obj):
    "obj with tuple keys joined by '|' and tensors and arrays as lists, for the results file."
    if isinstance(obj, dict):
        return {
            "|".join(map(str, k)) if isinstance(k, tuple) else str(k): jsonable(v)
            for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):  # torch tensors, numpy arrays and scalars
        return obj.tolist()
    return obj


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--slug", required=True, help="the chapter's package, e.g. example")
    p.add_argument("--scale", default="full")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto")
    p.add_argument("--set", nargs="*", default=[], help="preset overrides, key=value")
    p.add_argument("--out", default=None, help="results file (default results/<slug>/<scale>.json)")
    p.add_argument("--notebook", default=None, help="the experiments notebook, for the record")
    p.add_argument(
        "--parallel",
        default="units",
        choices=["units", "data"],
        help="split the units over the ranks, or run each unit on all of them (DDP)",
    )
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from icml26_lit.core import Config, Scale, get_device, load_claims, load_curves, provenance
    from icml26_lit.core.distributed import init_distributed

    mod = importlib.import_module(f"icml26_lit.{a.slug}.experiments")
    if not (hasattr(mod, "run_experiment") and hasattr(mod, "record_claims")):
        raise SystemExit(f"icml26_lit.{a.slug}.experiments has no run_experiment/record_claims")
    scale = Scale.get(a.scale).name
    dev = get_device(a.device)
    rank, world = init_distributed(str(dev))
    overrides = parse_sets(a.set)
    cfg = Config(mod.CONFIG.get(scale), **overrides)
    t0, c0 = time.perf_counter(), time.process_time()
    kw = {}
    if a.parallel != "units":  # only chapters whose training loops take part in DDP accept it
        if "parallel" not in inspect.signature(mod.run_experiment).parameters:
            raise SystemExit(f"icml26_lit.{a.slug}.experiments.run_experiment has no `parallel`")
        kw["parallel"] = a.parallel
    results = mod.run_experiment(cfg, a.seed, str(dev), **kw)
    if world > 1:
        import torch.distributed as dist

        dist.destroy_process_group()
    if rank != 0:
        return 0
    claims_dir = Path(tempfile.mkdtemp(prefix="claims-"))
    os.environ["ICML26_CLAIMS_DIR"] = str(claims_dir)
    mod.record_claims(results, cfg, scale)
    res = dict(
        notebook=a.notebook,
        scale=scale,
        seed=a.seed,
        provenance=provenance(str(dev)),
        wall_s=round(time.perf_counter() - t0, 1),
        cpu_s_rank0=round(time.process_time() - c0, 1),
        nproc=world,
        parallel=a.parallel,
        overrides=overrides,
        results=jsonable(results),
        claims=[asdict(c) for c in load_claims(directory=claims_dir)],
        curves=load_curves(directory=claims_dir),
    )
    dst = Path(a.out) if a.out else ROOT / "results" / a.slug / f"{scale}.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(res, indent=1))
    os.replace(tmp, dst)  # whole or not at all
    print(f"{a.slug} at scale={scale} on {world} process(es): {res['wall_s']:.0f} s; wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
