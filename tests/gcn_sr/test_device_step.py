"""Two iterations of Chapter 18's search, per arm, under the same-device check (Platform F).

The loop reads rewards back and runs GP on the host (NumPy), so it runs on the CPU with the
*default* device set to `meta`: any tensor the generator, the scorer, GP or the update builds
without naming its device lands on meta and the same-device check fails on its first use.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.gcn_sr import GCNSR, Library
from icml26_lit.gcn_sr.fitness import nguyen

ARMS = [("swpg", "gcn"), ("pg", "gcn"), ("imitation", "gcn"), ("pg", "sequence")]


def _model(mode, decoder):
    return GCNSR(
        depth=4,
        library=Library(n_vars=1),
        mode=mode,
        decoder=decoder,
        budget=64,
        batch_size=16,
        width=8,
        gp_offspring=16,
        seed=0,
    )


@pytest.mark.parametrize("mode,decoder", ARMS)
def test_search_iterations_same_device(mode, decoder):
    X, y, _ = nguyen(1)
    m = _model(mode, decoder)
    with torch.device("meta"), check_same_device():
        m.fit(X, y)
    assert m.n_updates >= 2 and m.best_tokens is not None


def test_planted_tensor_on_the_default_device_fails():
    m = _model("pg", "gcn")
    decided = torch.ones(2, m.spbt.n_slots, dtype=torch.bool)
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        tokens = torch.zeros(2, m.spbt.n_slots, dtype=torch.long)  # built without device=: on meta
        m.generator.logits(tokens, decided, 0)
