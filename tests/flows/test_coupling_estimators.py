"ESS and log Z estimators (Chapter 09, *Importance weights*)."

import math

import pytest
import torch

from icml26_lit.flows import (
    CouplingFlow,
    effective_sample_size,
    estimate_log_Z,
    importance_log_weights,
)


def test_ess_closed_form_and_invariances(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    lw = 2 * torch.randn(500, generator=g, dtype=torch.float64)
    w = lw.exp()
    ess = effective_sample_size(lw)
    torch.testing.assert_close(ess, w.sum() ** 2 / (500 * (w**2).sum()))
    torch.testing.assert_close(effective_sample_size(lw + 123.0), ess)  # scale-free
    assert 0 < ess <= 1
    one_hot = torch.full((10,), -math.inf)
    one_hot[3] = 0.0
    torch.testing.assert_close(effective_sample_size(one_hot), torch.tensor(0.1))


def test_log_Z_estimate_of_exact_flow():
    # an identity flow against the unnormalised standard normal: every weight equals Z
    flow = CouplingFlow(3, n_layers=2, hidden=4).double()
    _, lw = importance_log_weights(flow, lambda x: 0.5 * (x**2).sum(1), 100)
    torch.testing.assert_close(
        estimate_log_Z(lw), torch.tensor(1.5 * math.log(2 * math.pi), dtype=torch.float64)
    )


def test_log_Z_estimate_lognormal(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    lw = 0.3 * torch.randn(400000, generator=g, dtype=torch.float64) + 1.0
    assert abs(float(estimate_log_Z(lw)) - (1.0 + 0.045)) < 3e-3


def test_nan_energy_becomes_zero_weight():
    flow = CouplingFlow(2, n_layers=1, hidden=4)
    _, lw = importance_log_weights(flow, lambda x: torch.full((len(x),), float("nan")), 5)
    assert (lw == -math.inf).all()


@pytest.mark.parametrize(
    "bad,msg",
    [
        (torch.tensor([0.0, float("nan")]), "NaN"),
        (torch.tensor([math.inf]), r"\+inf"),
        (torch.full((3,), -math.inf), "every weight is zero"),
        (torch.zeros(0), "at least one"),
        (torch.zeros(2, 2), "log_w must have 1 dimensions"),
    ],
)
def test_estimators_bad_input(bad, msg):
    with pytest.raises(ValueError, match=msg):
        effective_sample_size(bad)
    with pytest.raises(ValueError, match=msg):
        estimate_log_Z(bad)
