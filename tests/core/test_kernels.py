import pytest
import torch

import icml26_lit.core.kernels as K
from icml26_lit.core import HAS_TRITON, check_kernel, check_tensor, compile_check, resolve_backend


def test_resolve_backend_rules(monkeypatch):
    cpu = torch.ones(2)
    assert resolve_backend("auto", cpu) == "torch"
    assert resolve_backend("torch", cpu) == "torch"
    assert resolve_backend("triton", cpu) == "triton"  # conftest sets TRITON_INTERPRET=1
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        resolve_backend("triton", cpu)
    with pytest.raises(ValueError, match="backend='fast'"):
        resolve_backend("fast", cpu)


def test_check_tensor_messages():
    with pytest.raises(TypeError, match="pos must be a torch.Tensor"):
        check_tensor([1.0], "pos")
    with pytest.raises(ValueError, match=r"pos must have shape \(\*, 3\)"):
        check_tensor(torch.ones(4, 2), "pos", shape=(None, 3))
    with pytest.raises(ValueError, match="pos contains NaN"):
        check_tensor(torch.tensor([float("inf")]), "pos")
    with pytest.raises(TypeError, match=r"dtype in \(float32\)"):
        check_tensor(torch.ones(2, dtype=torch.float64), "pos", dtypes=(torch.float32,))
    x = torch.ones(3, 4)[:, ::2]
    assert not x.is_contiguous() and check_tensor(x, "x").is_contiguous()


def test_check_kernel_reports_replayable_seed():
    ref = lambda x: x * 2
    bad = lambda x: x * 2 + (x.numel() % 2)  # wrong on odd sizes
    mk = lambda n, dt, g: (torch.randn(n, generator=g, dtype=dt),)
    with pytest.raises(AssertionError, match=r"(?s)size=3.*seed=42"):
        check_kernel(bad, ref, mk, sizes=[2, 3], seed=42)
    s = check_kernel(ref, ref, mk, sizes=[1, 5])
    assert check_kernel(ref, ref, mk, sizes=[1, 5], seed=s) == s


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
def test_compile_check_rejects_tiny_dot():
    import triton
    import triton.language as tl

    @triton.jit
    def tiny_dot(a_ptr, c_ptr, N: tl.constexpr):
        r = tl.arange(0, N)
        a = tl.load(a_ptr + r[:, None] * N + r[None, :])
        tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, a, input_precision="ieee"))

    sig = {"a_ptr": "*fp32", "c_ptr": "*fp32", "N": "constexpr"}
    with pytest.raises(AssertionError, match="does not compile for sm_75"):
        compile_check(tiny_dot, sig, {"N": 8}, targets=((7, 5),))
    assert compile_check(tiny_dot, sig, {"N": 16}, targets=((7, 5), (9, 0)))[0].target == (7, 5)


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
def test_compile_check_rejects_float32_products_in_tf32():
    import triton
    import triton.language as tl

    @triton.jit
    def bmr(x_ptr, y_ptr, c_ptr, N: tl.constexpr, Y_FIRST: tl.constexpr):
        r = tl.arange(0, N)
        x = tl.load(x_ptr + r[:, None] * N + r[None, :])
        y = tl.load(y_ptr + r[:, None] * N + r[None, :])
        if Y_FIRST:  # the same products, the broadcast of y first: Triton leaves it alone
            c = tl.sum(y[None, :, :] * x[:, :, None], axis=1)
        else:  # the idiom Triton rewrites into a TF32 dot
            c = tl.sum(x[:, :, None] * y[None, :, :], axis=1)
        tl.store(c_ptr + r[:, None] * N + r[None, :], c)

    @triton.jit
    def tf32_dot(a_ptr, c_ptr, N: tl.constexpr):
        r = tl.arange(0, N)
        a = tl.load(a_ptr + r[:, None] * N + r[None, :])
        tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, a))  # fp32 default: TF32

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "c_ptr": "*fp32", "N": "constexpr"}
    sig["Y_FIRST"] = "constexpr"
    with pytest.raises(AssertionError, match="in TF32 on sm_90"):
        compile_check(bmr, sig, {"N": 16, "Y_FIRST": False}, targets=((9, 0),))
    assert compile_check(bmr, sig, {"N": 16, "Y_FIRST": True}, targets=((7, 5), (9, 0)))
    sig = {"a_ptr": "*fp32", "c_ptr": "*fp32", "N": "constexpr"}
    with pytest.raises(AssertionError, match="TF32"):
        compile_check(tf32_dot, sig, {"N": 16}, targets=((9, 0),))
    f64 = {"x_ptr": "*fp64", "y_ptr": "*fp64", "c_ptr": "*fp64", "N": "constexpr"}
    f64["Y_FIRST"] = "constexpr"  # float64 products never go to TF32
    assert compile_check(bmr, f64, {"N": 16, "Y_FIRST": False}, targets=((9, 0),))


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
def test_compile_check_rejects_oversized_shared_memory(monkeypatch):
    import triton
    import triton.language as tl

    @triton.jit
    def dot16(a_ptr, c_ptr, N: tl.constexpr):
        r = tl.arange(0, N)
        a = tl.load(a_ptr + r[:, None] * N + r[None, :])
        tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, a, input_precision="ieee"))

    sig = {"a_ptr": "*fp32", "c_ptr": "*fp32", "N": "constexpr"}
    shared = compile_check(dot16, sig, {"N": 32}, targets=((7, 5),))[0].shared
    assert shared > 0  # a dot stages its operands through shared memory
    monkeypatch.setitem(K.SHARED_MEMORY_LIMIT, (7, 5), shared - 1)  # a card one byte too small
    with pytest.raises(AssertionError, match="shared memory on sm_75"):
        compile_check(dot16, sig, {"N": 32}, targets=((7, 5),))
