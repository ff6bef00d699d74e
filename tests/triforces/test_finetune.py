"""Fine-tuning: the standardiser maps back to eV, training lowers the error, the same generator
gives the same run, bad input is refused."""

import numpy as np
import pytest
import torch

from icml26_lit.triforces.alloys import collate, make_alloy_dataset
from icml26_lit.triforces.finetune import Standardiser, evaluate, finetune
from icml26_lit.triforces.model import TriForces


def test_standardiser_round_trip():
    data = make_alloy_dataset(20, seed=0)
    st = Standardiser(data)
    e = np.array([s["energy"] / len(s["numbers"]) for s in data])
    assert st.e_mean == pytest.approx(e.mean(), rel=1e-12) and st.e_std == pytest.approx(
        e.std(), rel=1e-9
    )

    class Oracle(TriForces):  # returns the standardised truth: predict must give back eV
        def energy_and_forces(self, batch, head="direct"):
            e_std = (batch["energy"] / batch["n_atoms"] - st.e_mean) / st.e_std * batch["n_atoms"]
            return e_std, batch["forces"] / st.f_rms

    b = collate(data, dtype=torch.float64)
    e_pred, f_pred = st.predict(Oracle(), b)
    torch.testing.assert_close(e_pred, b["energy"] / b["n_atoms"])
    torch.testing.assert_close(f_pred, b["forces"])


def test_finetune_lowers_error_and_is_reproducible():
    lab, test = make_alloy_dataset(32, seed=1), make_alloy_dataset(32, seed=2)
    runs = []
    for _ in range(2):
        m = TriForces(streams=("interaction",), generator=torch.Generator().manual_seed(0))
        st = finetune(
            m, lab, steps=20, batch_size=8, lr=3e-3, generator=torch.Generator().manual_seed(0)
        )
        runs.append(evaluate(m, st, test))
    assert runs[0] == runs[1]  # same seeds: the same numbers
    m0 = TriForces(streams=("interaction",), generator=torch.Generator().manual_seed(0))
    before = evaluate(m0, Standardiser(lab), test)
    assert runs[0]["force_mae"] < before["force_mae"]


def test_finetune_bad_input():
    m = TriForces(streams=("interaction",), generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="at least two labelled"):
        finetune(m, make_alloy_dataset(1), steps=1)
    with pytest.raises(ValueError, match="must be positive"):
        finetune(m, make_alloy_dataset(4), steps=0)
