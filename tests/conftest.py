"""Test setup shared by every chapter: Triton's interpreter on CPU, set before any kernel exists."""

import os

# Triton reads TRITON_INTERPRET when @triton.jit decorates a function, so this must run before
# icml26_lit's kernel modules are imported.
os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402


def pytest_report_header(config):
    return f"TRITON_INTERPRET={os.environ.get('TRITON_INTERPRET')}"


@pytest.fixture
def fresh_seed(request):
    "A new seed each run, printed in the failure report so the failure can be replayed."
    seed = int.from_bytes(os.urandom(4), "little") >> 1
    request.node.user_properties.append(("seed", seed))
    print(f"seed={seed}")
    return seed


@pytest.fixture
def one_and_two_ranks(tmp_path):
    "run(code) -> [what rank 0 saved on one process, ... on two gloo ranks under torchrun]."
    import subprocess
    import sys
    from pathlib import Path

    import torch

    root = Path(__file__).resolve().parents[1]
    torchrun = str(Path(sys.executable).parent / "torchrun")
    # one thread per rank, so one and two ranks reduce in the same order within a rank
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(root), TRITON_INTERPRET="0")

    def run(code: str) -> list:
        script = tmp_path / "ranks.py"  # the script saves its result to sys.argv[1] on rank 0
        script.write_text(code)
        outs = []
        for cmd in ([sys.executable], [torchrun, "--standalone", "--nproc-per-node=2"]):
            out = tmp_path / f"p{len(outs)}.pt"
            p = subprocess.run(
                cmd + [str(script), str(out)], env=env, capture_output=True, text=True
            )
            assert p.returncode == 0, p.stderr[-3000:]
            outs.append(torch.load(out))
        return outs

    return run
