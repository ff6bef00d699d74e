"""fit_field refuses bad input at entry and leaves the global RNG alone (Chapter 04)."""

import pytest
import torch

from icml26_lit.antic.neural_field import NeuralField, fit_field, grid_coords


def _weights(nf):
    return [p.detach().clone() for p in nf.parameters()]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("params", ["all", "lora"])
def test_non_finite_target_raises_and_leaves_the_weights(bad, params):
    nf = NeuralField(hidden=8, n_layers=1, n_freq=4)
    nf.add_lora(2)
    before = _weights(nf)
    target = torch.zeros(16)
    target[5] = bad
    with pytest.raises(ValueError, match=r"target contains non-finite values"):
        fit_field(nf, grid_coords(4), target, 3, params=params)
    assert all(torch.equal(a, b) for a, b in zip(before, nf.parameters()))
    assert all(p.requires_grad for p in nf.parameters())  # nothing left frozen


def test_mismatched_and_misshapen_inputs_name_the_argument():
    nf = NeuralField(hidden=8, n_layers=1, n_freq=4)
    with pytest.raises(ValueError, match=r"target must hold one value per coordinate: 15 values"):
        fit_field(nf, grid_coords(4), torch.zeros(15), 1)
    with pytest.raises(ValueError, match=r"one value per coordinate: 32 values"):
        fit_field(nf, grid_coords(4), torch.zeros(16, 2), 1)
    # one value per coordinate in a column is accepted
    fit_field(nf, grid_coords(4), torch.zeros(16, 1), 1)
    with pytest.raises(ValueError, match=r"coords must have shape \(N, 2\), got \(16, 3\)"):
        fit_field(nf, torch.zeros(16, 3), torch.zeros(16), 1)
    with pytest.raises(TypeError, match="target must be a torch.Tensor, got list"):
        fit_field(nf, grid_coords(4), [0.0] * 16, 1)
    with pytest.raises(TypeError, match="coords must be a torch.Tensor"):
        fit_field(nf, None, torch.zeros(16), 1)
    c = grid_coords(4)
    c[0, 0] = float("nan")
    with pytest.raises(ValueError, match="coords contains non-finite values"):
        fit_field(nf, c, torch.zeros(16), 1)
    for b in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="batch_size must be None or an int >= 1"):
            fit_field(nf, grid_coords(4), torch.zeros(16), 1, batch_size=b)


def _fit(seed):
    x = grid_coords(8)
    nf = NeuralField(hidden=8, n_layers=2, n_freq=4, seed=seed)
    nf.add_lora(2, seed=seed)
    mse = fit_field(nf, x, torch.sin(x[:, 0]), 4, params="lora", lr=1e-2, batch_size=16, seed=seed)
    return mse, _weights(nf)


def test_fit_field_leaves_the_global_rng_and_ignores_it(fresh_seed):
    seed = fresh_seed % 10_000
    torch.manual_seed(fresh_seed)
    state = torch.get_rng_state()
    mse_a, w_a = _fit(seed)
    assert torch.equal(torch.get_rng_state(), state)  # not consumed, not reseeded
    torch.manual_seed(fresh_seed + 1)  # another global state: the same numbers
    mse_b, w_b = _fit(seed)
    assert mse_a == mse_b and all(torch.equal(a, b) for a, b in zip(w_a, w_b))
