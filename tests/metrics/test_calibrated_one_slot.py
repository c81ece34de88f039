"""The calibrated self- and family preference where the judge's own (family member's)
answer sits in one slot and those pairs were judged in that order only: the layout that
makes equal opportunity and demographic parity read a judge's slot preference as
self-preference (their one-slot warning). The competence model has a position term
(``β·first``), learnt on the pairs without the judge's own (family) answer, so it
predicts that preference instead: a judge with no self term and a pure preference for
the answer shown first reads 0 here, whether all, most or a few of its own pairs are so
shown, the other pairs in both orders or in one, with probability and pick verdicts.
No warning is owed to it, and docs/self-preference.md says why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from recuse.metrics import pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import label_strengths
from recuse.roster import Roster
from recuse.simulate.self_preference import AuthorJudge, simulate_self_preference
from recuse.tables import validate_pairs

JUDGE, FAMILY = "gpt-4", "gpt-3.5-turbo"  # one family in the built-in roster
STRENGTHS = {JUDGE: 0.4, FAMILY: 0.2, "claude-v1": 0.5, "vicuna-13b": 0.0,
             "alpaca-13b": -0.5, "llama-13b": -1.0}  # fmt: skip
METRICS = ["self_preference_calibrated", "family_preference_calibrated",
           "self_preference_dp", "family_preference_dp"]  # fmt: skip
BOOT = Resampling(n_boot=100, seed=0)


def _slot_table(*, favoured: str, share: float, others: str, verdict: str) -> pd.DataFrame:
    """Every pair of :data:`STRENGTHS`' models on 30 prompts (sides at random, the human
    label drawn from the strengths), judged by gpt-4 with no self or family term:

    * ``verdict="prob"``: ``P(a) = expit(κ (s_a − s_b) ± β)``, κ = 1, β = 1 toward the
      answer shown first, ``s`` the Bradley–Terry strengths of the table's own labels
      (:func:`label_strengths`, what the calibrated fit learns): the competence model's
      own form with τ = φ = 0, the planted truth;
    * ``verdict="first"``: it picks whatever is shown first (``p_a_first`` 1,
      ``p_a_second`` 0).

    On ``share`` of the pairs holding ``favoured``'s answer (the judge's own or its
    family member's against an outsider), that answer is shown first in the one order
    judged (in a: ``p_a_first`` alone; in b: ``p_a_second`` alone). The pairs holding
    neither are judged in both orders (``others="both"``) or in one at random
    (``"one"``)."""
    cast = {JUDGE: AuthorJudge(1.0)}
    t = simulate_self_preference(cast, STRENGTHS, n_prompts=30, seed=3, validated=False).pairs
    t = validate_pairs(t)
    if verdict == "prob":
        s = label_strengths(t)
        gap = t["model_a"].map(s).to_numpy(float) - t["model_b"].map(s).to_numpy(float)
        t["p_a_first"], t["p_a_second"] = special.expit(gap + 1.0), special.expit(gap - 1.0)
    else:
        t["p_a_first"], t["p_a_second"] = 1.0, 0.0
    rng = np.random.default_rng(0)
    in_a, in_b = t["model_a"] == favoured, t["model_b"] == favoured
    if favoured == FAMILY:  # against an outsider: gpt-4 against it is an own pair
        in_a &= t["model_b"] != JUDGE
        in_b &= t["model_a"] != JUDGE
    chosen = rng.random(len(t)) < share
    t.loc[chosen & in_a, "p_a_second"] = np.nan
    t.loc[chosen & in_b, "p_a_first"] = np.nan
    holds = (t["model_a"].isin([JUDGE, FAMILY])) | (t["model_b"].isin([JUDGE, FAMILY]))
    if others == "one":
        first = rng.random(len(t)) < 0.5
        t.loc[~holds & first, "p_a_second"] = np.nan
        t.loc[~holds & ~first, "p_a_first"] = np.nan
    t["p_a"] = np.nan  # read again from the orders judged
    return validate_pairs(t)


def _one_slot(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if "judged in that order alone" in w]


@pytest.mark.parametrize("others", ["both", "one"])
@pytest.mark.parametrize("share", [1.0, 0.6, 0.2])  # all, most, a few of its pairs
@pytest.mark.parametrize(("favoured", "metric"), [(JUDGE, "self"), (FAMILY, "family")])
def test_a_slot_preference_of_the_models_form_reads_zero_in_one_slot(
    favoured: str, metric: str, share: float, others: str
) -> None:
    t = _slot_table(favoured=favoured, share=share, others=others, verdict="prob")
    res = pairwise_bias(t, Roster.builtin(), judges=[JUDGE], metrics=METRICS, boot=BOOT,
                        curves=False)  # fmt: skip
    cal = res.get(f"{metric}_preference_calibrated", JUDGE)
    # the verdicts are the model's prediction with τ = φ = 0 on every order: the fit
    # recovers κ = β = 1 and τ = φ = 0, and the own (family) pick rate is its prediction
    assert cal.components[f"{'own' if metric == 'self' else 'family'}_pick_rate"] > 0.5
    assert cal.estimate == pytest.approx(0.0, abs=1e-9)
    assert cal.ci_low <= 0.0 <= cal.ci_high
    assert not _one_slot(cal.warnings) and not cal.notes
    if share == 1.0:  # the same verdicts read as a preference by demographic parity
        dp = res.get(f"{metric}_preference_dp", JUDGE)
        assert dp.estimate > 0.1
        assert _one_slot(dp.warnings)


@pytest.mark.parametrize(("favoured", "metric"), [(JUDGE, "self"), (FAMILY, "family")])
def test_a_judge_that_picks_whatever_is_shown_first_reads_zero(favoured: str, metric: str) -> None:
    """The one-slot warning's own example: the first-picker, its own (family member's)
    answer shown first in the one order judged on every such pair, the rest in both
    orders. Demographic parity reads its pick rate 1 against the humans' rate; the
    calibrated estimate reads 0 (the position term takes every pick: predicted 1,
    picked 1)."""
    t = _slot_table(favoured=favoured, share=1.0, others="both", verdict="first")
    res = pairwise_bias(t, Roster.builtin(), judges=[JUDGE], metrics=METRICS, boot=BOOT,
                        curves=False)  # fmt: skip
    cal = res.get(f"{metric}_preference_calibrated", JUDGE)
    rate = "own_pick_rate" if metric == "self" else "family_pick_rate"
    assert cal.components[rate] == 1.0
    assert cal.estimate == pytest.approx(0.0, abs=1e-9)
    assert not _one_slot(cal.warnings)
    dp = res.get(f"{metric}_preference_dp", JUDGE)
    assert dp.components["judge_prefers_s"] == 1.0
    assert dp.estimate == pytest.approx(1.0 - dp.components["human_prefers_s"], abs=1e-12)
    assert _one_slot(dp.warnings)
    if metric == "self":  # the page quotes it
        assert round(dp.estimate, 2) == 0.43


def test_pick_verdicts_of_a_slot_preferring_judge_read_no_more_in_one_slot() -> None:
    """0/1 picks drawn from ``logit P(a) = κ (q_a − q_b) ± β`` (κ = 1, β = 1.5 toward the
    answer shown first, ``q`` each answer's quality: :func:`simulate_self_preference`,
    no self term), each table read twice: both orders judged everywhere, and the judge's
    own answer shown first in the one order judged on every own pair (the rest in both).
    Over 16 tables of 40 prompts the calibrated estimate moves by +0.004 on average
    between the two (its standard error 0.009; over 80 tables −0.002 ± 0.003, the
    one-slot tables averaging −0.0005 ± 0.003), while demographic parity on the same
    tables moves by +0.24 and warns. The planted value is 0 in both."""
    from recuse.metrics.competence import calibrated_self_preference
    from recuse.metrics.self_preference import self_preference
    from recuse.simulate.self_preference import OTHER_STRENGTHS, theta_for_own_rate

    strengths = {"m0": theta_for_own_rate(0.7, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    moved, dp_moved, held = [], [], 0
    for seed in range(16):
        both = simulate_self_preference({"m0": AuthorJudge(1.0, 1.5)}, strengths, n_prompts=40,
                                        seed=seed, validated=False).pairs  # fmt: skip
        one = both.copy()
        one.loc[one["model_a"] == "m0", "p_a_second"] = np.nan  # own in a: a shown first only
        one.loc[one["model_b"] == "m0", "p_a_first"] = np.nan  # own in b: b shown first only
        cal, dp = [], []
        for t in (validate_pairs(one), validate_pairs(both)):
            r = calibrated_self_preference(t, judge="m0", boot=Resampling(n_boot=50, seed=seed))
            assert not _one_slot(r.warnings)
            cal.append(r)
            dp.append(self_preference(t, judge="m0", kind="dp", boot=Resampling(n_boot=10)))
        assert _one_slot(dp[0].warnings) and not _one_slot(dp[1].warnings)
        held += cal[0].ci_low <= 0.0 <= cal[0].ci_high
        moved.append(cal[0].estimate - cal[1].estimate)
        dp_moved.append(dp[0].estimate - dp[1].estimate)
    se = float(np.std(moved, ddof=1) / np.sqrt(len(moved)))
    assert abs(float(np.mean(moved))) < max(3 * se, 0.01) and se < 0.015
    assert held >= 13  # of 16 one-slot tables' intervals hold the planted 0
    assert float(np.mean(dp_moved)) > 0.2


def test_the_page_says_why_the_calibrated_estimates_carry_no_one_slot_warning() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "self-preference.md"
    words = " ".join(page.read_text(encoding="utf-8").split())
    assert (
        "The calibrated estimates (self and family) carry no such warning: their position "
        "term predicts the slot preference" in words
    )
