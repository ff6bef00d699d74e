"Chapter 10's experiment plumbing: seeded runs that leave the global RNG alone, the prior floor."

import torch

from icml26_lit.tfmpe.experiments import CONFIG, PriorPosterior, evaluate, fit_method
from icml26_lit.tfmpe.tasks import HierarchicalGaussian


def _tiny():
    ci = CONFIG.get("ci")
    return type(ci)(
        dict(
            ci,
            n_steps=2,
            npe_epochs=1,
            n_test=2,
            n_post=20,
            n_c2st=1,
            n_sbc=0,
            sample_steps=2,
            batch_size=16,
            latent_dim=16,
            n_encoder=1,
        )
    )


def test_fit_and_evaluate_leave_the_global_rng_alone():
    # fit_method and evaluate seed their own draws (sbi's included): the caller's global RNG is
    # neither reseeded nor consumed, and the numbers do not depend on it
    cfg, task, scores = _tiny(), HierarchicalGaussian(n_sites=2), []
    for method, outer in (("LF-TFMPE", 1), ("LF-TFMPE", 2), ("sbi NPE", 1), ("sbi NPE", 2)):
        torch.manual_seed(outer)
        state = torch.get_rng_state()
        post, _, _ = fit_method(method, task, 2, 100, cfg, seed=3)
        res = evaluate(post, task, 2, cfg, seed=3)
        assert torch.equal(torch.get_rng_state(), state), method
        scores.append((res["c2st"], res["rmse"]))
    assert scores[0] == scores[1] and scores[2] == scores[3]


def test_the_prior_floor_is_near_chance_worst():
    # the prior used as the posterior: C2ST far from 0.5 against the exact posterior, and an RMSE
    # above that of the exact posterior's own draws
    cfg = type(_tiny())(dict(_tiny(), n_test=4, n_post=200, n_c2st=2))
    task = HierarchicalGaussian(n_sites=3)
    res = evaluate(PriorPosterior(task, 3, seed=0), task, 3, cfg, seed=0)
    assert res["c2st"] > 0.75 and res["rmse"] > 0.2


def test_importing_the_chapter_leaves_the_global_rng_alone():
    import subprocess
    import sys

    code = (
        "import torch; torch.manual_seed(0); s = torch.get_rng_state(); import icml26_lit.tfmpe; "
        "assert torch.equal(s, torch.get_rng_state()), 'import moved the global RNG'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
