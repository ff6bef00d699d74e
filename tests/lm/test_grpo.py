"""lm.grpo: advantages, the clipped token-level loss and DAPO's overlong penalty."""

import pytest
import torch

from icml26_lit.lm import group_advantages, grpo_loss, soft_overlong_penalty


def test_group_advantages_closed_form_and_dynamic_sampling(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    r = torch.rand(5, 4, generator=g, dtype=torch.float64)
    r[2] = 0.7  # zero spread: dropped
    adv, keep = group_advantages(r)
    for i in range(5):
        m, s = r[i].mean(), r[i].std()  # unbiased, as ms-swift
        torch.testing.assert_close(adv[i], (r[i] - m) / (s + 1e-4))
    assert keep.tolist() == [True, True, False, True, True]
    # advantages sum to zero in each group
    torch.testing.assert_close(adv.sum(1), torch.zeros(5, dtype=torch.float64))
    adv_u, _ = group_advantages(r, scale=False)
    torch.testing.assert_close(adv_u, r - r.mean(1, keepdim=True))


def test_group_advantages_bad_input():
    with pytest.raises(ValueError, match="G >= 2"):
        group_advantages(torch.ones(4, 1))
    with pytest.raises(ValueError, match="rewards must be a tensor"):
        group_advantages(torch.ones(4))
    with pytest.raises(ValueError, match="finite"):
        group_advantages(torch.tensor([[1.0, float("nan")]]))


def test_gradient_at_ratio_one_is_reinforce(fresh_seed):
    # hand REINFORCE: d/d logp_t of -(1/sum m) sum_i sum_t m_it A_i logp_it
    g = torch.Generator().manual_seed(fresh_seed)
    logp = -torch.rand(3, 6, generator=g, dtype=torch.float64) * 3
    m = (torch.rand(3, 6, generator=g) < 0.7).double()
    m[:, 0] = 1
    A = torch.randn(3, generator=g, dtype=torch.float64)
    x = logp.clone().requires_grad_(True)
    grpo_loss(x, x.detach(), A, m).backward()
    torch.testing.assert_close(x.grad, -m * A[:, None] / m.sum())
    # grpo (sequence-mean) weighting: each sequence's tokens share 1 / (N * n_i)
    x.grad = None
    grpo_loss(x, x.detach(), A, m, loss_type="grpo").backward()
    torch.testing.assert_close(x.grad, -m * A[:, None] / m.sum(1, keepdim=True) / 3)


def test_clipping_asymmetric():
    old = torch.zeros(4, 1, dtype=torch.float64)
    ratio = torch.tensor([[1.4], [1.25], [0.7], [1.4]], dtype=torch.float64)
    A = torch.tensor([1.0, 1.0, -1.0, -1.0], dtype=torch.float64)
    x = ratio.log().requires_grad_(True)
    loss = grpo_loss(x, old, A, torch.ones(4, 1), eps_low=0.2, eps_high=0.3, loss_type="grpo")
    loss.backward()
    # row 0: A > 0, rho 1.4 > 1.3: clipped to 1.3, no gradient
    # row 1: A > 0, rho 1.25 inside (clip-higher lets it grow past 1.2): gradient -rho A / 4
    # row 2: A < 0, rho 0.7 < 0.8: clipped to 0.8, no gradient
    # row 3: A < 0, rho 1.4: min picks the unclipped rho A (pessimistic), gradient -rho A / 4
    want_obj = torch.tensor([1.3, 1.25, -0.8, -1.4], dtype=torch.float64)
    torch.testing.assert_close(loss, -want_obj.mean())
    torch.testing.assert_close(
        x.grad[:, 0], torch.tensor([0.0, -1.25, 0.0, 1.4], dtype=torch.float64) / 4
    )


def test_loss_bad_input():
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="old_logp"):
        grpo_loss(x, torch.zeros(2, 2), torch.zeros(2), torch.ones(2, 3))
    with pytest.raises(ValueError, match="advantages"):
        grpo_loss(x, x, torch.zeros(3), torch.ones(2, 3))
    with pytest.raises(ValueError, match="loss_type"):
        grpo_loss(x, x, torch.zeros(2), torch.ones(2, 3), loss_type="dr")


def test_soft_overlong_penalty_dapo():
    L_max, L_cache = 2048, 512
    L = torch.arange(0, 2200)
    got = soft_overlong_penalty(L, L_max, L_cache)
    want = torch.tensor(
        [0.0 if l <= 1536 else ((1536 - l) / 512 if l <= 2048 else -1.0) for l in L.tolist()],
        dtype=torch.float64,
    )
    torch.testing.assert_close(got, want)
    assert float(got[1536]) == 0 and float(got[2048]) == -1 and float(got[1792]) == -0.5
    with pytest.raises(ValueError, match="cache_len"):
        soft_overlong_penalty(L, 8, 16)
