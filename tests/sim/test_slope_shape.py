"""The integrators refuse a right-hand side whose slope has another shape than the state: a
slope of shape (1,) for a (3,) state would otherwise broadcast and integrate a different ODE."""

import pytest
import torch

from icml26_lit.sim import euler_step, integrate, rk4_step


@pytest.mark.parametrize("step", [euler_step, rk4_step])
def test_a_broadcasting_slope_is_refused(step):
    with pytest.raises(ValueError, match=r"y's shape \(3,\), got \(1,\)"):
        step(lambda t, y: torch.ones(1), 0.0, torch.ones(3), 0.1)


def test_a_slope_that_is_not_a_tensor_is_refused():
    with pytest.raises(ValueError, match="got float"):
        rk4_step(lambda t, y: 1.0, 0.0, torch.ones(3), 0.1)


def test_integrate_checks_every_step():
    with pytest.raises(ValueError, match="y's shape"):
        integrate(lambda t, y: y.sum(0, keepdim=True), torch.ones(3), 0.0, 1.0, 4)


def test_a_matching_slope_still_integrates():
    y = integrate(lambda t, y: -y, torch.ones(3, dtype=torch.float64), 0.0, 1.0, 100)
    torch.testing.assert_close(
        y, torch.full((3,), torch.e**-1, dtype=torch.float64), rtol=1e-9, atol=0
    )
