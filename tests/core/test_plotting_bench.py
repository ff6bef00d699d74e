import importlib

import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch

from icml26_lit.core import (
    BENCHMARKS,
    live_controls,
    register_benchmark,
    run_benchmarks,
    stepped_figure,
)
from icml26_lit.core.bench import card_ceiling, variant_agreement


def test_stepped_figure_visibility():
    f = stepped_figure(
        [1, 2], lambda v: [go.Scatter(y=[v]), go.Scatter(y=[-v])], label="v", active=1
    )
    assert [t.visible for t in f.data] == [False, False, True, True]
    assert f.layout.sliders[0].steps[0].args[0]["visible"] == [True, True, False, False]
    with pytest.raises(ValueError, match="values must not be empty"):
        stepped_figure([], lambda v: [])


def test_live_controls_needs_a_control():
    with pytest.raises(ValueError, match="at least one control"):
        live_controls(lambda: go.Figure())


def test_book_renderer_only_with_env(monkeypatch):
    import icml26_lit.core.plotting as P

    monkeypatch.setenv("ICML26_BOOK", "1")
    old = pio.renderers.default
    try:
        importlib.reload(P)
        assert pio.renderers.default == "icml26_book"
        out = pio.renderers["icml26_book"].to_mimebundle(go.Figure(go.Bar(y=[1])).to_dict())
        assert "Plotly.newPlot" in out["text/html"] and "cdn" not in out["text/html"].lower()
    finally:
        pio.renderers.default = old
    monkeypatch.setenv("ICML26_BOOK", "0")
    importlib.reload(P)
    assert pio.renderers.default != "icml26_book"


def test_bench_on_cpu_prints_model_and_takes_no_timing(capsys):
    register_benchmark(
        "99", "toy", lambda d: {"torch": lambda: None}, lambda: dict(bytes=8e6, flops=1e6)
    )
    try:
        assert run_benchmarks(["99"]) is None
        out = capsys.readouterr().out
        assert "99.toy: 8.000 MB moved" in out and "no GPU timing was taken" in out
    finally:
        del BENCHMARKS["99.toy"]
    with pytest.raises(ValueError, match="chapter must be a two-digit"):
        register_benchmark("x", "toy", lambda d: {}, lambda: {})


def test_card_ceilings():
    assert card_ceiling("Tesla T4")[0] == 320 and card_ceiling("NVIDIA H100 80GB HBM3")[0] == 3350


def test_bench_cli_runs_on_cpu(capsys):
    from icml26_lit.bench import main

    if not torch.cuda.is_available():
        assert main(["00"]) is None
        assert "no GPU timing was taken" in capsys.readouterr().out


def test_variant_agreement_pairs_triton_with_torch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, dtype=torch.float64, generator=g)
    c = torch.randn(5, 8, dtype=torch.float64, generator=g)

    def nearest(z):  # an integer output, as vq_nearest's indices
        return torch.cdist(z, c).argmin(1)

    a = variant_agreement(
        {
            "torch K=5": lambda: (nearest(x), x.square().sum()),
            "triton K=5": lambda: (nearest(x), x.square().sum() * (1 + 1e-9)),
            "torch": lambda: x,
            "triton": lambda: x[:-1],  # shapes differ: not comparable, left out
            "triton_coo": lambda: x,  # no "torch_coo": left out
        }
    )
    assert set(a) == {"triton K=5"}
    # the sum is the largest magnitude, so the relative difference is its 1e-9
    assert a["triton K=5"]["rel_diff"] == pytest.approx(1e-9, rel=1e-6)
    assert a["triton K=5"]["reference_repeat"] == 0.0
    # a wrong index shows: 1 - 0 over the largest index or sum
    wrong = variant_agreement({"torch": lambda: nearest(x), "triton": lambda: nearest(x) * 0})
    assert wrong["triton"]["rel_diff"] == 1.0


def test_variant_agreement_reads_nan_and_inf():
    x = torch.tensor([1.0, float("nan"), float("inf"), 4.0], dtype=torch.float64)
    same = variant_agreement({"torch": lambda: x, "triton": lambda: x.clone()})
    assert same["triton"]["rel_diff"] == 0.0  # NaN where the reference has NaN agrees
    y = x.clone()
    y[0] = float("nan")  # a NaN where the reference has a number: infinitely far
    assert variant_agreement({"torch": lambda: x, "triton": lambda: y})["triton"][
        "rel_diff"
    ] == float("inf")
    z = x.clone()
    z[3] = 4.2  # scaled by the largest finite |ref|, 4
    assert variant_agreement({"torch": lambda: x, "triton": lambda: z})["triton"][
        "rel_diff"
    ] == pytest.approx(0.05)
