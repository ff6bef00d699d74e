"""Chapter 03: the pendulum chain against closed forms, autograd and its own invariants."""

import math

import pytest
import torch

from icml26_lit.ro_hnn.pendulum_chain import PendulumChain, pod_residual

F64 = torch.float64


def test_frequencies_closed_form_and_hessian():
    c = PendulumChain(16, 4.0)
    w = c.normal_mode_frequencies()
    k = torch.arange(16, dtype=F64)
    want = torch.sqrt(9.81 + 16.0 * torch.sin(k * math.pi / 32) ** 2)
    torch.testing.assert_close(w, want, rtol=1e-15, atol=0)
    # independent: the Hessian of H at rest by autograd, its eigenvalues are omega^2
    q = torch.zeros(16, dtype=F64)
    hess = torch.autograd.functional.hessian(lambda v: c.hamiltonian(v, torch.zeros_like(v)), q)
    torch.testing.assert_close(torch.linalg.eigvalsh(hess), w**2, rtol=1e-12, atol=1e-12)
    v = c.mode_shapes()
    torch.testing.assert_close(v.T @ v, torch.eye(16, dtype=F64), rtol=0, atol=1e-12)


def _peak(signal, dt):
    # FFT peak with a parabolic fit of the log-magnitude around the maximum bin
    spec = torch.fft.rfft(signal * torch.hann_window(len(signal), dtype=F64)).abs().log()
    i = int(spec[1:].argmax()) + 1
    a, b, cc = float(spec[i - 1]), float(spec[i]), float(spec[i + 1])
    shift = 0.5 * (a - cc) / (a - 2 * b + cc)
    return 2 * math.pi * (i + shift) / (len(signal) * dt)


def test_fft_peaks_match_the_mode_frequencies():
    c = PendulumChain(16, 4.0)
    v, w = c.mode_shapes(), c.normal_mode_frequencies()
    # small amplitude (linear regime), modes 1 and 2 excited, 16,384 steps of 0.01
    q0 = (1e-3 * (v[:, 1] + v[:, 2]))[None]
    qs, _ = c.simulate(q0, torch.zeros_like(q0), 0.01, 16383)
    for k in (1, 2):
        coord = qs[:, 0, :] @ v[:, k]
        # within 0.5% (the leapfrog's own frequency shift (h w)^2 / 24 is 4e-5)
        assert abs(_peak(coord, 0.01) / float(w[k]) - 1) < 5e-3


def test_simulation_energy_gradient_and_shapes():
    c = PendulumChain(6, 4.0)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(3, 6, generator=g, dtype=F64, requires_grad=True)
    (gq,) = torch.autograd.grad(c.hamiltonian(q, torch.zeros_like(q)).sum(), q)
    torch.testing.assert_close(c.grad_potential(q.detach()), gq, rtol=1e-13, atol=1e-13)
    q0, p0 = c.initial_states(4, generator=g)
    qs, ps = c.simulate(q0, p0, 0.01, 3000)
    assert qs.shape == ps.shape == (3001, 4, 6)
    e = c.hamiltonian(qs, ps)
    # leapfrog: relative energy error O((dt w_max)^2) = O(3e-3), bounded over 3,000 steps
    assert float(((e - e[0]) / e[0]).abs().max()) < 5e-3
    qt, pt = c.trajectories(2, 10, h=0.05, dt=0.01, generator=torch.Generator().manual_seed(1))
    q0, p0 = c.initial_states(2, generator=torch.Generator().manual_seed(1))
    qf, pf = c.simulate(q0, p0, 0.01, 50)
    torch.testing.assert_close((qt, pt), (qf[::5], pf[::5]), rtol=0, atol=0)


def test_initial_states_excite_modes_1_and_2_within_the_angle_range():
    c = PendulumChain(16, 4.0)
    q0, p0 = c.initial_states(200, generator=torch.Generator().manual_seed(2))
    v = c.mode_shapes()
    coef_q, coef_p = q0 @ v, p0 @ v
    others = [0] + list(range(3, 16))
    assert float(coef_q[:, others].abs().max()) < 1e-12
    assert float(coef_p[:, others].abs().max()) < 1e-12
    # the linear orbit's envelope max_i sum_k |A_k v_k(i)| lies in [0.5, 1.0]
    w = c.normal_mode_frequencies()[1:3]
    amp = torch.sqrt(coef_q[:, 1:3] ** 2 + (coef_p[:, 1:3] / w) ** 2)
    env = (amp[:, None, :] * v[:, 1:3].abs()[None]).sum(-1).max(1).values
    assert float(env.min()) >= 0.5 - 1e-12 and float(env.max()) <= 1.0 + 1e-12
    assert float(q0.abs().max()) <= 1.0 + 1e-12


def test_pod_residual_against_a_known_spectrum():
    # rows with singular values 3, 2, 1 (orthonormal factors): rank-1 residual sqrt(5/14)
    g = torch.Generator().manual_seed(3)
    u, _ = torch.linalg.qr(torch.randn(20, 3, generator=g, dtype=F64))
    vv, _ = torch.linalg.qr(torch.randn(5, 3, generator=g, dtype=F64))
    x = u @ torch.diag(torch.tensor([3.0, 2.0, 1.0], dtype=F64)) @ vv.T
    assert abs(pod_residual(x, 1) - math.sqrt(5 / 14)) < 1e-12
    assert pod_residual(x, 3) < 1e-12


def test_bad_input():
    c = PendulumChain(4)
    z = torch.zeros(2, 4, dtype=F64)
    with pytest.raises(ValueError, match="stability cap"):
        c.simulate(z, z, 1.0, 5)
    with pytest.raises(ValueError, match="n_steps"):
        c.simulate(z, z, 0.01, 0)
    with pytest.raises(ValueError, match="q0 contains NaN"):
        c.simulate(z * float("nan"), z, 0.01, 5)
    with pytest.raises(ValueError, match="n must be"):
        PendulumChain(1)
    with pytest.raises(ValueError, match="coupling"):
        PendulumChain(4, coupling=-1.0)
    with pytest.raises(ValueError, match="angle_range"):
        c.initial_states(3, angle_range=(1.0, 2.0))
    with pytest.raises(ValueError, match="h must be a positive multiple"):
        c.trajectories(2, 3, h=0.033, dt=0.01)
    with pytest.raises(ValueError, match="rank"):
        pod_residual(z, 5)
