"The SameDevice dispatch mode fails ops whose tensors span two devices (Platform F, item 1)."

import pytest
import torch
import torch.nn.functional as F

from icml26_lit.core.kernels import MixedDeviceError, check_same_device


def _meta(*shape, **kw):
    return torch.empty(*shape, device="meta", **kw)


def test_all_meta_step_passes():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 8, device="meta")
    lin = torch.nn.Linear(8, 3, device="meta")
    idx = torch.zeros(5, dtype=torch.long, device="meta")
    with check_same_device():
        h = emb(idx)
        y = lin(h).relu()
        mask = _meta(5, 3, dtype=torch.bool)
        z = y.masked_scatter(mask, _meta(15))
        loss = (z * 2.0).sum() + torch.tensor(1.0)  # a 0-dim CPU scalar is allowed
        loss.backward()
        moved = torch.ones(3).to("meta")  # explicit transfers are allowed
    assert loss.device.type == "meta" and moved.device.type == "meta"


@pytest.mark.parametrize(
    "case",
    ["embedding_cpu_indices", "linear_cpu_weight", "masked_scatter_cpu_mask", "add_cpu_vector"],
)
def test_planted_cpu_tensor_fails(case):
    # each of these succeeds on meta without the mode (so a meta-only test would miss it)
    ops = {
        "embedding_cpu_indices": lambda: torch.nn.Embedding(10, 4, device="meta")(
            torch.zeros(3, dtype=torch.long)
        ),
        "linear_cpu_weight": lambda: F.linear(_meta(2, 4), torch.ones(3, 4)),
        "masked_scatter_cpu_mask": lambda: _meta(2, 3).masked_scatter(
            torch.ones(2, 3, dtype=torch.bool), _meta(6)
        ),
        "add_cpu_vector": lambda: _meta(3) + torch.arange(3.0),
    }
    if case != "add_cpu_vector":
        ops[case]()  # passes silently without the mode
    with pytest.raises(MixedDeviceError, match=r"aten::\w+ received tensors on \['cpu', 'meta'\]"):
        with check_same_device():
            ops[case]()


def test_mode_leaves_cpu_only_work_alone():
    with check_same_device():
        x = torch.randn(4, 3)
        y = F.linear(x, torch.randn(2, 3)).sum()
    assert torch.isfinite(y)


def test_check_tensor_reads_no_values_of_a_meta_tensor():
    from icml26_lit.core import check_tensor

    assert check_tensor(_meta(3), "x").device.type == "meta"  # no host read of its values
    with pytest.raises(ValueError, match="x contains NaN"):
        check_tensor(torch.tensor([1.0, float("nan")]), "x")
