"""The author-judge simulator plants what it says (checked on large draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError
from recuse.metrics.self_preference import favored_side
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    reference_own_rate,
    simulate_self_preference,
    theta_for_own_rate,
)
from recuse.tables import validate_pairs


def _own_pick_rate(t, judge: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(own-pick rate per order, share of own pairs the reference prefers), by hand."""
    rows = t[t["judge"] == judge]
    side = favored_side(rows)
    own = side != 0
    picks = np.concatenate([rows["p_a_first"].to_numpy(), rows["p_a_second"].to_numpy()])
    s2 = np.concatenate([side, side])
    own_pick = np.where(s2 > 0, picks, 1 - picks)[np.concatenate([own, own])]
    h = rows["human"].to_numpy()
    return float(own_pick.mean()), float(np.where(side > 0, h, 1 - h)[own].mean())


def test_theta_gives_the_reference_own_rate() -> None:
    theta = theta_for_own_rate(0.84, OTHER_STRENGTHS)
    strengths = {"m0": theta, **OTHER_STRENGTHS}
    assert reference_own_rate(strengths, "m0", quality_sd=1.0) == pytest.approx(0.84, abs=1e-9)
    sim = simulate_self_preference({"m0": AuthorJudge(2.0)}, strengths, n_prompts=4000, seed=3)
    _, ref = _own_pick_rate(sim.pairs, "m0")
    assert ref == pytest.approx(0.84, abs=0.01)  # se ~ 0.003


@pytest.mark.parametrize("tau", [0.0, 0.3])
def test_truth_is_the_planted_switch(tau: float) -> None:
    """Own-pick rate with the self term minus the same judge's without it equals
    true_value (the same seeds draw the same qualities and uniforms)."""
    strengths = {"m0": 0.8, "m1": 0.0, "m2": -0.4}
    base = simulate_self_preference(
        {"m0": AuthorJudge(1.5, 0.7, 0.0)}, strengths, n_prompts=6000, seed=5
    )
    with_tau = simulate_self_preference(
        {"m0": AuthorJudge(1.5, 0.7, tau)}, strengths, n_prompts=6000, seed=5
    )
    p0, _ = _own_pick_rate(base.pairs, "m0")
    p1, _ = _own_pick_rate(with_tau.pairs, "m0")
    assert with_tau.true_value("m0") == pytest.approx(tau * (1 - base._p0_own("m0")))
    assert p0 == pytest.approx(base._p0_own("m0"), abs=0.006)  # quadrature vs draw
    assert p1 - p0 == pytest.approx(with_tau.true_value("m0"), abs=0.006)
    if tau == 0:
        assert with_tau.true_value("m0") == 0.0


def test_a_judge_that_is_no_author_has_truth_zero_and_bad_input_is_refused() -> None:
    sim = simulate_self_preference(
        {"outsider": AuthorJudge(1.0, tau=0.5)}, {"m0": 0.0, "m1": 1.0}, n_prompts=3, seed=0
    )
    assert sim.true_value("outsider") == 0.0
    with pytest.raises(ConfigError, match="tau"):
        simulate_self_preference({"m0": AuthorJudge(1.0, tau=2.0)}, {"m0": 0.0, "m1": 1.0})
    with pytest.raises(ConfigError, match="rate"):
        theta_for_own_rate(1.0, OTHER_STRENGTHS)


def test_truth_holds_for_a_near_perfect_judge() -> None:
    """κ = 20 makes the pick curve nearly a step in the quality draw: the truth's
    quadrature must still match a large draw and, since such a judge all but follows
    the reference, the reference's own rate (before: a fixed 80-node Gauss–Hermite
    rule read 0.777 where the draw gives 0.760, so the planted truth was 0.006 low)."""
    strengths = {"m0": theta_for_own_rate(0.76, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    sim = simulate_self_preference({"m0": AuthorJudge(20.0)}, strengths, n_prompts=6000, seed=7)
    drawn, _ = _own_pick_rate(sim.pairs, "m0")
    p0 = sim._p0_own("m0")
    assert p0 == pytest.approx(drawn, abs=0.006)  # se of the draw ~ 0.003
    assert p0 == pytest.approx(0.76, abs=0.004)  # ties within 1/20 of a quality unit flip
    assert p0 < 0.76  # ... toward chance, never away
    planted = simulate_self_preference(
        {"m0": AuthorJudge(20.0, tau=0.3)}, strengths, n_prompts=5, seed=0
    )
    assert planted.true_value("m0") == pytest.approx(0.3 * (1 - p0), abs=1e-12)


def test_the_unvalidated_table_is_the_validated_one_before_validation() -> None:
    """``validated=False`` (the category and lapse simulations reshape the table and
    validate their own) is the same draw, not yet validated."""
    judges, strengths = {"m0": AuthorJudge(1.0, 0.2, 0.1)}, {"m0": 0.5, "m1": 0.0, "m2": -0.3}
    raw = simulate_self_preference(judges, strengths, n_prompts=12, seed=2, validated=False)
    assert not raw.pairs.equals(validate_pairs(raw.pairs))
    pd.testing.assert_frame_equal(
        validate_pairs(raw.pairs),
        simulate_self_preference(judges, strengths, n_prompts=12, seed=2).pairs,
    )
