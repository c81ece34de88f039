"""Where the competence model is weak: a judge whose competence differs by category,
with its own answers mostly where it judges worst (the category term and the strata
warning), and a near-perfect judge with a lapse rate (the ceiling warning)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special

from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import (
    calibrated_self_preference,
    label_strengths,
    strata_warning,
    stratum_column,
)
from recuse.metrics.self_preference import favored_side
from recuse.simulate.self_preference import simulate_category_confound, simulate_lapse_judge

#: the judge is weak (κ = 0.5) in "hard", strong (κ = 4) elsewhere; 80% of its own pairs
#: are in "hard" against 25% of its other pairs
CONFOUND = {"hard": (0.5, 1.0), "easy1": (4.0, 0.1), "easy2": (4.0, 0.1), "easy3": (4.0, 0.1)}


def _strata(warnings: tuple[str, ...]) -> bool:
    return any("total-variation distance" in w for w in warnings)


def test_category_confound_reads_zero_with_the_term_and_is_flagged_without() -> None:
    with_term, without = [], []
    for r in range(30):
        pairs = simulate_category_confound(CONFOUND, seed=r).pairs
        with_term.append(
            calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=100, seed=r))
        )
        without.append(
            calibrated_self_preference(
                pairs, judge="m0", boot=Resampling(n_boot=100, seed=r), stratum=None
            )
        )
    # one κ: the strong author's own pairs, judged where the judge is weak, read as
    # self-deprecation (about -0.08) and the interval excludes 0 in most tables
    assert np.mean([r.estimate for r in without]) < -0.05
    assert np.mean([r.ci_low > 0 or r.ci_high < 0 for r in without]) > 0.6
    # κ per category: about 0, the 90% interval holds 0 about as often as it should
    # (Monte-Carlo se of 30 tables: 0.055)
    assert abs(np.mean([r.estimate for r in with_term])) < 0.02
    assert np.mean([r.ci_low <= 0 <= r.ci_high for r in with_term]) >= 0.75
    assert all(_strata(r.warnings) for r in with_term)
    assert "κ is learnt per category" in with_term[0].method


def test_a_planted_self_term_is_recovered_under_the_confound() -> None:
    est, truth = [], []
    for r in range(20):
        sim = simulate_category_confound(CONFOUND, tau=0.3, seed=100 + r)
        est.append(
            calibrated_self_preference(sim.pairs, judge="m0", boot=Resampling(n_boot=10)).estimate
        )
        truth.append(sim.truth)
    assert truth[0] == pytest.approx(truth[-1])
    assert np.mean(est) == pytest.approx(truth[0], abs=0.015)


def test_a_balanced_mix_is_not_warned() -> None:
    even = {name: (k, 0.3) for name, (k, _) in CONFOUND.items()}
    fired = [
        _strata(
            calibrated_self_preference(
                simulate_category_confound(even, seed=r).pairs,
                judge="m0",
                boot=Resampling(n_boot=10),
            ).warnings
        )
        for r in range(20)
    ]
    assert not any(fired)


def test_a_small_category_shares_the_largest_ones_discrimination() -> None:
    """ "tiny" (3 prompts, 18 pairs without the own answer) joins "b" (40 prompts, the most
    such pairs); the estimate equals a statsmodels logit with that design."""
    t = simulate_category_confound({"a": (1.0, 1.0), "b": (3.0, 1.0)}, seed=5,
                                   prompts_per_category=40).pairs  # fmt: skip
    tiny = t["prompt_id"].isin(["a-p0", "a-p1", "a-p2"])
    t.loc[tiny, "category"] = "tiny"
    r = calibrated_self_preference(t, judge="m0", boot=Resampling(n_boot=50))
    assert "tiny pooled" in r.method and "κ_c for a, b" in r.method

    s = label_strengths(t)
    side = favored_side(t).astype(float)
    g = t["model_a"].map(s).to_numpy() - t["model_b"].map(s).to_numpy()
    in_b = t["category"].isin(["b", "tiny"]).to_numpy(float)
    y = np.concatenate([t["p_a_first"].to_numpy(), t["p_a_second"].to_numpy()])
    x = np.column_stack([np.tile(g * (1 - in_b), 2), np.tile(g * in_b, 2),
                         np.repeat([1.0, -1.0], len(g)), np.tile(side, 2)])  # fmt: skip
    fit = sm.Logit(y, x).fit(disp=0)
    own = x[:, 3] != 0
    p0 = special.expit(x[:, :3] @ fit.params[:3])
    observed = np.where(x[:, 3] > 0, y, 1 - y)[own].mean()
    predicted = np.where(x[:, 3] > 0, p0, 1 - p0)[own].mean()
    assert r.estimate == pytest.approx(observed - predicted, abs=1e-6)


def test_strata_warning_is_the_total_variation_worked_by_hand() -> None:
    # shares own (0.8, 0.2), other (0.2, 0.8): ½ (0.6 + 0.6) = 0.60
    w = strata_warning(own_weights=np.array([8.0, 2.0]), other_weights=np.array([2.0, 8.0]),
                       names=("math", "writing"))  # fmt: skip
    assert w is not None and "distance 0.60" in w and "'math' (80%" in w
    # (0.5, 0.5) vs (0.3, 0.7): 0.20, under 0.3
    assert strata_warning(own_weights=np.array([5.0, 5.0]), other_weights=np.array([3.0, 7.0]),
                          names=("a", "b")) is None  # fmt: skip
    with pytest.raises(ConfigError, match="one own weight"):
        strata_warning(own_weights=np.array([1.0]), other_weights=np.array([1.0, 2.0]),
                       names=("a",))  # fmt: skip


def test_a_distance_just_over_the_threshold_reads_over_it() -> None:
    """Shares own (0.6502, 0.3498), other (0.3498, 0.6502): ½ (0.3004 + 0.3004) = 0.3004,
    over the 0.3 the warning is said above, which two decimals wrote "distance 0.30 (…
    said above 0.3)". It is written with the decimals that put it over; 0.60 keeps two."""
    w = strata_warning(own_weights=np.array([0.6502, 0.3498]),
                       other_weights=np.array([0.3498, 0.6502]), names=("a", "b"))  # fmt: skip
    assert w is not None and "distance 0.3004 (" in w and "said above 0.3)" in w


