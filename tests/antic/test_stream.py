"""Tests for the neural field, the streaming compressor and the decoder."""

import math

import pytest
import torch

from icml26_lit.antic.neural_field import (
    MinMaxNormalizer,
    NeuralField,
    denormalize,
    fit_field,
    grid_coords,
    normalize,
    state_bytes,
)
from icml26_lit.antic.pats import UniformSelector
from icml26_lit.antic.stream import (
    ANTICConfig,
    StreamStopped,
    compress_stream,
    decompress,
    decompress_all,
    run_metrics,
)
from icml26_lit.sim import NavierStokes2D

torch.set_num_threads(1)


def smooth_frames(n=16, T=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    c = torch.arange(n) * (2 * math.pi / n)
    y, x = torch.meshgrid(c, c, indexing="ij")
    a = torch.randn(3, generator=g)
    return torch.stack(
        [
            a[0] * torch.sin(x + 0.1 * t)
            + a[1] * torch.cos(y - 0.05 * t)
            + 0.5 * a[2] * torch.sin(x + y)
            for t in range(T)
        ]
    )


def test_lora_zero_init_and_merge_equivalence(fresh_seed):
    nf = NeuralField(hidden=8, n_layers=2, n_freq=4, seed=fresh_seed % 1000)
    x = grid_coords(5)
    y0 = nf(x)
    nf.add_lora(3, seed=1)
    torch.testing.assert_close(nf(x), y0)
    with torch.no_grad():
        for b in nf.lora_b:
            b.normal_()
    y1 = nf(x)
    assert not torch.allclose(y1, y0)
    nf.merge_lora()
    torch.testing.assert_close(nf(x), y1, atol=1e-5, rtol=1e-5)


def test_lora_training_leaves_base_untouched():
    nf = NeuralField(hidden=8, n_layers=2, n_freq=4)
    base = nf.full_state()
    nf.add_lora(2)
    x = grid_coords(8)
    fit_field(nf, x, torch.sin(x[:, 0]), steps=5, params="lora", lr=1e-2)
    for k, v in nf.full_state().items():
        assert torch.equal(v, base[k]), k
    assert any(float(b.detach().abs().sum()) > 0 for b in nf.lora_b)


def test_lora_fit_freezes_the_base_only_while_it_trains(fresh_seed):
    # fit_field(params="lora") turns the base weights' gradients off while it trains (a speed-up:
    # autograd skips their products). The LoRA factors must come out bit-for-bit as from the same
    # steps with the base left trainable (then AdamW only ever steps the LoRA factors either way),
    # and every base weight must require grad again afterwards.
    x = grid_coords(8)
    y = torch.sin(x[:, 0] + fresh_seed % 7)
    fields = []
    for freeze in (True, False):
        nf = NeuralField(hidden=8, n_layers=2, n_freq=4, seed=fresh_seed)
        nf.add_lora(2, seed=fresh_seed)
        if freeze:
            mse = fit_field(
                nf, x, y, steps=6, params="lora", lr=1e-2, batch_size=20, seed=fresh_seed
            )
        else:  # the same loop by hand, base weights trainable
            opt = torch.optim.AdamW(nf.lora_parameters(), lr=1e-2, weight_decay=1e-4)
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=1e-5)
            g = torch.Generator().manual_seed(fresh_seed)
            for _ in range(6):
                idx = torch.randint(0, len(x), (20,), generator=g)
                loss = torch.nn.functional.mse_loss(nf(x[idx]), y.reshape(-1, 1)[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
        fields.append(nf)
    for a, b in zip(fields[0].lora_parameters(), fields[1].lora_parameters()):
        assert torch.equal(a, b), f"seed {fresh_seed}"
    assert all(p.requires_grad for p in fields[0].base_parameters())
    assert all(p.grad is None for p in fields[0].base_parameters())
    assert math.isfinite(mse)


def test_fit_recovers_a_smooth_field():
    x = grid_coords(16)
    target = torch.sin(x[:, 0]) * torch.cos(x[:, 1])
    nf = NeuralField(hidden=16, n_layers=2, n_freq=16, fourier_scale=1.0)
    mse = fit_field(nf, x, target, steps=300, lr=1e-2)
    assert mse < 0.01 * float(target.var())


def test_normalizer_roundtrip_and_constant():
    v = torch.randn(20)
    s = MinMaxNormalizer().update(v)
    z = normalize(v, s)
    assert float(z.min()) == pytest.approx(-1) and float(z.max()) == pytest.approx(1)
    torch.testing.assert_close(denormalize(z, s), v)
    c = torch.full((5,), 3.0)
    s = MinMaxNormalizer().update(c)
    torch.testing.assert_close(denormalize(normalize(c, s), s), c)


def test_byte_accounting_equals_stored_tensors():
    frames = smooth_frames()
    cfg = ANTICConfig(
        hidden=8,
        n_layers=2,
        n_freq=8,
        first_steps=5,
        steps=2,
        rank=2,
        reset_every=3,
        fp16=True,
        fp16_tol=10.0,
    )
    art, n_bytes = compress_stream(
        list(frames), len(frames) - 1, selector=UniformSelector(8, 8), config=cfg
    )
    total = art.header.numel() * art.header.element_size()
    for r in art.records:
        total += sum(t.numel() * t.element_size() for t in r.tensors.values())
    assert n_bytes == total == art.n_bytes
    kinds = [r.kind for r in art.records]
    assert kinds == ["full", "lora", "lora", "full", "lora", "lora", "full", "lora"]
    # fp16 with a loose tolerance: all weights stored in half precision
    lora_rec = art.records[1]
    assert lora_rec.tensors["lora_a0"].dtype == torch.float16
    n_lora = 2 * ((16 + 8) + (8 + 8))
    assert (
        state_bytes({k: v for k, v in lora_rec.tensors.items() if k.startswith("lora")})
        == 2 * n_lora
    )


def test_decompression_meets_requested_tolerance():
    frames = smooth_frames(T=5)
    tol = 0.03
    cfg = ANTICConfig(
        hidden=16,
        n_layers=2,
        n_freq=16,
        fourier_scale=1.0,
        first_steps=400,
        steps=20,
        rank=4,
        lr=1e-2,
        lr_end=1e-3,
        tol=tol,
        max_steps=200,
    )
    art, _ = compress_stream(list(frames), 4, selector=UniformSelector(5, 5), config=cfg)
    errs = [float((decompress(art, t) - frames[t]).norm() / frames[t].norm()) for t in range(5)]
    assert max(errs) <= tol, errs
    # the recorded fit errors are the decoded errors
    torch.testing.assert_close(
        torch.tensor(art.diagnostics["fit_rel_l2"]), torch.tensor(errs), atol=1e-5, rtol=1e-4
    )
    # without the tolerance the same tiny budget misses it
    loose = ANTICConfig(
        **{**cfg.__dict__, "tol": 0.0, "max_steps": 0, "steps": 1, "first_steps": 5}
    )
    art2, _ = compress_stream(list(frames), 4, selector=UniformSelector(5, 5), config=loose)
    assert (
        max(float((decompress(art2, t) - frames[t]).norm() / frames[t].norm()) for t in range(5))
        > tol
    )


def test_interpolation_of_skipped_frames():
    frames = smooth_frames(T=7)
    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=3, steps=1, rank=2)
    art, _ = compress_stream(list(frames), 6, selector=UniformSelector(7, 3), config=cfg)
    assert art.kept == [0, 3, 6]
    a, b = decompress(art, 3), decompress(art, 6)
    torch.testing.assert_close(decompress(art, 4), (2 * a + b) / 3, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(decompress_all(art)[5], (a + 2 * b) / 3, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="t must be in"):
        decompress(art, 7)


def test_nan_frame_stops_stream_and_partial_artefact_readable():
    frames = list(smooth_frames(T=8))
    frames[5] = frames[5].clone()
    frames[5][0, 0] = float("nan")
    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=3, steps=1, rank=2)
    with pytest.raises(StreamStopped, match="frame 5 contains non-finite") as info:
        compress_stream(frames, 7, selector=UniformSelector(8, 8), config=cfg)
    art = info.value.artefact
    assert art.kept == [0, 1, 2, 3, 4] and art.n_frames == 5
    assert decompress_all(art).shape == (5, 16, 16)


def test_stream_from_solver_and_metrics():
    ns = NavierStokes2D(16, 1e-3, forcing="kolmogorov")
    w0 = ns.random_field(seed=0)
    seen = []
    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=5, steps=2, rank=2)
    art, n_bytes = compress_stream(
        ns, 6, omega0=w0, dt_out=0.02, config=cfg, on_frame=lambda k, f: seen.append(f.float())
    )
    assert art.n_frames == 7 and art.kept[0] == 0 and art.kept[-1] == 6
    ref = torch.stack(seen)
    m = run_metrics(decompress_all(art), ref)
    assert set(m) == {"rel_l2", "psnr", "enstrophy_err", "spectrum_err"}
    exact = run_metrics(ref, ref)
    assert exact["rel_l2"] == 0 and exact["enstrophy_err"] == 0 and exact["spectrum_err"] == 0
    # PSNR by hand for a known error
    noisy = ref + 0.1
    mse = 0.01
    assert run_metrics(noisy, ref)["psnr"] == pytest.approx(
        10 * math.log10(float(ref.abs().max()) ** 2 / mse), rel=1e-4
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match="mode must be"):
        ANTICConfig(mode="mixed")
    with pytest.raises(ValueError, match="rank must be a positive int"):
        ANTICConfig(rank=0)
    with pytest.raises(ValueError, match="n_steps must be an int >= 1"):
        compress_stream([torch.zeros(4, 4)], 0)
    ns = NavierStokes2D(16, 1e-3)
    with pytest.raises(ValueError, match="omega0 and dt_out are required"):
        compress_stream(ns, 3)
    with pytest.raises(ValueError, match="params must be"):
        fit_field(NeuralField(), grid_coords(4), torch.zeros(16), 1, params="some")


