"""SchNet plain vs flash: forces, invariances, bad input, the Triton path end to end."""

import pytest
import torch

from icml26_lit.core import HAS_TRITON
from icml26_lit.flashschnet.model import SchNet
from icml26_lit.md.chain import ChainPrior, bead_chain
from icml26_lit.md.graph import radius_graph


def _pair(seed, dtype=torch.float64, **kw):
    torch.manual_seed(seed)
    flash = SchNet(16, 16, 2, 16, cutoff=8.0, max_z=21, backend="torch", **kw).to(dtype)
    plain = SchNet(16, 16, 2, 16, cutoff=8.0, max_z=21, flash=()).to(dtype)
    plain.load_state_dict(flash.state_dict())
    return flash, plain


@pytest.fixture(scope="module")
def chain():
    return bead_chain(14, 2, seed=3, fold_steps=40, dtype=torch.float64)


@pytest.mark.parametrize(
    "flash", [("rbf",), ("rbf", "message"), ("rbf", "message", "csr"), ("csr",)]
)
def test_flash_forces_equal_plain_in_float64(chain, fresh_seed, flash):
    z, pos, batch = chain
    f_model, p_model = _pair(fresh_seed % 1000)
    f_model.flash = flash
    e1, f1 = f_model.energy_and_forces(z, pos, batch)
    e2, f2 = p_model.energy_and_forces(z, pos, batch)
    torch.testing.assert_close(e1, e2, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(f1, f2, rtol=1e-10, atol=1e-11)


def test_forces_are_minus_finite_difference_gradient(chain, fresh_seed):
    z, pos, batch = chain
    model, _ = _pair(fresh_seed % 1000, prior=ChainPrior())
    _, f = model.energy_and_forces(z, pos, batch)
    h = 1e-5
    for i, k in [(0, 0), (9, 1), (20, 2)]:
        dp = torch.zeros_like(pos)
        dp[i, k] = h
        fd = -float((model(z, pos + dp, batch) - model(z, pos - dp, batch)).sum()) / (2 * h)
        assert abs(fd - float(f[i, k])) < 1e-6 * max(1.0, abs(fd))


def test_dropping_cutoff_term_breaks_forces(chain):
    z, pos, batch = chain
    model, plain = _pair(0)
    model.cutoff_grad = False
    _, f = model.energy_and_forces(z, pos, batch)
    _, f_ref = plain.energy_and_forces(z, pos, batch)
    assert float((f - f_ref).abs().max()) > 1e-4


def test_invariances(chain, fresh_seed):
    z, pos, batch = chain
    model, _ = _pair(1)
    e, f = model.energy_and_forces(z, pos, batch)
    g = torch.Generator().manual_seed(fresh_seed)
    ei = radius_graph(pos, 8.0, batch)
    _, f_perm = model.energy_and_forces(
        z, pos, batch, edge_index=ei[:, torch.randperm(ei.shape[1], generator=g)]
    )
    torch.testing.assert_close(f_perm, f, rtol=1e-10, atol=1e-12)
    q, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64, generator=g))
    shift = torch.randn(3, dtype=torch.float64, generator=g) * 10
    e_rot, f_rot = model.energy_and_forces(z, pos @ q.T + shift, batch)
    torch.testing.assert_close(e_rot, e, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(f_rot, f @ q.T, rtol=1e-9, atol=1e-10)
    assert float(f.sum(0).abs().max()) < 1e-10  # no net force on an isolated system


def test_16bit_ignored_in_float64_and_small_in_float32(chain):
    z, pos, batch = chain
    m16, plain = _pair(2, weights_16bit=True)
    torch.testing.assert_close(
        m16.energy_and_forces(z, pos, batch)[1], plain.energy_and_forces(z, pos, batch)[1]
    )
    m16, plain = m16.float(), plain.float()
    _, f16 = m16.energy_and_forces(z, pos.float(), batch)
    _, f32 = plain.energy_and_forces(z, pos.float(), batch)
    rel = float((f16 - f32).norm() / f32.norm())
    assert 1e-6 < rel < 5e-2


def test_no_edges_gives_head_only_energy():
    model, plain = _pair(0)
    z = torch.tensor([1, 2, 3])
    pos = torch.tensor([[0.0, 0, 0], [20.0, 0, 0], [40.0, 0, 0]], dtype=torch.float64)
    e, f = model.energy_and_forces(z, pos)
    assert torch.equal(f, torch.zeros_like(f))
    torch.testing.assert_close(e, plain.energy_and_forces(z, pos)[0])


def test_bad_input(chain):
    z, pos, batch = chain
    model, _ = _pair(0)
    bad = pos.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(ValueError, match="pos contains NaN"):
        model.energy_and_forces(z, bad, batch)
    with pytest.raises(ValueError, match="batch must have shape"):
        model.energy_and_forces(z, pos, batch[:-1])
    with pytest.raises(ValueError, match="z must be"):
        model.energy_and_forces(z[:-1], pos, batch)
    with pytest.raises(ValueError, match="at least one bead"):
        model.energy_and_forces(z[:0], pos[:0], batch[:0])
    with pytest.raises(ValueError, match="cutoff must be a positive"):
        SchNet(cutoff=-1.0)
    with pytest.raises(ValueError, match="unknown techniques"):
        SchNet(flash=("fast",))


@pytest.mark.parametrize("path", ["flash", "plain"])
def test_bad_input_is_caught_before_autograd(chain, path):
    z, pos, batch = chain  # 2 replicas of 14 beads
    model = dict(zip(("flash", "plain"), _pair(0)))[path]
    with pytest.raises(TypeError, match="pos must have dtype"):
        model.energy_and_forces(z, pos.long(), batch)
    with pytest.raises(TypeError, match="pos must be a torch.Tensor, got list"):
        model.energy_and_forces(z, pos.tolist(), batch)
    for bad in ([[0], [28]], [[-1], [3]]):  # out of range as target, as source
        with pytest.raises(ValueError, match=r"edge_index holds node indices outside \[0, 28\)"):
            model.energy_and_forces(z, pos, batch, torch.tensor(bad))
    with pytest.raises(ValueError, match="edge_index joins beads of different replicas"):
        model.energy_and_forces(z, pos, batch, torch.tensor([[0, 1], [1, 20]]))
    with pytest.raises(TypeError, match="edge_index must be an integer"):
        model.energy_and_forces(z, pos, batch, torch.zeros(2, 3))
    with pytest.raises(ValueError, match="without gaps"):
        model.energy_and_forces(z, pos, 2 * batch)  # replica numbers 0 and 2
    with pytest.raises(ValueError, match="without gaps"):
        model.energy_and_forces(z, pos, batch + 1)  # no replica 0


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="backend must be one of"):
        SchNet(backend="cuda")
    with pytest.raises(TypeError, match="not the string 'csr'"):
        SchNet(flash="csr")


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
def test_triton_path_end_to_end_matches_twin(fresh_seed):
    z, pos, batch = bead_chain(9, 1, seed=fresh_seed % 1000, fold_steps=0)
    torch.manual_seed(0)
    tri = SchNet(16, 16, 1, 16, cutoff=8.0, max_z=21, backend="triton", weights_16bit=True)
    twin = SchNet(16, 16, 1, 16, cutoff=8.0, max_z=21, backend="torch", weights_16bit=True)
    twin.load_state_dict(tri.state_dict())
    e1, f1 = tri.energy_and_forces(z, pos, batch)
    e2, f2 = twin.energy_and_forces(z, pos, batch)
    torch.testing.assert_close(e1, e2, atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(f1, f2, atol=1e-3, rtol=1e-2)
