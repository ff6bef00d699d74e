"""Runs on many processes: the split, the gather, torchrun with gloo ranks, and one DDP step."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from icml26_lit.core.distributed import (
    map_units,
    rank_and_world,
    shard_batch,
    shard_slice,
    split_units,
    wrap_ddp,
)

ROOT = Path(__file__).resolve().parents[2]
TORCHRUN = str(Path(sys.executable).parent / "torchrun")
# one thread per rank in every run, so that one and two ranks reduce in the same order
ENV = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), TRITON_INTERPRET="0")


def test_split_is_a_partition_in_round_robin():
    for n, w in [(1, 1), (7, 3), (10, 10), (5, 2)]:
        parts = [split_units(range(n), r, w) for r in range(w)]
        assert sorted(sum(parts, [])) == list(range(n))
        assert parts[0][:2] == list(range(n))[0 : 2 * w : w]


@pytest.mark.parametrize(
    "args, match",
    [
        ((range(2), 0, 3), "NPROC=3 is larger than the 2 units"),
        ((range(4), 4, 4), "rank must be an integer in"),
        ((range(4), 0, 0), "world must be a positive integer"),
    ],
)
def test_split_rejects_bad_ranks(args, match):
    with pytest.raises(ValueError, match=match):
        split_units(*args)


def test_one_process_map_keeps_order_and_names_a_failing_unit():
    assert rank_and_world() == (0, 1)
    assert map_units(lambda u: -u, [5, 3, 4]) == [-5, -3, -4]
    with pytest.raises(RuntimeError, match=r"(?s)rank 0 failed on unit 'b'.*KeyError"):
        map_units(lambda u: {"a": 1}[u], ["a", "b"])


def test_bad_env_and_batches_are_named(monkeypatch):
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="RANK='2' and WORLD_SIZE='2'"):
        rank_and_world()
    with pytest.raises(ValueError, match="does not split evenly over 3 ranks"):
        shard_batch(torch.zeros(4, 2), 0, 3)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        wrap_ddp("not a model")


def _run(nproc: int, out: Path, *sets: str) -> subprocess.CompletedProcess:
    script = [str(ROOT / "book" / "run_distributed.py"), "--slug", "example", "--scale", "ci"]
    script += ["--out", str(out), "--set", "n_steps=40", "n_test=256", *sets]
    cmd = [TORCHRUN, "--standalone", f"--nproc-per-node={nproc}"] if nproc > 1 else [sys.executable]
    return subprocess.run(cmd + script, env=ENV, cwd=ROOT, capture_output=True, text=True)


def test_two_gloo_ranks_write_the_claims_of_one(tmp_path):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    for n, out in [(1, one), (2, two)]:
        p = _run(n, out)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    a, b = json.loads(one.read_text()), json.loads(two.read_text())
    assert (a["nproc"], b["nproc"]) == (1, 2)
    assert a["results"].keys() == b["results"].keys()
    for k in a["results"]:  # same seeds, same numbers: each unit depends on its seed alone
        if k != "curves":  # the curves are compared below, as the results file stores them
            assert a["results"][k] == pytest.approx(b["results"][k], rel=1e-6, abs=0)
    assert len(a["curves"]) == len(b["curves"]) == 2 * 3  # two trained arms x three seeds
    for x, y in zip(a["curves"], b["curves"]):
        assert (x["arm"], x["seed"], x["steps"]) == (y["arm"], y["seed"], y["steps"])
        assert x["values"] == pytest.approx(y["values"], rel=1e-6, abs=0)
    (ca,), (cb,) = a["claims"], b["claims"]
    assert ca["verdict"] == cb["verdict"] and ca["n_ours"] == cb["n_ours"] == 3
    assert ca["p_value"] == pytest.approx(cb["p_value"], rel=1e-6)


def test_a_failing_rank_leaves_no_results_file(tmp_path):
    out = tmp_path / "bad.json"
    p = _run(2, out, "n_train=0")  # every unit raises in make_data
    assert p.returncode != 0
    assert "failed on unit" in p.stdout + p.stderr
    assert not out.exists() and not out.with_suffix(".json.tmp").exists()


DDP_STEP = """
import sys, torch
from icml26_lit.core.distributed import data_parallel, init_distributed, shard_batch, wrap_ddp
rank, world = init_distributed()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
g = torch.Generator().manual_seed(1)
x, y = torch.randn(8, 3, generator=g).double(), torch.randn(8, 1, generator=g).double()
assert wrap_ddp(model) is model and shard_batch(x) is x  # outside data_parallel(): no-ops
with data_parallel():
    m = wrap_ddp(model)
    assert (m is model) == (world == 1) and len(shard_batch(x)) == 8 // world
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    ((m(shard_batch(x)) - shard_batch(y)) ** 2).mean().backward()
    opt.step()
if rank == 0:
    torch.save([p.detach().clone() for p in model.parameters()], sys.argv[1])
"""


def test_ddp_step_on_two_ranks_equals_the_one_process_step(one_and_two_ranks):
    outs = one_and_two_ranks(DDP_STEP)
    for a, b in zip(*outs):
        assert not torch.equal(a, torch.zeros_like(a))
        # float64: the mean of two half-batch gradients vs one full-batch mean differs by a few
        # ulps of the gradient (~1e-16); after a step of lr 0.1 the parameters agree to 1e-12
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


DATA_UNITS = """
import sys, torch
from icml26_lit.core.distributed import init_distributed, map_units, shard_slice, wrap_ddp
rank, world = init_distributed()


def train(seed):  # a chapter's loop: batches of 7 and 5, which 2 ranks cannot share evenly
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    model = model.double()
    m, g = wrap_ddp(model), torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    for n in (7, 5, 7):
        x, y = torch.randn(n, 3, generator=g).double(), torch.randn(n, 1, generator=g).double()
        sl, scale = shard_slice(n)
        opt.zero_grad()
        (((m(x[sl]) - y[sl]) ** 2).sum() * scale).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


out = map_units(train, [3], parallel="data")  # one unit, two ranks: together, by DDP
assert (out is None) == (rank > 0)
if rank == 0:
    torch.save(out[0], sys.argv[1])
"""


def test_data_parallel_unit_with_uneven_batches_equals_one_process(one_and_two_ranks):
    outs = one_and_two_ranks(DATA_UNITS)
    for a, b in zip(*outs):
        # float64, three Adam steps: the two ranks' partial sums (4 + 3 examples) are added in
        # another order than one process's sum, a few ulps (~1e-16) per gradient; Adam's
        # normalised step keeps that at the same relative size, far below 1e-12
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_parallel_mode_and_slice_are_checked():
    with pytest.raises(ValueError, match="parallel must be 'units' or 'data'"):
        map_units(abs, [1], parallel="seeds")
    with pytest.raises(TypeError, match="n must be an int"):
        shard_slice(3.0)


def test_results_become_json():
    import importlib.util

    spec = importlib.util.spec_from_file_location("rd", ROOT / "book" / "run_distributed.py")
    rd = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rd)
    import numpy as np

    got = rd.jsonable({(5, 2000, 0, "NPE"): {"x": torch.tensor([1.5, 2.0]), "n": np.int64(3)}})
    assert got == {"5|2000|0|NPE": {"x": [1.5, 2.0], "n": 3}}
    assert json.loads(json.dumps(got)) == got
