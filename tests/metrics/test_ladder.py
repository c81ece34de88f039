"""The self-preference ladder: every rung by hand on a small table, and a planted truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.ladder import RUNGS, self_preference_ladder
from recuse.metrics.result import MetricResult
from recuse.simulate.pairs import PlantedBias, simulate_pairs


def _table() -> pd.DataFrame:
    rows = [  # model_a, model_b, human P(a better), judge p_a_first, p_a_second
        ("J", "X", 1.0, 1.0, 0.8),  # own better, judge gives own 0.9 (own in both orders)
        ("X", "J", 1.0, 0.0, 0.6),  # own worse, judge gives own 0.7 (split)
        ("J", "Y", 0.0, 0.2, None),  # own worse, judge gives own 0.2 (one order only)
        ("J", "Y", 0.5, 0.6, 0.6),  # reference tie, judge gives own 0.6
        ("X", "Y", 1.0, 0.8, 0.8),  # others: the worse (b) gets 0.2
        ("Y", "X", 0.0, 0.6, 0.6),  # others: the worse (a) gets 0.6
        ("Z", "J", 1.0, 1.0, 1.0),  # own worse, other chosen in both orders (own 0)
        ("J", "Z", 0.0, 0.5, 0.0),  # own worse, a tie in one order: split (own 0.25)
    ]
    # each row ten times on its own prompt: the same rates, enough prompts to bootstrap
    out = pd.DataFrame(
        [
            {"item_id": f"i{k}-{r}", "prompt_id": f"p{k}-{r}", "model_a": a, "model_b": b,
             "human": h, "judge": "J", "p_a_first": f, "p_a_second": s}
            for k, (a, b, h, f, s) in enumerate(rows)
            for r in range(10)
        ]
    )  # fmt: skip
    out["p_a"] = out[["p_a_first", "p_a_second"]].mean(axis=1)
    return out


def test_every_rung_by_hand() -> None:
    results, skipped = self_preference_ladder(_table(), min_n=1, boot=Resampling(n_boot=200))
    got = {r.metric: r.estimate for r in results}
    assert not skipped and set(got) == set(RUNGS)
    own, reference = (0.9 + 0.7 + 0.2 + 0.6 + 0 + 0.25) / 6, (1 + 0 + 0 + 0.5 + 0 + 0) / 6
    harmful, baseline = (0.7 + 0.2 + 0 + 0.25) / 4, (0.2 + 0.6) / 2
    expected = {
        "own_win_rate": own,
        "reference_own_rate": reference,
        "dp_difference": own - reference,
        "eo": 0.9 - ((1 - 0.7) + (1 - 0.2) + 1 + (1 - 0.25)) / 4,
        "legitimate": 0.9,
        "legitimate_own_both": 1.0,
        "legitimate_split": 0.0,
        "legitimate_other_both": 0.0,
        # own-worse pairs judged in both orders: split, other in both, split (tie)
        "harmful_own_both": 0.0,
        "harmful_split": 2 / 3,
        "harmful_other_both": 1 / 3,
        "harmful": harmful,
        "baseline_error": baseline,
        "harmful_excess": harmful - baseline,
    }
    assert got == pytest.approx(expected, abs=1e-12)
    # the differences read signed; every rate, a share at least its no-bias value 0, not
    # (own_win_rate printed +0.440 as if it were a difference)
    signed = {r.metric for r in results if r.signed}
    assert signed == {"dp_difference", "eo", "harmful_excess"}
    assert all(r.to_dict()["signed"] is (r.metric in signed) for r in results)
    # a rate's no-bias value 0 is its floor, no hypothesis: no p-value (own_win_rate 0.44
    # read p = 2/(B+1), "significant" against a value no share of own picks can go below)
    assert all(math.isnan(r.p_value) is (r.metric not in signed) for r in results)


def test_harmful_averages_the_orders_of_a_split_as_its_definition_says() -> None:
    # probability verdicts: every own-worse pair a split (own 0.9 shown first, 0.3 shown
    # second), so harmful is the orders' mean 0.6, not own_both + split / 2 = 0.5; the
    # definition said "a split between the orders counts ½" (the committed ladder example
    # printed it beside harmful 0.475 where own_both 0 + split 0.93 / 2 gives 0.467)
    rows = [
        {"item_id": f"i{k}", "prompt_id": f"p{k}", "model_a": "J", "model_b": "X",
         "human": 0.0, "judge": "J", "p_a_first": 0.9, "p_a_second": 0.3}
        for k in range(6)
    ]  # fmt: skip
    t = pd.DataFrame(rows)
    t["p_a"] = (t["p_a_first"] + t["p_a_second"]) / 2
    results, _ = self_preference_ladder(t, min_n=1, boot=Resampling(n_boot=50))
    got = {r.metric: r.estimate for r in results}
    assert got["harmful"] == pytest.approx(0.6, abs=1e-12)
    assert (got["harmful_own_both"], got["harmful_split"]) == (0.0, 1.0)
    assert "split between the orders counts ½" not in RUNGS["harmful"]
    assert "averaged over the two orders" in RUNGS["harmful"]


def test_planted_self_preference_splits_into_legitimate_and_harmful() -> None:
    # agreement with the preferred answer is accuracy ± sp/2 on own pairs, accuracy
    # elsewhere: legitimate = acc + sp/2, harmful = 1 − acc + sp/2, baseline = 1 − acc
    acc, sp = 0.7, 0.3
    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(self_preference=sp, accuracy=acc)},
        n_prompts=1500, pairs_per_prompt=3, seed=11,
    )  # fmt: skip
    results, _ = self_preference_ladder(sim.pairs, boot=Resampling(n_boot=300))
    got = {r.metric: r for r in results}
    truth = {
        "eo": sp,
        "legitimate": acc + sp / 2,
        "harmful": 1 - acc + sp / 2,
        "baseline_error": 1 - acc,
        "harmful_excess": sp / 2,
    }
    for metric, value in truth.items():
        r = got[metric]
        assert r.estimate == pytest.approx(value, abs=0.04), metric
        assert r.ci_low - 0.02 <= value <= r.ci_high + 0.02, (metric, r.ci_low, r.ci_high)


def test_no_self_preference_leaves_no_harmful_excess() -> None:
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(accuracy=0.75)}, n_prompts=800, seed=5)
    results, _ = self_preference_ladder(sim.pairs, boot=Resampling(n_boot=300))
    r = next(r for r in results if r.metric == "harmful_excess")
    assert r.ci_low <= 0 <= r.ci_high
    assert np.isfinite(r.estimate)


def test_a_strong_judge_without_bias_reads_eo_and_harmful_excess_above_0_as_they_say() -> None:
    """The rungs' definitions said "0 = no bias" of eo and harmful_excess, in a table whose
    title says they are not adjusted for competence (GPT-4 on llmbar-mtbench: +0.48 and
    +0.35 beside a calibrated headline of −0.04). Planted: an author-judge whose errors
    come from the quality gap alone (no self term), its model the strongest of four —
    both read above 0, as their definitions now say; its model middling, both near 0."""
    from recuse.simulate.self_preference import AuthorJudge, simulate_self_preference

    def rungs(strength: float) -> dict[str, MetricResult]:
        sim = simulate_self_preference(
            {"m0": AuthorJudge(competence=2.0, tau=0.0)},
            {"m0": strength, "m1": 0.0, "m2": -0.5, "m3": 0.3}, n_prompts=600, seed=3,
        )  # fmt: skip
        results, _ = self_preference_ladder(sim.pairs, boot=Resampling(n_boot=200))
        return {r.metric: r for r in results}

    strong, middling = rungs(1.0), rungs(0.0)
    for rung in ("eo", "harmful_excess"):
        assert strong[rung].ci_low > 0.03, (rung, strong[rung])
        assert middling[rung].ci_low < 0 < middling[rung].ci_high, (rung, middling[rung])
        assert "which a strong judge without bias reads above" in RUNGS[rung]
        assert "0 = no bias" not in RUNGS[rung]


def test_a_rate_rung_reads_wilsons_interval_where_the_resamples_cannot_vary() -> None:
    """On the table above the judge's 10 own-better pairs (one a prompt) are all chosen in
    both orders and none splits: the resamples of both rungs are all alike and the
    bootstrap read [1, 1] and [0, 0], ruling nothing out. A rate's interval is Wilson's at
    the prompts there: 10 of 10 and 0 of 10 at 90% (statsmodels: 0.7870 to 1 and 0 to
    0.2130). The split rung of the 30 own-worse pairs (20 of 30, one a prompt) reads
    Wilson's for 20 of 30 to the resampling's error; the differences keep their BCa."""
    from statsmodels.stats.proportion import proportion_confint

    results, _ = self_preference_ladder(_table(), min_n=1, boot=Resampling(n_boot=4000, seed=2))
    got = {r.metric: r for r in results}
    for rung, k, n in (("legitimate_own_both", 10, 10), ("legitimate_split", 0, 10)):
        r = got[rung]
        low, high = proportion_confint(k, n, alpha=0.1, method="wilson")
        assert (r.ci_low, r.ci_high) == pytest.approx((low, high), abs=1e-9), rung
        assert not any(w.startswith("no variation") for w in r.warnings), rung
        assert "Wilson score interval" in r.method and r.interval_rule is None
    low, high = proportion_confint(20, 30, alpha=0.1, method="wilson")
    split = got["harmful_split"]
    assert (split.ci_low, split.ci_high) == pytest.approx((low, high), abs=0.01)
    assert got["eo"].interval_rule == "bca" and "Wilson" not in got["eo"].method