def test_the_stratum_column_is_chosen_per_judge_or_named() -> None:
    t = pd.DataFrame({"judge": ["j1", "j1", "j2", "j2"], "category": ["j1", "j1", "j2", "j2"],
                      "task": ["x", "y", "x", "y"]})  # fmt: skip
    assert stratum_column(t) == "task"  # a category per judge is no stratum
    assert stratum_column(t, None) is None
    with pytest.raises(InputError, match="not in the pairs table"):
        stratum_column(t, "topic")


def test_a_near_perfect_judge_with_a_lapse_rate_reads_low_without_the_label_term() -> None:
    """Without the label term (``label=False``) the logistic curve has no floor for misses
    that do not shrink with the gap, and the finding says so (the default conditions
    such a judge's competence on the label: tests/metrics/test_self_preference_ceiling.py)."""
    est, truth, marked = [], [], []
    for r in range(15):
        sim = simulate_lapse_judge(own_rate=0.9, seed=r)
        res = calibrated_self_preference(
            sim.pairs, judge="m0", boot=Resampling(n_boot=10), label=False
        )
        est.append(res.estimate)
        truth.append(sim.truth)
        marked.append(any("near its ceiling" in w for w in res.warnings))
    assert np.mean(est) < 0.75 * np.mean(truth)  # 0.60 of it over 20 tables
    assert all(marked)
    weak = calibrated_self_preference(
        simulate_lapse_judge(accuracy=0.75, own_rate=0.6).pairs,
        judge="m0",
        boot=Resampling(n_boot=10),
        label=False,
    )
    assert not any("near its ceiling" in w for w in weak.warnings)
