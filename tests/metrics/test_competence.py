"""The competence model's own words about itself (recuse.metrics.competence)."""

from __future__ import annotations

import re

import numpy as np

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.simulate.self_preference import simulate_lapse_judge


def test_a_judge_near_its_ceiling_is_never_said_to_pick_its_own_answer_always() -> None:
    """The ceiling warning wrote the predicted own-pick rate ``{:.0%}``: a judge predicted
    to pick its own answer 99.8% of the time read "100% of the time", a certainty its
    misses deny. It is written as every share is (numbers.share_percent: whole percents,
    more decimals where they would read 0% or 100%): under 100%, as a rate short of
    certainty is."""
    pairs = simulate_lapse_judge(own_rate=0.995, accuracy=0.999, shift=2.0, seed=1,
                                 n_prompts=320).pairs  # fmt: skip
    r = calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=50), label=False)
    (said,) = [w for w in r.warnings if w.startswith("competence near its ceiling")]
    shown = re.search(r"pick its own answer ([0-9.]+)% of the time", said)
    assert shown is not None, said
    assert 99.5 <= float(shown.group(1)) < 100  # under 100%, as the rate is
    assert "100% of the time" not in said


def test_the_newton_fit_s_pseudo_inverse_is_numpy_s_on_full_and_deficient_information() -> None:
    """``_symmetric_pinv`` (an eigendecomposition) against ``np.linalg.pinv`` (an SVD) on
    information matrices ``xᵀ diag(w) x`` of full rank, with a column the data do not
    inform (all 0) and with two equal columns (a direction informed twice): the same
    matrices, batched, so the Newton fit's steps are those pinv gave."""
    from recuse.metrics.competence import _symmetric_pinv

    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 40, 4))
    x[1, :, 2] = 0.0  # an uninformed direction
    x[2, :, 3] = x[2, :, 1]  # a repeated one
    info = np.swapaxes(x, -1, -2) @ (x * rng.uniform(0.1, 2.0, size=(3, 40, 1)))
    ours, numpy_s = _symmetric_pinv(info), np.linalg.pinv(info)
    assert np.allclose(ours, numpy_s, rtol=1e-9, atol=1e-12)
    assert np.all(ours[1][:, 2] == 0) and np.all(ours[1][2] == 0)  # uninformed stays 0
    assert np.all(_symmetric_pinv(np.zeros((2, 3, 3))) == 0)