def test_frames_outside_kept_span_raise():
    frames = smooth_frames(T=6)
    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=2, steps=1, rank=2)
    from icml26_lit.antic.stream import StreamCompressor

    comp = StreamCompressor(16, cfg)
    comp.add(0, frames[0])
    comp.add(3, frames[3])
    art = comp.artefact
    art.header[1] = 6  # a run of 6 frames whose last kept frame is 3
    decompress(art, 2)
    with pytest.raises(ValueError, match="outside the kept frames"):
        decompress(art, 5)
    with pytest.raises(ValueError, match="must span"):
        decompress_all(art)
    with pytest.raises(ValueError, match="increasing order"):
        comp.add(2, frames[2])


class _Recorder:
    "Wrap a selector and record the raw frames it holds whenever a new frame arrives."

    def __init__(self, inner):
        self.inner, self.held = inner, []

    def update(self, frame):
        self.held.append(self.inner.held_frames())
        return self.inner.update(frame)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_stream_holds_one_raw_frame_besides_the_current_one():
    from icml26_lit.antic.pats import PATSSelector, select_offline

    ns = NavierStokes2D(16, 5e-2, forcing="kolmogorov")
    w0 = ns.random_field(seed=1)
    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=30, steps=5, rank=2, lr=1e-2)
    seen = []
    rec = _Recorder(PATSSelector(0.9, 5))
    art, _ = compress_stream(
        ns,
        24,
        omega0=w0,
        dt_out=0.05,
        selector=rec,
        config=cfg,
        on_frame=lambda k, f: seen.append(f),
    )
    assert max(rec.held) == 1 and len(rec.held) == 25
    official = select_offline(torch.stack(seen), PATSSelector(0.9, 5))
    assert art.kept == official  # the half-precision anchor keeps the official decisions
    assert 2 < len(official) < 25  # (a run where the selector has decisions to make)
    # the official rule itself (raw anchor) holds two raw frames
    raw = _Recorder(PATSSelector(0.9, 5))
    art_raw, _ = compress_stream(list(seen), 24, selector=raw, config=cfg, anchor="raw")
    assert max(raw.held) == 2 and art_raw.kept == official
    # the stored reconstruction as the anchor: one raw frame too
    dec = _Recorder(PATSSelector(0.9, 5))
    compress_stream(list(seen), 24, selector=dec, config=cfg, anchor="decoded")
    assert max(dec.held) == 1


