"""Tests for the experiment helpers: classical codecs, matching, and the selection summary."""

import numpy as np
import pytest
import torch

from icml26_lit.antic.experiments import (
    CONFIG,
    blosc2_bytes,
    blosc2_roundtrip,
    codec_roundtrip,
    match_codec,
    selection_summary,
)


@pytest.mark.parametrize("codec", ["zfp", "sz3"])
def test_codecs_respect_their_absolute_error_bound(codec, fresh_seed):
    x = np.random.default_rng(fresh_seed).standard_normal((2, 32, 32)).astype(np.float32)
    for bound in (1e-3, 0.1):
        nbytes, dec = codec_roundtrip(x, codec, bound)
        assert np.abs(dec - x).max() <= bound * 1.0001
        assert 0 < nbytes < x.nbytes


@pytest.mark.parametrize("codec", ["zfp", "sz3"])
def test_match_codec_meets_budget_and_target(codec):
    x = np.cumsum(np.random.default_rng(0).standard_normal((3, 32, 32)), axis=2).astype(np.float32)
    m = match_codec(x, codec, max_bytes=x.nbytes / 8)
    assert m["n_bytes"] <= x.nbytes / 8
    e = match_codec(x, codec, max_rel_l2=0.01)
    assert np.linalg.norm(e["recon"] - x) / np.linalg.norm(x) <= 0.01
    with pytest.raises(ValueError, match="exactly one"):
        match_codec(x, codec)


def test_blosc2_round_trip_is_bit_exact(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    x = np.cumsum(rng.standard_normal((3, 16, 16)), axis=2).astype(np.float32)
    nbytes, dec = blosc2_roundtrip(x)
    assert dec.dtype == np.float32 and dec.shape == x.shape
    assert np.array_equal(dec.view(np.uint32), x.view(np.uint32))  # every bit back
    assert nbytes == blosc2_bytes(x) and 0 < nbytes
    z = np.zeros((2, 16, 16), dtype=np.float32)
    assert blosc2_bytes(z) < z.nbytes / 10 and np.array_equal(blosc2_roundtrip(z)[1], z)
    with pytest.raises(ValueError, match="codec must be"):
        codec_roundtrip(x, "jpeg", 0.1)


def test_selection_summary_on_frozen_run():
    f = torch.randn(1, 8, 8).repeat(11, 1, 1)
    s = selection_summary(f, 0.9, 5, full_bytes=100, lora_bytes=10, reset_every=50)
    assert s["kept"] == 3 and s["temporal_rel_l2"] == pytest.approx(0.0, abs=1e-6)
    assert s["ratio"] == pytest.approx(f.numel() * 4 / (100 + 2 * 10))


def test_presets_share_keys():
    keys = set(CONFIG.get("ci"))
    assert keys == set(CONFIG.get("colab")) == set(CONFIG.get("full"))
    assert CONFIG.get("full").n == 256 and CONFIG.get("full").n_steps == 1000
