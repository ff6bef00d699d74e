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