def test_half_copy_keeps_correlations(fresh_seed):
    from icml26_lit.antic.pats import half_copy, pearson

    g = torch.Generator().manual_seed(fresh_seed)
    a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
    b = 0.9 * a + 0.3 * b
    for scale in (1e-3, 1.0, 1e6):  # fp16 alone would overflow at 1e6
        h = half_copy(scale * a)
        assert h.dtype == torch.float16 and float(h.abs().max()) == 1.0
        assert abs(pearson(b, h) - pearson(b, a)) < 1e-4


def test_constant_anchor_rule_survives_a_stand_in():
    from icml26_lit.antic.pats import PATSSelector, half_copy, select_offline

    frames = [torch.full((8, 8), 0.1)] * 7  # 0.1 is not exact in fp16
    sel = PATSSelector(0.9, 3)
    for f in frames:
        sel.update(f)
        for i, kept in sel.pop_new():
            sel.set_anchor(i, half_copy(kept))
    assert sel.finish() == select_offline(torch.stack(frames), PATSSelector(0.9, 3)) == [0, 3, 6]


def test_stream_refuses_a_selector_that_holds_too_much():
    from icml26_lit.antic.pats import PATSSelector

    class Hoarder(PATSSelector):
        def held_frames(self):
            return 2

    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=2, steps=1, rank=2)
    with pytest.raises(
        RuntimeError, match="holds 2 raw frames besides the current one, more than 1"
    ):
        compress_stream(list(smooth_frames(T=4)), 3, selector=Hoarder(), config=cfg)
    with pytest.raises(ValueError, match="anchor must be 'half', 'decoded' or 'raw'"):
        compress_stream(list(smooth_frames(T=4)), 3, config=cfg, anchor="both")


