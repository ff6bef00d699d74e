"""One training step of Chapter 19's receiver under the same-device check (Platform F).

The letters are tokenised on the host and moved to the model's device once. Two checks: the
likelihood step with the receiver on `meta` (inputs built on the host must be moved, or the check
fails), and `fit` plus `posterior` on the CPU with the *default* device set to `meta`, so that any
tensor the step builds without naming a device lands on meta and fails on its first use.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.verbalized_persuasion.experiments import make_corpus
from icml26_lit.verbalized_persuasion.receiver import ReceiverLM


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(16, 0.2, torch.Generator().manual_seed(0))


def _receiver():
    return ReceiverLM(16, 1, 2, generator=torch.Generator().manual_seed(1), backend="auto")


def _cols(rec):
    return [r[0] for r in rec], [r[1] for r in rec], [r[2] for r in rec]


def test_likelihood_step_on_meta(corpus):
    rx = _receiver().to("meta")
    opt = torch.optim.AdamW(rx.parameters(), lr=1e-3)
    with check_same_device():
        loss = -rx.log_likelihood(*_cols(corpus[:4])).mean()
        loss.backward()
        opt.step()


def test_fit_and_posterior_same_device(corpus):
    rx, g = _receiver(), torch.Generator().manual_seed(2)
    with torch.device("meta"), check_same_device():
        rx.fit(corpus, 1, 4, 1e-3, g)
        p = rx.posterior([r[0] for r in corpus[:3]], [r[2] for r in corpus[:3]])
    assert p.shape == (3,)


def test_planted_cpu_tensor_fails(corpus):
    rx = _receiver().to("meta")
    ids, att, _, _ = rx.batch(*_cols(corpus[:2]))  # host tensors, never moved
    with pytest.raises(MixedDeviceError), check_same_device():
        rx.lm.hidden(embeds=rx.lm.embed(ids), attention_mask=att)
