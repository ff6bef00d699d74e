"""slice_tokens and deslice name the argument that sits on another device (meta stands in for a
GPU here: it is another device type with no values to read)."""

import pytest
import torch

from icml26_lit.geopt.kernels import deslice, slice_tokens

B, H, N, C, G = 1, 2, 5, 3, 4


def args(device_of: str | None = None):
    g = torch.Generator().manual_seed(0)
    a = dict(
        x=torch.randn(B, H, N, C, generator=g),
        f=torch.randn(B, H, N, C, generator=g),
        w=torch.randn(C, G, generator=g),
        b=torch.randn(G, generator=g),
        tau=torch.ones(H),
    )
    if device_of is not None:
        a[device_of] = torch.empty_like(a[device_of], device="meta")
    return a


@pytest.mark.parametrize("name", ["f", "w", "b", "tau"])
def test_slice_tokens_names_the_input_on_another_device(name):
    with pytest.raises(ValueError, match=f"^{name} is on meta"):
        slice_tokens(**args(name), backend="torch")


def test_deslice_names_z_on_another_device():
    a = args()
    z = torch.empty(B, H, G, C, device="meta")
    with pytest.raises(ValueError, match="^z is on meta"):
        deslice(z, a["x"], a["w"], a["b"], a["tau"], backend="torch")
