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
