"""Chapter 17: AFR-Net forward/backward, its backends, its checks."""

import pytest
import torch

from icml26_lit.afr_net.data import prepare_graphs
from icml26_lit.afr_net.model import AFRNet


def _tiny_batch(seed, n=8, b=2):
    g = torch.Generator().manual_seed(seed)
    sc = torch.rand(b, n, n, generator=g, dtype=torch.float64)
    sc = (sc + sc.transpose(1, 2)) * (torch.rand(b, n, n, generator=g) < 0.5).double()
    sc = torch.triu(sc, 1)
    sc = sc + sc.transpose(1, 2)
    ring = torch.roll(torch.eye(n, dtype=torch.float64), 1, 1)
    sc = sc + 0.3 * (ring + ring.T)  # a ring keeps every graph connected
    x = torch.randn(b, n, 50, generator=g, dtype=torch.float64)
    fc = torch.stack([torch.corrcoef(xi) for xi in x])
    return prepare_graphs(sc.numpy(), fc.numpy())


def test_forward_backward_triton_equals_torch(fresh_seed):
    batch = _tiny_batch(fresh_seed)
    outs = {}
    for backend in ("torch", "triton"):
        model = AFRNet(
            8,
            d=8,
            n_heads=2,
            dropout=0.0,
            backend=backend,
            generator=torch.Generator().manual_seed(fresh_seed),
        )
        logits, m = model(batch, return_mask=True)
        logits.sum().backward()
        outs[backend] = (
            logits.detach(),
            m,
            model.gate.mlp[0].weight.grad.clone(),
            model.theta.grad.clone(),
        )
    # fp64 energies, fp32 network: the kernel and the reference round differently at ~1e-7
    for a, b in zip(outs["torch"], outs["triton"]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=f"seed {fresh_seed}")


def test_generator_leaves_global_rng_alone():
    state = torch.random.get_rng_state()
    a = AFRNet(8, d=8, n_heads=2, generator=torch.Generator().manual_seed(1))
    b = AFRNet(8, d=8, n_heads=2, generator=torch.Generator().manual_seed(1))
    assert torch.equal(torch.random.get_rng_state(), state)
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)


def test_generator_sets_every_parameter():
    "Same generator seed under two global RNG states: equal state_dicts, global state kept."
    built = []
    for global_seed in (11, 12):
        torch.manual_seed(global_seed)
        state = torch.random.get_rng_state()
        built.append(AFRNet(8, d=8, n_heads=2, generator=torch.Generator().manual_seed(4)))
        assert torch.equal(torch.random.get_rng_state(), state)
    a, b = (m.state_dict() for m in built)
    assert a.keys() == b.keys()
    assert any("in_proj_weight" in k for k in a)  # the masked transformer's attention
    for k in a:
        assert torch.equal(a[k], b[k]), k
    # another generator seed moves every random parameter (constants: LayerNorm, zero biases)
    c = AFRNet(8, d=8, n_heads=2, generator=torch.Generator().manual_seed(5)).state_dict()
    # the constants by law: LayerNorm at (1, 0), attention input biases at 0, theta at 0
    norms = [n for n, m in built[0].named_modules() if isinstance(m, torch.nn.LayerNorm)]
    constant = {f"{n}.{w}" for n in norms for w in ("weight", "bias")} | {"theta"}
    constant |= {k for k in a if k.endswith("in_proj_bias")}
    assert {"encoder.input.1.weight", "encoder.norm.bias"} <= constant  # found by type
    for k in a:
        if k in constant:
            assert torch.equal(a[k], c[k]), k
        else:
            assert not torch.equal(a[k], c[k]), k


def test_bad_model_inputs():
    with pytest.raises(ValueError, match="mask_mode"):
        AFRNet(8, mask_mode="none")
    with pytest.raises(ValueError, match="tau must be positive"):
        AFRNet(8, tau=0.0)
    batch = _tiny_batch(0)
    del batch["spd"]
    with pytest.raises(ValueError, match="batch is missing 'spd'"):
        AFRNet(8, d=8, n_heads=2)(batch)
