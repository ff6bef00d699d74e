"""Chapter 04's exercises: references accepted, curated wrong answers rejected, and the byte
accounting of exercise 3 equal to the records a real stream stores."""

import pytest
import torch

import icml26_lit.antic  # noqa: F401  (registers the exercises)
from icml26_lit.antic._solutions import _record_bytes
from icml26_lit.antic.neural_field import state_bytes
from icml26_lit.antic.stream import ANTICConfig, compress_stream
from icml26_lit.core.exercises import EXERCISES

NAMES = sorted(n for n in EXERCISES if n.startswith("04."))


def test_three_exercises_registered():
    # the reference, stub and curated wrong answers of every exercise are checked in
    # tests/core/test_exercises.py; the chapter asks for at least two wrong answers each
    assert NAMES == ["04.1", "04.2", "04.3"]
    assert all(len(EXERCISES[n].wrong) >= 2 for n in NAMES)


def _closed_form(kind, hidden, n_layers, n_freq, rank, fp16):
    H, L, m, r = hidden, n_layers, n_freq, rank
    if kind == "full":
        n = 2 * m + 2 * m * H + (L - 1) * H * H + 3 * L * H + H + 1
    else:
        n = r * (2 * m + H) + (L - 1) * r * (H + H)
    return n * (2 if fp16 else 4) + 12


@pytest.mark.parametrize("fp16", [True, False])
def test_record_bytes_equal_the_stored_records(fp16):
    # fp16_tol=inf: every record is stored in half precision when fp16 is on
    cfg = ANTICConfig(
        hidden=16,
        n_layers=2,
        n_freq=8,
        rank=3,
        first_steps=2,
        steps=1,
        fp16=fp16,
        fp16_tol=float("inf"),
    )
    frames = [torch.randn(8, 8, generator=torch.Generator().manual_seed(k)) for k in range(4)]
    art, _ = compress_stream(frames, 3, config=cfg)
    kinds = {rec.kind for rec in art.records}
    assert kinds == {"full", "lora"}
    for rec in art.records:
        want = _record_bytes(rec.kind, 16, 2, 8, 3, fp16)
        assert state_bytes(rec.tensors) == want == _closed_form(rec.kind, 16, 2, 8, 3, fp16)
