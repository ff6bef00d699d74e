import pytest
import torch

from icml26_lit.core import Scale, get_device, seed_everything, sizes


def test_scale_names():
    assert [Scale.get(n).name for n in ("ci", "cpu", "colab", "full")] == [
        "ci",
        "cpu",
        "colab",
        "full",
    ]


@pytest.mark.parametrize("bad", ["CI", "medium", "", None, 3])
def test_unknown_scale_lists_valid(bad):
    with pytest.raises(ValueError, match="valid scales are 'ci', 'cpu', 'colab', 'full'"):
        Scale.get(bad)


def test_sizes_presets_and_smoke():
    s = sizes(
        ci=dict(n=2, lr=0.1, on=True, kinds=["a"]),
        colab=dict(n=20, lr=0.01, on=False, kinds=["a", "b"]),
        full=dict(n=200, lr=0.001, on=False, kinds=["a", "b", "c"]),
    )
    assert s.get("colab").n == 20 and s("full").lr == 0.001
    sm = s.smoke("full")
    assert sm == dict(n=2, lr=0.001, on=False, kinds=["a", "b", "c"])
    with pytest.raises(AttributeError, match="no key 'm'"):
        s.get("ci").m


def test_sizes_rejects_drift():
    with pytest.raises(ValueError, match="missing"):
        sizes(ci=dict(a=1, b=2), colab=dict(a=1), full=dict(a=1, b=2))
    with pytest.raises(ValueError, match="key 'a' is int in 'ci' but str in 'full'"):
        sizes(ci=dict(a=1), colab=dict(a=2), full=dict(a="x"))


def test_get_device():
    assert get_device("cpu").type == "cpu"
    assert get_device(torch.device("cpu")).type == "cpu"
    with pytest.raises(ValueError, match="device='gpu'"):
        get_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            get_device("cuda")


def test_seed_everything_reproducible():
    seed_everything(7)
    a = torch.randn(4)
    g = seed_everything(7)
    assert torch.equal(a, torch.randn(4))
    assert torch.equal(
        torch.randn(3, generator=g), torch.randn(3, generator=torch.Generator().manual_seed(7))
    )
    for bad in (-1, 2**32, 1.5, True):
        with pytest.raises(ValueError, match="seed="):
            seed_everything(bad)


def test_cpu_preset_is_optional():
    from icml26_lit.core.scale import NoPresetError

    three = sizes(ci=dict(n=2), colab=dict(n=20), full=dict(n=200))
    with pytest.raises(NoPresetError, match="scale='cpu': this experiment has no cpu preset"):
        three.get("cpu")
    four = sizes(ci=dict(n=2), cpu=dict(n=8), colab=dict(n=20), full=dict(n=200))
    assert (
        four.get("cpu").n == 8
        and four.smoke("cpu").n == 2
        and four.scales == ("ci", "cpu", "colab", "full")
    )
    with pytest.raises(ValueError, match="missing"):
        sizes(ci=dict(n=2, m=1), cpu=dict(n=8), colab=dict(n=20, m=1), full=dict(n=200, m=1))
    with pytest.raises(TypeError, match="cpu must be a dict"):
        sizes(ci=dict(n=2), cpu=[1], colab=dict(n=20), full=dict(n=200))
    with pytest.raises(
        ValueError,
        match="scale='laptop' is not a known scale; valid scales are 'ci', 'cpu', 'colab', 'full'",
    ):
        four.get("laptop")


def test_speed_factor_reads_the_runner(monkeypatch):
    from icml26_lit.core.scale import speed_factor

    monkeypatch.delenv("ICML26_SPEED_FACTOR", raising=False)
    assert speed_factor() == 1.0
    monkeypatch.setenv("ICML26_SPEED_FACTOR", "1.75")
    assert speed_factor() == 1.75
    for bad in ("fast", "nan", "0", "-2"):
        monkeypatch.setenv("ICML26_SPEED_FACTOR", bad)
        with pytest.raises(ValueError, match="ICML26_SPEED_FACTOR"):
            speed_factor()


def test_check_projection_limits(monkeypatch, capsys):
    from icml26_lit.core.scale import check_projection

    monkeypatch.delenv("ICML26_SPEED_FACTOR", raising=False)
    assert check_projection(100.0, "ci") == 100.0 and capsys.readouterr().out == ""
    assert check_projection(100.0, "ci", target_s=90) == 100.0
    assert "over the 90 s target" in capsys.readouterr().out
    check_projection(180.0, "ci")  # the runner's limit itself passes
    with pytest.raises(RuntimeError, match="180 s"):
        check_projection(180.5, "ci")
    # a machine measured 2x slower: the limit doubles, the target is judged at reference speed
    monkeypatch.setenv("ICML26_SPEED_FACTOR", "2.0")
    assert check_projection(340.0, "ci") == 170.0
    assert "170 s at reference speed" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="360 s"):
        check_projection(361.0, "ci")
    # a faster machine never tightens the limit
    monkeypatch.setenv("ICML26_SPEED_FACTOR", "0.5")
    assert check_projection(179.0, "ci") == 179.0
    # larger scales: only the preset's own budget, when named
    assert check_projection(1e4, "colab") == 1e4
    with pytest.raises(RuntimeError, match="900 s budget of scale='cpu'"):
        check_projection(901.0, "cpu", budget_s=900)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, "90", True])
def test_check_projection_rejects_bad_input(bad):
    from icml26_lit.core.scale import check_projection

    with pytest.raises((TypeError, ValueError), match="projected_s"):
        check_projection(bad, "ci")
    with pytest.raises(ValueError, match="scale"):
        check_projection(1.0, "laptop")


def test_speed_probe_is_cpu_time_of_fixed_work():
    from icml26_lit.core.scale import speed_probe

    t1 = speed_probe(repeats=3, steps=10)
    t4 = speed_probe(repeats=3, steps=40)
    # four times the steps: between 2x and 8x the time (the warm-up and timer noise blur a 4x)
    assert 2 * t1 < t4 < 8 * t1, (t1, t4)
    with pytest.raises(ValueError, match="steps=0"):
        speed_probe(steps=0)
