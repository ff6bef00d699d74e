"""The TFMPE estimator: padding, bad input, equivariance of a trained posterior, log-densities."""
import copy
import math

import pytest
import torch

from icml26_lit.tfmpe.model import TFMPE, VelocityTransformer
from icml26_lit.tfmpe.pipelines import c2st
from icml26_lit.tfmpe.tasks import HierarchicalGaussian
from icml26_lit.tfmpe.tokens import tokenise

SMALL = dict(latent_dim=16, n_heads=2, n_encoder=1, backend="torch")


@pytest.fixture(scope="module")
def trained():
    "A small posterior TFMPE on the 3-site Gaussian (trained once for the module)."
    task = HierarchicalGaussian(n_sites=3, n_obs=2)
    g = torch.Generator().manual_seed(0)
    p = task.sample_prior(1500, generator=g)
    o = task.simulate(p, generator=g)
    est = TFMPE(task.labels, latent_dim=32, n_heads=4, n_encoder=2, backend="torch")
    est.fit(p, o, n_steps=250, batch_size=128, generator=g)
    return task, est


def test_padding_never_leaks_into_velocity(fresh_seed):
    torch.manual_seed(fresh_seed)
    net = VelocityTransformer(n_labels=3, **SMALL).eval()
    d = {"mu": torch.randn(2, 1), "theta": torch.randn(2, 2), "y": torch.randn(2, 2, 3)}
    m = torch.ones(2, 2, 3, dtype=torch.bool)
    m[:, 1, 1:] = False
    tok = tokenise(d, ["y"], {"mu": 0, "theta": 1, "y": 2}, masks={"y": m})
    t = torch.rand(2)
    v = tok.value.clone()
    v[:, 4:6] = torch.randn(2, 2, 1) * 100  # the padded y_{2,2}, y_{2,3}
    torch.testing.assert_close(net(tok, t), net(tok.with_values(v), t))


def test_padding_never_leaks_into_training_loss(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    theta = torch.randn(40, 1, generator=g)
    y = theta[:, :, None] + torch.randn(40, 1, 4, generator=g)
    mask = torch.rand(40, 1, 4, generator=g) > 0.4
    mask[:, :, 0] = True
    est = TFMPE({"theta": 0, "y": 1}, target="obs", **SMALL)  # padded targets
    est.fit({"theta": theta}, {"y": torch.where(mask, y, 0.0)}, masks={"y": mask}, n_steps=1, batch_size=8)
    tok = est._tokens({"theta": theta}, {"y": torch.where(mask, y, 0.0)}, masks={"y": mask})
    garbage = est._tokens({"theta": theta}, {"y": torch.where(mask, y, 1e4)}, masks={"y": mask})
    a = est.loss(tok, generator=torch.Generator().manual_seed(1))
    b = est.loss(garbage, generator=torch.Generator().manual_seed(1))
    assert a == pytest.approx(b, rel=1e-6)


def test_bad_input_messages(trained):
    task, est = trained
    y = task.simulate(task.sample_prior(2))["y"]
    with pytest.raises(ValueError, match="wrong number of sites"):
        est.sample({"y": y[:, :2]}, 5)
    with pytest.raises(ValueError, match="y contains NaN"):
        est.sample({"y": torch.full_like(y, float("nan"))}, 5)
    with pytest.raises(ValueError, match="mismatched numbers of data sets"):
        TFMPE(task.labels, **SMALL).fit(task.sample_prior(10), {"y": torch.zeros(9, 3, 2)}, batch_size=4)
    with pytest.raises(ValueError, match="smaller than one batch"):
        TFMPE(task.labels, **SMALL).fit(task.sample_prior(10), {"y": torch.zeros(10, 3, 2)}, batch_size=64)
    with pytest.raises(ValueError, match="target must be"):
        TFMPE(task.labels, target="both")
    with pytest.raises(RuntimeError, match="fit the estimator first"):
        TFMPE(task.labels, **SMALL).sample({"y": y}, 3)


def test_trained_global_marginal_is_invariant_to_site_permutation(trained):
    task, est = trained
    g = torch.Generator().manual_seed(5)
    y = task.simulate(task.sample_prior(1, generator=g), generator=g)["y"]
    perm = torch.tensor([2, 0, 1])
    a = est.sample({"y": y}, 1000, n_steps=8, generator=g)["mu"][:, 0]
    b = est.sample({"y": y[:, perm]}, 1000, n_steps=8, generator=g)["mu"][:, 0]
    assert c2st(a, b) < 0.6
    # and it has learned something: the global mean is near the exact posterior mean
    mean, cov = task.exact_posterior(y)
    assert abs(float(a.mean()) - float(mean[0, 0])) < 3 * math.sqrt(float(cov[0, 0, 0]))


def test_log_prob_change_of_variables(trained):
    task, est = trained
    y = task.simulate(task.sample_prior(3))["y"]
    p = task.sample_prior(3)
    lp = est.log_prob(p, {"y": y}, n_steps=8)
    scaled = copy.copy(est)
    c = 10.0
    scaled.stats = {k: ((m * c, s * c) if k in ("mu", "theta") else (m, s)) for k, (m, s) in est.stats.items()}
    lp_c = scaled.log_prob({k: v * c for k, v in p.items()}, {"y": y}, n_steps=8)
    torch.testing.assert_close(lp_c, lp - 4 * math.log(c), atol=1e-4, rtol=1e-5)
    assert torch.isfinite(lp).all()
