"ECGR1Model builds its prompt and targets on its parameters' device (Platform F item 1)."

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.ecg_r1 import make_examples, simulate_ecg
from tests.ecg_r1.test_model import _model


def _examples(device):
    m = _model("torch")
    recs = [simulate_ecg(lab, seed=i) for i, lab in enumerate([["sinus"], ["AF", "LVH"]])]
    sf, imf = m.features(torch.stack([r[0] for r in recs]), torch.stack([r[1] for r in recs]))
    exs = make_examples(sf.to(device), imf.to(device))
    exs[1] = dict(exs[1], image=None, order=("ecg",))  # prompts of different lengths
    return m, exs


def test_sft_step_on_meta_stays_on_meta():
    m, exs = _examples("meta")
    m = m.to("meta")
    with check_same_device():
        emb, mask = m.prompt(exs)  # the layout is built on the host and moved once
        loss = m.sft_loss(exs, [[1, 5, 9, 2], [7, 2]])
        loss.backward()
    assert emb.device.type == mask.device.type == loss.device.type == "meta"


def test_planted_cpu_features_fail():
    m, exs = _examples("cpu")  # features left on the CPU while the model is on meta
    m = m.to("meta")
    with pytest.raises(MixedDeviceError):
        with check_same_device():
            m.sft_loss(exs, [[1, 5, 9, 2], [7, 2]])
