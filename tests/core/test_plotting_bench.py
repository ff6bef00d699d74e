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
from icml26_lit.core.bench import card_ceiling


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
