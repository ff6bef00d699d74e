"""Encoders and heads: shapes, locality, hybrid, poles, longitude wrap, bad input."""

import math

import pytest
import torch

from icml26_lit.slepian import (
    CartesianEncoder,
    HybridEncoder,
    LatLonEncoder,
    LocationModel,
    SirenHead,
    SlepianEncoder,
    SphericalHarmonicsEncoder,
    make_head,
    slepian_cap,
)
from icml26_lit.sphere import real_sph_harm


def test_sh_encoder_is_real_sph_harm(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = torch.stack(
        [
            torch.rand(20, generator=g, dtype=torch.float64) * 180 - 90,
            torch.rand(20, generator=g, dtype=torch.float64) * 360,
        ],
        1,
    )
    enc = SphericalHarmonicsEncoder()
    assert enc.out_dim == 100  # the paper's SH10 is L = 9
    torch.testing.assert_close(enc(x), real_sph_harm(x[:, 0], x[:, 1], 9))


def test_slepian_encoder_matches_cap_and_is_local():
    enc = SlepianEncoder(theta_deg=10.0, center=(36.0, 138.0), L=30, backend="torch")
    cap = slepian_cap(10.0, 30, center=(36.0, 138.0))
    idx = cap.select(0.05, n_max=int(2 * cap.shannon_number))
    assert enc.out_dim == idx.numel()
    x = torch.tensor(
        [[36.0, 138.0], [40.0, 135.0], [-36.0, -42.0], [0.0, 0.0]], dtype=torch.float64
    )
    f = enc(x)
    torch.testing.assert_close(
        f, cap.evaluate_reference(x[:, 0], x[:, 1], idx), atol=1e-12, rtol=1e-9
    )
    inside, outside = (f[:2] ** 2).sum(1), (f[2:] ** 2).sum(1)
    assert bool((outside < 1e-2 * inside.min()).all())  # weak modes (λ ~ 0.05) leak a little


def test_slepian_encoder_pole_and_longitude_wrap():
    enc = SlepianEncoder(theta_deg=20.0, center=(80.0, 30.0), L=16, backend="torch")
    lon = torch.linspace(-180, 180, 9, dtype=torch.float64)
    f = enc(torch.stack([torch.full_like(lon, 90.0), lon], 1))
    torch.testing.assert_close(f, f[:1].expand_as(f), atol=1e-12, rtol=0)
    x = torch.tensor([[75.0, 10.0], [85.0, 100.0]], dtype=torch.float64)
    torch.testing.assert_close(enc(x + torch.tensor([0.0, 360.0], dtype=torch.float64)), enc(x))


def test_slepian_encoder_backend_auto_on_cpu_equals_torch():
    a = SlepianEncoder(theta_deg=15.0, center=(0.0, 0.0), L=12, backend="auto")
    b = SlepianEncoder(theta_deg=15.0, center=(0.0, 0.0), L=12, backend="torch")
    x = torch.tensor([[1.0, 2.0], [-5.0, 10.0]], dtype=torch.float64)
    torch.testing.assert_close(a(x), b(x))


def test_hybrid_is_concatenation_with_several_caps():
    caps = [
        dict(theta_deg=10.0, center=(36.0, 138.0), L=20),
        dict(theta_deg=25.0, center=(40.0, -95.0), L=12),
    ]
    hyb = HybridEncoder(9, caps, backend="torch")
    x = torch.tensor([[36.0, 138.0], [40.0, -95.0], [-60.0, 0.0]], dtype=torch.float64)
    parts = [SphericalHarmonicsEncoder(9)(x)] + [
        SlepianEncoder(**c, backend="torch")(x) for c in caps
    ]
    torch.testing.assert_close(hyb(x), torch.cat(parts, 1))
    assert hyb.out_dim == sum(p.shape[1] for p in parts)


def test_coordinate_baselines():
    x = torch.tensor([[0.0, 0.0], [45.0, 270.0], [-90.0, 12.0]])
    torch.testing.assert_close(
        LatLonEncoder()(x), torch.tensor([[0.0, 0.0], [0.5, -0.5], [-1.0, 12 / 180]])
    )
    c = CartesianEncoder()(x)
    torch.testing.assert_close(c.norm(dim=1), torch.ones(3))
    torch.testing.assert_close(c[2], torch.tensor([0.0, 0.0, -1.0]), atol=1e-6, rtol=0)


@pytest.mark.parametrize("head", ["linear", "mlp", "siren"])
def test_heads_train(head, fresh_seed):
    torch.manual_seed(fresh_seed)
    model = LocationModel(SphericalHarmonicsEncoder(3), head=head, out_dim=2)
    x = torch.rand(32, 2) * 100 - 50
    model.standardizer.fit(model.encoder(x))
    loss = model(x).pow(2).mean()
    loss.backward()
    grads = [p.grad for p in model.head.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    f = model.standardizer(model.encoder(x))
    torch.testing.assert_close(f.mean(0)[1:], torch.zeros(15), atol=1e-5, rtol=0)


def test_siren_init_bounds():
    h = SirenHead(10, 1, hidden=64, depth=3)
    assert h.layers[0].weight.abs().max() <= 1 / 10
    assert h.layers[1].weight.abs().max() <= math.sqrt(6 / 64) / 1.0


def test_bad_input():
    enc = SphericalHarmonicsEncoder(3)
    with pytest.raises(ValueError, match=r"x must have shape \(N, 2\)"):
        enc(torch.zeros(4, 3))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        enc([[0.0, 0.0]])
    with pytest.raises(ValueError, match="lat must lie in"):
        enc(torch.tensor([[-91.0, 0.0]]))
    with pytest.raises(ValueError, match="lon contains NaN"):
        enc(torch.tensor([[0.0, float("nan")]]))
    with pytest.raises(ValueError, match="keeps no mode"):
        SlepianEncoder(theta_deg=5.0, L=8, threshold=0.99)
    with pytest.raises(ValueError, match="the cap radius"):
        SlepianEncoder(theta_deg=-1.0)
    with pytest.raises(ValueError, match="caps must hold at least one cap"):
        HybridEncoder(9, [])
    with pytest.raises(TypeError, match="caps must be a list of dicts"):
        HybridEncoder(9, dict(theta_deg=10.0))
    with pytest.raises(ValueError, match="is not known"):
        make_head("gru", 3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_coordinates_name_x(dtype):
    x = torch.tensor([[36.0, 138.0]], dtype=dtype)
    for enc in (
        SphericalHarmonicsEncoder(3),
        SlepianEncoder(L=8, backend="torch"),
        CartesianEncoder(),
        LatLonEncoder(),
        HybridEncoder(2, [dict(theta_deg=10.0, L=8)], backend="torch"),
    ):
        with pytest.raises(TypeError, match="x must be float32 or float64"):
            enc(x)
    # integer degrees are exact: accepted, as float32
    assert SphericalHarmonicsEncoder(2)(torch.tensor([[36, 138]])).dtype == torch.float32


def test_center_with_nan_names_center():
    with pytest.raises(ValueError, match="center must hold finite numbers"):
        SlepianEncoder(center=(float("nan"), 138.0), L=8)
    with pytest.raises(ValueError, match="center latitude must lie in"):
        SlepianEncoder(center=(-90.5, 0.0), L=8)


@pytest.mark.parametrize(
    "make",
    [
        lambda b: SphericalHarmonicsEncoder(3, backend=b),
        lambda b: SlepianEncoder(L=8, backend=b),
        lambda b: HybridEncoder(2, [dict(theta_deg=10.0, L=8)], backend=b),
    ],
)
def test_backend_is_checked_when_built(make):
    for bad in ("gpu", "Triton", None, 1):
        with pytest.raises(ValueError, match=f"backend={bad!r} is not valid"):
            make(bad)


def test_hybrid_bad_cap_names_the_key():
    with pytest.raises(
        ValueError, match="caps\\[0\\] has an unknown key 'theta'; a cap takes theta_deg"
    ):
        HybridEncoder(2, [dict(theta=10.0, L=8)])
    with pytest.raises(ValueError, match="caps\\[1\\] has an unknown key 'lmax'"):
        HybridEncoder(2, [dict(L=8), dict(lmax=8)])
    with pytest.raises(TypeError, match="caps\\[0\\] must be a dict"):
        HybridEncoder(2, [(10.0, (36.0, 138.0))])
    with pytest.raises(ValueError, match=r"caps\[0\]: theta_deg \(the cap radius\)"):
        HybridEncoder(2, [dict(theta_deg=-1.0, L=8)])
    with pytest.raises(ValueError, match=r"caps\[0\]: center must hold finite"):
        HybridEncoder(2, [dict(center=(float("nan"), 0.0), L=8)])
    with pytest.raises(TypeError, match=r"caps\[0\]: L must be an int"):
        HybridEncoder(2, [dict(L=8.5)])
    with pytest.raises(ValueError, match=r"caps\[0\]: backend='x' is not valid"):
        HybridEncoder(2, [dict(L=8, backend="x")])


def test_sh_encoder_holds_no_weights():
    # the identity coefficients are buffers for the kernel, not saved state
    assert SphericalHarmonicsEncoder(5).state_dict() == {}
