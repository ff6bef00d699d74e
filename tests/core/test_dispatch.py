"backend='auto' follows measurements: the dispatch table and its rule (Platform F, item 2)."

import json
import math

import pytest

from icml26_lit.core import repo_root
from icml26_lit.core.bench import AGREE_TOL, auto_choice, dispatch_table

H200 = "results/bench/NVIDIA-H200-2026-12-04.json"


def _entry(tri=1.0, ref=2.0, agreement=1e-6, source_hash="abc"):
    return dict(
        triton_ms={"": tri},
        torch_ms={"": ref},
        agreement=agreement,
        commit="c",
        source_hash=source_hash,
    )


@pytest.mark.parametrize(
    "entry, current, want, why",
    [
        (_entry(), "abc", "triton", "faster on CARD"),
        (_entry(tri=3.0), "abc", "torch", "Triton slower"),
        (_entry(agreement=10 * AGREE_TOL), "abc", "torch", "agreement"),
        (_entry(agreement=None), "abc", "torch", "agreement None"),
        (_entry(agreement=math.nan), "abc", "torch", "agreement"),
        (_entry(), "changed", "torch", "since replaced"),
        (_entry(), None, "torch", "since replaced"),
    ],
)
def test_auto_choice_rule(entry, current, want, why):
    got, reason = auto_choice("00.k", {"00.k": {"CARD": entry}}, current)
    assert got == want and why in reason and "00.k" in reason


def test_auto_choice_any_card_that_won_counts():
    table = {"00.k": {"SLOW": _entry(tri=5.0), "FAST": _entry()}}
    assert auto_choice("00.k", table, "abc")[0] == "triton"
    assert auto_choice("00.k", None, "abc") == ("torch", "00.k: no card has measured it")
    assert auto_choice("00.other", table, "abc")[0] == "torch"


def test_triton_must_win_at_every_size():
    e = _entry()
    e["triton_ms"], e["torch_ms"] = {"N=1": 1.0, "N=2": 3.0}, {"N=1": 2.0, "N=2": 2.0}
    assert auto_choice("00.k", {"00.k": {"C": e}}, "abc")[0] == "torch"


def test_committed_dispatch_matches_h200_file():
    root = repo_root()
    if root is None or not (root / H200).exists():
        pytest.skip("needs the checkout's results/bench")
    committed = json.loads((root / "results/bench/dispatch.json").read_text())
    recomputed = dispatch_table(json.loads((root / H200).read_text()))
    for key, cards in recomputed.items():
        assert committed[key]["NVIDIA H200"] == json.loads(json.dumps(cards["NVIDIA H200"]))
    # chapters whose Triton lost on the H200 run PyTorch under auto
    for ch in ("04", "06", "09", "10", "16", "17"):
        keys = [k for k in committed if k.startswith(ch + ".")]
        assert keys and all(auto_choice(k, committed, "any")[0] == "torch" for k in keys), ch


@pytest.fixture
def on_cuda(monkeypatch):
    "resolve_backend as on a GPU machine, with a fake dispatch table and code hash."
    import icml26_lit.core.bench as B
    import icml26_lit.core.kernels as K

    monkeypatch.setattr(K, "HAS_TRITON", True)
    monkeypatch.setattr(K, "_on_cuda", lambda tensors: True)
    monkeypatch.setattr(K, "_AUTO", {})
    monkeypatch.setattr(B, "_code_hash", lambda chapter, name, *a, **k: "abc")
    tables = {}
    monkeypatch.setattr(K, "_dispatch_table", lambda: tables.get("t"))
    return K, tables


def test_auto_on_cuda_follows_table(on_cuda):
    import warnings

    import torch

    K, tables = on_cuda
    tables["t"] = {
        "00.fast": {"CARD": _entry()},
        "04.slow": {"CARD": _entry(tri=3.0)},
        "05.unchecked": {"CARD": _entry(agreement=None)},
    }
    x = torch.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert K.auto_backend("00") == "triton"
    for ch, why in (("04", "Triton slower"), ("05", "agreement None"), ("09", "no dispatch table")):
        with pytest.warns(UserWarning, match=f"chapter {ch} on CUDA: .*{why}"):
            assert K.auto_backend(ch) == "torch"
        with warnings.catch_warnings():  # one warning per chapter and process
            warnings.simplefilter("error")
            assert K.auto_backend(ch) == "torch"
    K._AUTO.clear()
    import icml26_lit.core.kernels as mod

    mod_caller = mod._caller_chapter
    try:
        mod._caller_chapter = lambda: "00"
        assert K.resolve_backend("auto", x) == "triton"
        mod._caller_chapter = lambda: "04"
        with pytest.warns(UserWarning, match="chapter 04"):
            assert K.resolve_backend("auto", x) == "torch"
        assert K.resolve_backend("torch", x) == "torch"
    finally:
        mod._caller_chapter = mod_caller


def test_auto_on_cuda_without_table_runs_pytorch(on_cuda):
    K, tables = on_cuda  # no table: outside a checkout
    with pytest.warns(UserWarning, match="no dispatch table"):
        assert K.auto_backend("00") == "torch"


def test_auto_on_cpu_unchanged():
    import torch

    from icml26_lit.core.kernels import resolve_backend

    assert resolve_backend("auto", torch.ones(2)) == "torch"


def test_chapter_of_registered_kernel():
    import icml26_lit.core.kernels as K

    if not K.HAS_TRITON:
        pytest.skip("needs triton (kernels register only with it)")
    import icml26_lit.example.features  # noqa: F401  registers chapter 00's kernel

    assert K._chapter_of("example") == "00"
    assert K._chapter_of("no_such_package") is None