def test_neural_field_backend_triton_matches_torch_forward_and_gradients(fresh_seed):
    # the fused forward (interpreter) and the PyTorch forward on the same weights; the kernel's
    # backward recomputes the reference, so the gradients agree to fp32 rounding of a few-layer MLP
    kw = dict(hidden=16, n_layers=2, n_freq=16, fourier_scale=3.0, seed=fresh_seed % 1000)
    fields = {b: NeuralField(backend=b, **kw) for b in ("torch", "triton")}
    for f in fields.values():
        f.add_lora(3, seed=1)
        with torch.no_grad():
            for b in f.lora_b:
                b.fill_(0.05)
    x = grid_coords(6)
    y = torch.sin(x[:, :1])
    grads = {}
    for name, f in fields.items():
        loss = ((f(x) - y) ** 2).mean()
        loss.backward()
        grads[name] = [p.grad.clone() for p in f.lora_parameters()]
    with torch.no_grad():
        # fp32 matmuls of width <= 32 and a LayerNorm: ~1e-6 relative; 1e-4 leaves a wide margin
        torch.testing.assert_close(fields["triton"](x), fields["torch"](x), atol=1e-4, rtol=1e-4)
    for gt, gr in zip(grads["triton"], grads["torch"]):
        torch.testing.assert_close(gt, gr, atol=1e-4, rtol=1e-4)
    cfg = ANTICConfig(
        hidden=16, n_layers=2, n_freq=16, first_steps=2, steps=1, rank=2, backend="triton"
    )
    art, _ = compress_stream(
        list(smooth_frames(T=3)), 2, selector=UniformSelector(3, 3), config=cfg
    )
    assert art.kept == [0, 1, 2]


def test_field_and_config_reject_bad_values():
    nf = NeuralField(hidden=8, n_layers=2, n_freq=4)
    x = grid_coords(4)
    x[3, 1] = float("nan")
    with pytest.raises(ValueError, match="x \\(the coordinates\\) contains non-finite values"):
        nf(x)
    with pytest.raises(ValueError, match=r"x must have shape \(N, 2\)"):
        nf(torch.zeros(5, 3))
    with pytest.raises(ValueError, match="backend must be"):
        NeuralField(backend="gpu")
    for lr in (float("nan"), -1e-3, 0.0):
        with pytest.raises(ValueError, match="lr must be"):
            fit_field(
                NeuralField(hidden=8, n_layers=1, n_freq=4),
                grid_coords(4),
                torch.zeros(16),
                1,
                lr=lr,
            )
        with pytest.raises(ValueError, match="lr must be"):
            ANTICConfig(lr=lr)
    with pytest.raises(ValueError, match="lr_end must be a finite number >= 0"):
        ANTICConfig(lr_end=float("nan"))
    with pytest.raises(ValueError, match="backend must be"):
        ANTICConfig(backend="cuda")


def test_uniform_selector_sized_for_another_stream():
    frames = list(smooth_frames(T=6))
    cfg = ANTICConfig(hidden=8, n_layers=2, n_freq=8, first_steps=1, steps=1, rank=2)
    with pytest.raises(
        ValueError, match="sized for a stream of n_frames=5, the stream has 6 frames"
    ):
        compress_stream(frames, 5, selector=UniformSelector(5, 3), config=cfg)
    with pytest.raises(
        ValueError, match="sized for a stream of n_frames=8, the stream has 6 frames"
    ):
        compress_stream(frames, 5, selector=UniformSelector(8, 3), config=cfg)
    sel = UniformSelector(3, 2)
    for f in frames[:3]:
        sel.update(f)
    with pytest.raises(ValueError, match="sized for a stream of n_frames=3, got frame 3"):
        sel.update(frames[3])
    short = UniformSelector(4, 2)
    short.update(frames[0])
    with pytest.raises(ValueError, match="the stream has 1 frames"):
        short.finish()
