"""Tokenisation and the reference token embedding."""

import math

import pytest
import torch

from icml26_lit.tfmpe.tokens import (
    TokenEmbedding,
    detokenise,
    fourier_features,
    tokenise,
)

LABELS = {"mu": 0, "theta": 1, "y": 2}


def _data(B=3, S=2, J=3, g=None):
    return {
        "theta": torch.randn(B, S, generator=g),
        "y": torch.randn(B, S, J, generator=g),
        "mu": torch.randn(B, 1, generator=g),
    }


def test_one_token_per_element_conditions_first(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    d = _data(g=g)
    tok = tokenise(d, ["y"], LABELS)
    assert tok.n_tokens == 2 * 3 + 2 + 1 and tok.partition == 6
    assert tok.label.tolist() == [2] * 6 + [1, 1, 0]  # condition first, then data order
    assert tok.condition.tolist() == [1.0] * 6 + [0.0] * 3
    torch.testing.assert_close(tok.value[:, :6, 0], d["y"].reshape(3, 6))
    back = detokenise(tok.value, tok.spec)
    for k in d:
        torch.testing.assert_close(back[k], d[k])


def test_positions_tie_observations_to_their_site():
    tok = tokenise(_data(S=3, J=2), ["y"], LABELS)
    y_sites = tok.position[:6, 0].tolist()
    theta_sites = tok.position[6:9, 0].tolist()
    assert y_sites == [0, 0, 1, 1, 2, 2] and theta_sites == [0, 1, 2]
    assert tok.position[:6, 1].tolist() == [0, 1] * 3


def test_functional_inputs_and_masks():
    d = _data()
    times = torch.rand(3, 2, 3)
    mask = torch.ones(3, 2, 3, dtype=torch.bool)
    mask[1, 0, 2] = False
    tok = tokenise(d, ["y"], LABELS, functional_inputs={"y": times}, masks={"y": mask})
    torch.testing.assert_close(tok.functional[:, :6, 0], times.reshape(3, 6))
    assert tok.functional[:, 6:].eq(0).all()
    assert tok.mask[1, 2].item() is False and tok.mask.sum() == 3 * 9 - 1
    assert tok.value[1, 2, 0] == 0


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="labels has no entry for"):
        tokenise({"z": torch.zeros(2, 1)}, [], LABELS)
    with pytest.raises(ValueError, match="condition names"):
        tokenise(_data(), ["x"], LABELS)
    with pytest.raises(ValueError, match=r"data\['y'\] contains NaN"):
        d = _data()
        d["y"][0, 0, 0] = float("nan")
        tokenise(d, ["y"], LABELS)
    with pytest.raises(ValueError, match=r"masks\['y'\] must have shape"):
        tokenise(_data(), ["y"], LABELS, masks={"y": torch.ones(3, 2, dtype=torch.bool)})
    with pytest.raises(ValueError, match="value has 4 tokens"):
        detokenise(torch.zeros(1, 4, 1), tokenise(_data(), ["y"], LABELS).spec)


def test_fourier_features_closed_form():
    x = torch.tensor([[0.25, 0.0]], dtype=torch.float64)
    B = torch.tensor([[1.0, 2.0], [5.0, 7.0]], dtype=torch.float64)
    ff = fourier_features(x, B)
    ang = 2 * math.pi * torch.tensor([0.25, 0.5], dtype=torch.float64)
    torch.testing.assert_close(ff[0], torch.cat([ang.cos(), ang.sin()]))


def test_embedding_equals_explicit_formula(fresh_seed):
    torch.manual_seed(fresh_seed)
    emb = TokenEmbedding(
        n_labels=3, latent_dim=8, label_dim=4, pos_dim=6, functional_dim=1, functional_features=4
    ).double()
    d = {k: v.double() for k, v in _data().items()}
    tok = tokenise(
        d, ["y"], LABELS, functional_inputs={"y": torch.rand(3, 2, 3, dtype=torch.float64)}
    )
    t = torch.rand(3, dtype=torch.float64)
    out = emb(tok, t, backend="torch")
    b, i = 2, 4  # one token by hand
    parts = [
        tok.value[b, i],
        emb.label_table[tok.label[i]],
        fourier_features(tok.position[i : i + 1].double(), emb.pos_freqs)[0],
        t[b : b + 1],
        fourier_features(tok.functional[b, i : i + 1], emb.fun_freqs)[0],
    ]
    torch.testing.assert_close(out[b, i], emb.weight @ torch.cat(parts) + emb.bias)
