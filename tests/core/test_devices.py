"""Every kernel wrapper of the book names an input that sits on another device, at entry.

A Triton launch or a PyTorch op given tensors on two devices fails deep inside with a message that
names no argument. Each wrapper (a public function of a chapter's `kernels` module taking
`backend=`) calls `core.check_devices` on its tensor arguments before anything else; this test
finds every wrapper, puts each tensor argument after the first on `meta` (another device type, with
no values to read) and checks the error names that argument.
"""

import importlib
import inspect
import pkgutil

import pytest
import torch

import icml26_lit
from icml26_lit.core import check_devices


def kernel_wrappers() -> dict:
    "Qualified name -> each public function with `backend=` in a chapter's kernels module."
    out = {}
    for m in pkgutil.walk_packages(icml26_lit.__path__, "icml26_lit."):
        parts = m.name.split(".")
        if parts[-1] != "kernels" or parts[1] == "core" or any(p.startswith("_") for p in parts):
            continue
        mod = importlib.import_module(m.name)
        for name in getattr(mod, "__all__", []):
            fn = getattr(mod, name, None)
            if inspect.isfunction(fn) and fn.__module__ == m.name:
                if "backend" in inspect.signature(fn).parameters:
                    out[f"{m.name}.{name}"] = fn
    return out


def tensor_params(fn) -> list[str]:
    "The parameters annotated as tensors (optional ones included), in signature order."
    return [p for p, v in inspect.signature(fn).parameters.items() if "Tensor" in str(v.annotation)]


CASES = [(name, p) for name, fn in sorted(kernel_wrappers().items()) for p in tensor_params(fn)[1:]]


def test_the_wrappers_are_found():
    names = kernel_wrappers()
    assert len(names) >= 25, sorted(names)
    for named in ("geopt.kernels.slice_tokens", "emformer.kernels.multiscale_conv"):
        assert f"icml26_lit.{named}" in names
    assert "icml26_lit.flashschnet.kernels.cfconv" in names and len(CASES) >= 60


@pytest.mark.parametrize("name,param", CASES, ids=[f"{n.split('.', 1)[1]}:{p}" for n, p in CASES])
def test_an_input_on_another_device_is_named(name, param):
    fn = kernel_wrappers()[name]
    first = tensor_params(fn)[0]
    kwargs = {}
    for p, v in inspect.signature(fn).parameters.items():
        if p in tensor_params(fn):
            kwargs[p] = torch.zeros(2, device="meta" if p == param else "cpu")
        elif v.default is inspect.Parameter.empty and v.kind is not v.VAR_POSITIONAL:
            kwargs[p] = 1  # the device check comes first: other arguments are never read
    with pytest.raises(ValueError, match=rf"^{param} is on meta but {first} is on cpu"):
        fn(**kwargs)


def test_check_devices():
    cpu = torch.device("cpu")
    assert check_devices(x=torch.ones(2), w=torch.ones(3)) == cpu
    assert check_devices(x=None, w=torch.ones(3), n=4) == cpu  # non-tensors are skipped
    assert check_devices() is None and check_devices(x=None) is None
    with pytest.raises(ValueError, match="^w is on meta but x is on cpu: pass every input"):
        check_devices(x=torch.ones(2), bias=None, w=torch.ones(2, device="meta"))
    # the odd one out is named even when it comes first; a tie names the later one
    with pytest.raises(ValueError, match="^z is on meta but x is on cpu"):
        check_devices(z=torch.ones(2, device="meta"), x=torch.ones(2), w=torch.ones(3))
    with pytest.raises(ValueError, match="^x is on cpu but z is on meta"):
        check_devices(z=torch.ones(2, device="meta"), x=torch.ones(2))
