"""The experiment's pieces: R², the training loop learns, smoke steps of every preset."""
import pytest
import torch

from icml26_lit.slepian.experiments import CONFIG, make_encoder, r2_score, smoke_step, train_head


def test_r2_score():
    y = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert r2_score(y, y) == 1.0
    assert abs(r2_score(y, torch.full_like(y, 2.5))) < 1e-12
    assert r2_score(y, -y) < 0


def test_train_head_learns_a_smooth_function(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    f = torch.randn(512, 4, generator=g)
    y = f[:, 0] - 0.5 * f[:, 1]
    sc = train_head(f, y, {"train": (f, y)}, "mlp", epochs=40, batch_size=64, lr=3e-3, seed=0)
    assert sc["train"] > 0.9


def test_make_encoder_names():
    cfg = CONFIG.get("ci")
    assert make_encoder("sh", cfg).out_dim == 100
    with pytest.raises(ValueError, match="encoder 'wavelet' is not known"):
        make_encoder("wavelet", cfg)


@pytest.mark.parametrize("scale", ["ci", "colab"])
def test_smoke_step(scale):
    smoke_step(CONFIG.smoke(scale))
