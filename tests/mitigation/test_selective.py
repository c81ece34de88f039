"""Selective judging: the fixed-sequence test, its guarantee under a planted truth,
the own-answer strata, cascades, ties and applying thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from recuse.errors import ConfigError, InputError
from recuse.mitigation.selective import (
    PERSON,
    Options,
    apply_thresholds,
    certify_items,
    certify_judges,
    clopper_pearson_lower,
    fixed_sequence,
    items_of,
    n_min,
    naive_threshold,
)
from recuse.roster import Roster
from recuse.simulate.selective import simulate_selective

ROSTER = Roster.load()


def test_clopper_pearson_matches_the_exact_binomial_test() -> None:
    # full agreement: the bound solves t^n = delta
    assert float(clopper_pearson_lower(20, 20, 0.1)) == pytest.approx(0.1 ** (1 / 20))
    # k of n: the bound is scipy's one-sided exact interval at 1 - delta
    for k, n in ((45, 50), (80, 100), (7, 30)):
        ci = binomtest(k, n, alternative="greater").proportion_ci(0.9, method="exact")
        assert float(clopper_pearson_lower(k, n, 0.1)) == pytest.approx(ci.low, abs=1e-9)
    assert n_min(0.85, 0.1) == 15 and 0.85**15 <= 0.1 < 0.85**14


def test_walk_stops_at_the_first_failure() -> None:
    # three blocks of confidence, highest first: 40 items all agree, 40 agree 36 times
    # (cumulative 76/80), 40 agree 10 times (86/120)
    conf = np.r_[np.full(40, 0.95), np.full(40, 0.8), np.full(40, 0.6)]
    agree = np.r_[np.ones(40), np.ones(36), np.zeros(4), np.ones(10), np.zeros(30)]
    w = fixed_sequence(conf, agree, target=0.85, delta=0.1)
    # by hand: P(Bin(40, .85) >= 40) = .85^40 ~ 0.0015 <= .1; P(Bin(80, .85) >= 76) ~ .011;
    # P(Bin(120, .85) >= 86) ~ 1: the walk keeps 0.8
    assert binomtest(76, 80, 0.85, alternative="greater").pvalue <= 0.1
    assert binomtest(86, 120, 0.85, alternative="greater").pvalue > 0.1
    assert (w.threshold, w.n_kept, w.n_agree) == (0.8, 80, 76)
    assert w.p_value == pytest.approx(binomtest(76, 80, 0.85, alternative="greater").pvalue)


def test_walk_that_fails_first_certifies_nothing_even_if_later_steps_pass() -> None:
    # the most confident 20 items agree 14 times; below them 200 agree: the fixed
    # sequence stops at the first failure and never looks further
    conf = np.r_[np.full(20, 0.99), np.full(200, 0.7)]
    agree = np.r_[np.ones(14), np.zeros(6), np.ones(200)]
    assert fixed_sequence(conf, agree, target=0.85, delta=0.1).threshold is None
    assert naive_threshold(conf, agree, target=0.85) == 0.7


def test_guarantee_holds_over_seeds_and_the_naive_threshold_does_not() -> None:
    """Planted truth: over 100 calibration sets of 800 items, the true agreement on the
    kept items (E[q | c >= threshold], exact) is >= the target in >= 1 - delta of the
    seeds, pooled and within the own-answer stratum; the naive threshold (lowest with
    observed agreement >= target, no test) misses far more often."""
    target, delta, seeds = 0.85, 0.1, 100
    o = Options(target=target, delta=delta)
    fails = {"pooled": 0, "own": 0, "naive": 0, "naive_own": 0}
    own_certified = 0
    for seed in range(seeds):
        sim = simulate_selective(800, own_share=0.4, own_drop=0.05, seed=seed)
        items = items_of(sim.pairs, ROSTER, o)
        assert (items.stratum == sim.stratum).all()
        certs = {c.stratum: c for c in certify_items(items, o, delta)}
        kept_mass = {
            s: float(np.mean(sim.stratum == s)) * (1 - (2 * c.threshold - 1) ** sim.ease)
            for s, c in certs.items()
            if c.threshold is not None
        }
        if kept_mass:
            total = sum(kept_mass.values())
            pooled = (
                sum(
                    m * sim.true_agreement(certs[s].threshold, s)  # type: ignore[arg-type]
                    for s, m in kept_mass.items()
                )
                / total
            )
            fails["pooled"] += pooled < target
        own = certs["own"].threshold
        if own is not None:
            own_certified += 1
            fails["own"] += sim.true_agreement(own, "own") < target
        lam = naive_threshold(items.conf, items.agree, target=target)
        fails["naive"] += lam is not None and sim.true_agreement(lam) < target
        m = items.stratum == "own"
        lam = naive_threshold(items.conf[m], items.agree[m], target=target)
        fails["naive_own"] += lam is not None and sim.true_agreement(lam, "own") < target
    assert fails["pooled"] / seeds <= delta
    assert fails["own"] / seeds <= delta
    assert own_certified >= 15  # the own stratum is certified often enough to test it
    assert fails["naive"] / seeds > 0.3
    assert fails["naive_own"] / seeds > 0.3


def test_own_items_need_their_own_threshold() -> None:
    """Without strata the pooled threshold is certified, but on the own items (where
    the judge is as confident and less often right) agreement falls below the target
    in most seeds; with strata the own items get a threshold of their own."""
    target = 0.85
    pooled_o = Options(target=target, strata=False)
    strata_o = Options(target=target)
    below = {"pooled": 0, "strata": 0}
    seeds = 40
    for seed in range(seeds):
        sim = simulate_selective(600, own_drop=0.12, seed=seed)
        (all_,) = certify_items(items_of(sim.pairs, ROSTER, pooled_o), pooled_o, 0.1)
        if all_.threshold is not None:
            below["pooled"] += sim.true_agreement(all_.threshold, "own") < target
        certs = {c.stratum: c for c in certify_items(items_of(sim.pairs, ROSTER, strata_o),
                                                     strata_o, 0.1)}  # fmt: skip
        own = certs["own"].threshold
        if own is not None:
            below["strata"] += sim.true_agreement(own, "own") < target
    assert below["pooled"] / seeds > 0.5
    assert below["strata"] / seeds <= 0.1


def _table(
    n: int,
    *,
    judge: str = "j",
    p: float = 0.9,
    agree: int | None = None,
    model_a: str = "m1",
    model_b: str = "m2",
    start: int = 0,
) -> pd.DataFrame:
    """``n`` items all labelled a; ``agree`` of them judged a with probability ``p``,
    the rest judged b with the same confidence."""
    agree = n if agree is None else agree
    p_a = np.r_[np.full(agree, p), np.full(n - agree, 1 - p)]
    return pd.DataFrame({
        "item_id": [f"i{start + k}" for k in range(n)],
        "prompt_id": [f"q{start + k}" for k in range(n)],
        "model_a": model_a, "model_b": model_b, "human": 1.0, "judge": judge,
        "p_a_first": p_a, "p_a_second": p_a, "p_a": p_a,
    })  # fmt: skip


def test_calibration_set_too_small_says_what_it_could_guarantee() -> None:
    # 30 items, all agreeing: at delta 0.1 the best bound is 0.1^(1/30) = 0.926, so
    # 0.95 cannot be certified and the reason names 0.92 as the most it could
    o = Options(target=0.95, delta=0.1, min_labels=10)
    c = certify_judges(_table(30), None, o).judges[0]
    (s,) = c.strata
    assert not s.certified and s.best_target == 0.92
    assert "0.92" in s.reason
    assert c.to_dict()["certified"] is False
    # 10 items: even full agreement can't pass 0.8 (needs log .1/log .8 = 11 items)
    small = certify_judges(_table(10), None, Options(target=0.8, min_labels=5))
    assert "too few labelled items" in small.judges[0].strata[0].reason


def test_judge_never_confident_enough() -> None:
    # 60 items, 42 agree (0.7): nothing certified at 0.85; the reason gives the counts
    c = certify_judges(_table(60, agree=42), None, Options(target=0.85)).judges[0]
    (s,) = c.strata
    assert not c.certified and s.n_kept == 0
    assert "never confident enough" in s.reason and "42/60" in s.reason


def test_human_ties_excluded_or_counted() -> None:
    t = _table(60)
    t.loc[:9, "human"] = 0.5  # 10 tied labels; the judge picked a on all 60
    excluded = certify_judges(t, None, Options(target=0.8)).judges[0]
    assert excluded.n_ties_excluded == 10 and excluded.n_labelled == 50
    assert excluded.strata[0].n_agree == 50
    counted = certify_judges(t, None, Options(target=0.7, human_ties="count")).judges[0]
    # a tie label agrees only with a tie verdict: 50 of 60 agree
    assert counted.n_labelled == 60 and counted.n_ties_excluded == 0
    s = counted.strata[0]
    assert (s.n_kept, s.n_agree) == (60, 50)
    assert s.lower_bound == pytest.approx(float(clopper_pearson_lower(50, 60, 0.1)))


def test_order_consistency_is_the_confidence_of_a_picking_judge() -> None:
    t = _table(80)
    t["p_a_first"] = 1.0
    t["p_a_second"] = np.r_[np.ones(60), np.zeros(20)]  # 20 items flip with the order
    t["p_a"] = (t["p_a_first"] + t["p_a_second"]) / 2
    c = certify_judges(t, None, Options(target=0.85)).judges[0]
    assert c.confidence == "order consistency"
    (s,) = c.strata
    assert s.threshold == 1.0 and s.n_kept == 60  # the consistent items only


def test_order_consistency_says_what_a_tie_in_one_order_reads() -> None:
    """A pick in one order and a tie in the other averages to 0.75, a confidence the
    definition did not name ("1 when both orders pick the same answer, 0.5 when they
    disagree"), though o1-mini's certified threshold on JudgeBench is 0.75 (34 of its
    350 items). 40 consistent items, 30 with a tie in the second order, 10 that flip."""
    t = _table(80)
    t["p_a_first"] = 1.0
    t["p_a_second"] = np.r_[np.ones(40), np.full(30, 0.5), np.zeros(10)]
    t["p_a"] = (t["p_a_first"] + t["p_a_second"]) / 2
    c = certify_judges(t, None, Options(target=0.85)).judges[0]
    assert c.confidence == "order consistency"
    (s,) = c.strata  # every verdict is a, every label a: all 70 picking items agree
    assert (s.threshold, s.n_kept, s.n_agree) == (0.75, 70, 70)
    assert (
        "0.75 when one picks an answer and the other calls a tie"
        in (c.to_dict()["confidence_definition"])
    )


def test_an_item_judged_in_one_order_has_shown_no_order_consistency() -> None:
    """A picks-only judge's item with one verdict (the other order failed) read as its
    pick, confidence 1, beside the pairs whose two orders agree. Now it reads 0.5, as a
    flip does: both orders agree 1; pick and tie 0.75; flip, one order (either), a
    verdict without orders and a tie in one order 0.5."""
    t = _table(8)
    t["p_a_first"] = [1.0, 1.0, 1.0, 1.0, np.nan, np.nan, 0.5, 0.0]
    t["p_a_second"] = [1.0, 0.5, 0.0, np.nan, 0.0, np.nan, np.nan, 0.0]
    t["p_a"] = [1.0, 0.75, 0.5, 1.0, 0.0, 1.0, 0.5, 0.0]
    items = items_of(t, None, Options())
    assert items.conf.tolist() == [1.0, 0.75, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0]
    assert items.verdict.tolist() == [1, 1, 0, 1, -1, 1, 0, -1]  # the pick is kept
    # a judge with probabilities keeps its one-order probability as its confidence
    probs = t.assign(p_a_first=[0.9, 0.8, 0.7, 0.9, np.nan, np.nan, 0.6, 0.2],
                     p_a_second=[0.9, 0.6, 0.3, np.nan, 0.3, np.nan, np.nan, 0.2],
                     p_a=[0.9, 0.7, 0.5, 0.9, 0.3, 0.8, 0.6, 0.2])  # fmt: skip
    assert items_of(probs, None, Options()).conf.round(6).tolist() == [
        0.9, 0.7, 0.5, 0.9, 0.7, 0.8, 0.6, 0.8,
    ]  # fmt: skip


def _mixed_orders(
    n: int, one_order: float, rng: np.random.Generator, start: int = 0
) -> pd.DataFrame:
    """A picks-only judge: on 70% of items (easy) both orders give the same pick, right
    with probability 0.97; on the rest it picks the answer shown first (a flip). A share
    ``one_order`` of items has its second order missing (failed)."""
    human = (rng.random(n) < 0.5).astype(float)
    easy = rng.random(n) < 0.7
    right = rng.random(n) < 0.97
    pick = np.where(right, human, 1 - human)
    first = np.where(easy, pick, 1.0)
    second = np.where(easy, pick, 0.0)
    second = np.where(rng.random(n) < one_order, np.nan, second)
    return pd.DataFrame({
        "item_id": [f"i{start + k}" for k in range(n)],
        "prompt_id": [f"q{start + k}" for k in range(n)],
        "model_a": "m1", "model_b": "m2", "human": human, "judge": "j",
        "p_a_first": first, "p_a_second": second, "p_a": np.nanmean([first, second], axis=0),
    })  # fmt: skip


def test_one_order_items_do_not_ride_on_the_consistent_pairs_threshold() -> None:
    """Calibration: 1,000 items, a quarter judged in one order. Read as confidence 1,
    the one-order picks (right 0.7 × 0.97 + 0.3 × 0.5 = 0.83 of the time) sat with the
    consistent pairs (0.97): the mix (765 items, 0.928) was certified at 0.9 with
    threshold 1, and ``certify apply`` on 600 new items judged in one order kept every
    pick, 0.81 of them agreeing, under the guarantee's 0.9. Now the threshold keeps the
    518 consistent pairs (0.969) and the one-order new items go to a person."""
    rng = np.random.default_rng(3)
    cal = _mixed_orders(1000, 0.25, rng)
    result = certify_judges(cal, None, Options(target=0.9, delta=0.1, strata=False))
    c = result.judges[0]
    ones = cal["p_a_second"].isna()
    consistent = ~ones & (cal["p_a_first"] == cal["p_a_second"])
    (s,) = c.strata
    assert s.threshold == 1.0 and s.n_kept == int(consistent.sum())
    agree = (cal["p_a_first"] == cal["human"])[consistent]
    assert s.n_agree == int(agree.sum()) and s.agreement > 0.93
    new = _mixed_orders(600, 1.0, rng, start=10_000)
    decided = apply_thresholds(new, result.thresholds(), None)
    assert (decided["decision"] == PERSON).all()
    assert c.n_one_order == int(ones.sum()) and c.to_dict()["n_one_order"] == int(ones.sum())
    assert "one order only" in c.to_dict()["confidence_definition"]


def _calibrated(n: int, rng: np.random.Generator, start: int = 0) -> pd.DataFrame:
    """A judge whose probability is calibrated: confidence c ~ U(0.5, 1), its verdict
    right with probability c (planted), both orders alike."""
    human = (rng.random(n) < 0.5).astype(float)
    c = rng.uniform(0.5, 1.0, n)
    pick = np.where(rng.random(n) < c, human, 1 - human)
    p_a = np.where(pick == 1, c, 1 - c)
    return pd.DataFrame({
        "item_id": [f"i{start + k}" for k in range(n)],
        "prompt_id": [f"q{start + k}" for k in range(n)],
        "model_a": "m1", "model_b": "m2", "human": human, "judge": "j",
        "p_a_first": p_a, "p_a_second": p_a, "p_a": p_a,
    })  # fmt: skip


def test_a_threshold_certified_on_probabilities_is_not_applied_to_picks() -> None:
    """Certified on calibrated probabilities at 0.9 (the threshold keeps c ≥ ~0.8), the
    same judge's picks (one order: p_a 0 or 1) read confidence 1, and ``certify apply``
    kept every one of them: on 2,000 planted new items 75% agree (the mean of c), under
    the certified 0.9. A picks-only certificate applied to probabilities is the same
    error the other way. Both are refused, naming the file, the judge and both kinds."""
    rng = np.random.default_rng(11)
    cal = _calibrated(1000, rng)
    result = certify_judges(cal, None, Options(target=0.9, delta=0.1, strata=False))
    (lam,) = result.judges[0].thresholds.values()
    assert lam is not None and 0.8 < lam < 0.95
    new = _calibrated(2000, rng, start=10_000)
    picks = new.assign(p_a=(new["p_a"] > 0.5) * 1.0, p_a_second=np.nan)
    picks["p_a_first"] = picks["p_a"]
    # read on the certified scale, every pick passes the threshold, and agrees 75%
    read = items_of(picks, None, Options(strata=False), kind="probability")
    assert (read.conf >= lam).all() and 0.72 < read.agree.mean() < 0.78
    with pytest.raises(InputError) as err:
        apply_thresholds(picks.drop(columns="human"), result.thresholds(), None, file="t.json")
    said = str(err.value)
    assert "t.json certifies 'j' on probabilities (confidence: probability)" in said
    assert "this table's verdicts of 'j' are picks (0, 0.5 or 1)" in said
    # the probabilities themselves are decided (the kept agree ≥ 0.9 here)
    decided = apply_thresholds(new.drop(columns="human"), result.thresholds(), None)
    kept = decided["decision"] != PERSON
    right = decided["decision"].map({"a": 1.0, "b": 0.0}).to_numpy() == new["human"].to_numpy()
    assert kept.mean() > 0.2 and right[kept.to_numpy()].mean() >= 0.9
    # a certificate of picks (order consistency) refuses probabilities
    order = certify_judges(_mixed_orders(1000, 0.0, rng), None,
                           Options(target=0.9, delta=0.1, strata=False))  # fmt: skip
    assert order.judges[0].confidence == "order consistency"
    with pytest.raises(InputError, match=r"certifies 'j' on picks .* verdicts of 'j' are probab"):
        apply_thresholds(new, order.thresholds(), None, file="t.json")


@pytest.mark.parametrize("kind", [None, "probabilities", 1, ["probability"]])
def test_a_thresholds_files_unknown_confidence_kind_is_refused(kind: object) -> None:
    """A hand-edited confidence (absent, misspelt) was read as a probability's."""
    spec = {"recuse_thresholds": 1, "target": 0.85, "delta": 0.1, "strata": False,
            "judges": [{"judge": "j", "confidence": kind, "thresholds": {"all": 0.6}}]}  # fmt: skip
    with pytest.raises(InputError, match=r"t\.json.*judges\[0\]\.confidence must be one of"):
        apply_thresholds(_table(30), spec, None, file="t.json")


def test_cascade_passes_on_and_a_missing_judge_passes_through() -> None:
    # judge "cheap" is sure and right on items 0-59 and unsure (0.55, half wrong) on
    # 60-119; "strong" judged only items 40-119 and is right on them
    cheap = pd.concat([_table(60, judge="cheap", p=0.95),
                       _table(60, judge="cheap", p=0.55, agree=30, start=60)])  # fmt: skip
    strong = _table(80, judge="strong", p=0.9, start=40)
    pairs = pd.concat([cheap, strong], ignore_index=True)
    o = Options(target=0.85, delta=0.1)
    r = certify_judges(pairs, None, o, cascade=["cheap", "strong"],
                       costs={"cheap": 1.0, "strong": 10.0})  # fmt: skip
    cas = r.cascade
    assert cas is not None
    first, second = cas.stages
    assert first.certificate.delta == pytest.approx(0.05)  # delta split over 2 stages
    assert first.share == pytest.approx(0.5)  # cheap keeps items 0-59
    assert second.reached == pytest.approx(0.5)
    assert second.share == pytest.approx(0.5)  # strong keeps 60-119
    assert cas.person_share == 0.0 and cas.agreement == 1.0
    # cost: every item reaches cheap (2 orders x $1 / 1,000), half reach strong
    assert cas.usd_per_1000_items == pytest.approx(1 * 2 * 1.0 + 0.5 * 2 * 10.0)
    # strong never judged items 0-39: without cheap they'd go to a person
    alone = certify_judges(pairs, None, o, cascade=["strong"]).cascade
    assert alone is not None and alone.person_share == pytest.approx(40 / 120)
    # apply: the unlabelled table gets one decision per item
    new = pairs.drop(columns="human")
    decided = apply_thresholds(new, r.thresholds(), None)
    assert len(decided) == 120
    by = decided.set_index("item_id")
    assert by.loc["i0", "judge"] == "cheap" and by.loc["i0", "decision"] == "a"
    assert by.loc["i100", "judge"] == "strong"
    # without the strong judge's rows, its items go to a person
    decided = apply_thresholds(new[new["judge"] == "cheap"], r.thresholds(), None)
    assert (decided.set_index("item_id").loc["i100", "decision"]) == PERSON


def test_a_cascades_cost_counts_the_orders_each_judge_spent() -> None:
    """Cost per 1,000 items = Σ share reaching the judge × judgments per item × USD per
    1,000 judgments. Worked by hand on 120 items: "cheap" (both orders on 60, one order
    on the other 60: 1.5 judgments per item, $2) keeps items 0-59; "strong" ($10, both
    orders) gets the other half: 1 × 1.5 × 2 + 0.5 × 2 × 10 = 13. A table giving only
    p_a (no orders) counted 0 judgments, and the cascade cost $0: now the cost is
    unknown and says why."""
    cheap = pd.concat([_table(60, judge="cheap", p=0.95),
                       _table(60, judge="cheap", p=0.55, agree=30, start=60)])  # fmt: skip
    cheap.loc[cheap["item_id"].isin([f"i{k}" for k in range(60, 120)]), "p_a_second"] = np.nan
    pairs = pd.concat([cheap, _table(80, judge="strong", p=0.9, start=40)], ignore_index=True)
    o = Options(target=0.85, delta=0.1)
    costs = {"cheap": 2.0, "strong": 10.0}
    cas = certify_judges(pairs, None, o, cascade=["cheap", "strong"], costs=costs).cascade
    assert cas is not None
    assert [s.orders for s in cas.stages] == [1.5, 2.0]
    assert [s.reached for s in cas.stages] == [1.0, 0.5]
    assert cas.usd_per_1000_items == pytest.approx(1.0 * 1.5 * 2 + 0.5 * 2 * 10)
    assert cas.cost_unknown == "" and cas.to_dict()["cost_unknown"] is None
    bare = pairs.assign(p_a_first=np.nan, p_a_second=np.nan)
    cas = certify_judges(bare, None, o, cascade=["cheap", "strong"], costs=costs).cascade
    assert cas is not None and cas.usd_per_1000_items is None
    assert cas.stages[0].orders is None and cas.to_dict()["usd_per_1000_items"] is None
    assert "the verdicts of cheap, strong are p_a without p_a_first" in cas.cost_unknown
    unpriced = certify_judges(pairs, None, o, cascade=["cheap", "strong"], costs={"cheap": 2.0})
    assert unpriced.cascade is not None and unpriced.cascade.usd_per_1000_items is None
    assert unpriced.cascade.cost_unknown.startswith("no price for strong (USD per 1,000")


def test_bad_options_and_tables_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match=r"^agreement must be in \[0.5, 1\) \(e.g. 0.85\), got 1"):
        certify_judges(_table(30), None, Options(target=1.2))
    with pytest.raises(ConfigError, match="not in the table"):
        certify_judges(_table(30), None, Options(), cascade=["j", "nope"])
    with pytest.raises(InputError, match="no human labels"):
        certify_judges(_table(30).assign(human=np.nan), None, Options())
    with pytest.raises(InputError, match="not a certified thresholds file"):
        apply_thresholds(_table(30), {"judges": []}, None, file="t.json")


@pytest.mark.parametrize(
    ("kwargs", "keyword", "flag"),
    [
        ({"agreement": 80}, "agreement must be in [0.5, 1) (e.g. 0.85), got 80",
         "--agreement = 80.0: must be in [0.5, 1), e.g. 0.85"),
        ({"delta": 0.5}, "delta must be in (0, 0.5) (e.g. 0.1), got 0.5",
         "--delta = 0.5: must be in (0, 0.5), e.g. 0.1"),
        ({"min_labels": 0}, "min_labels must be at least 1 (e.g. 30), got 0",
         "--min-labels = 0: must be at least 1, e.g. 30"),
    ],
)  # fmt: skip
def test_a_python_caller_reads_the_keyword_and_the_command_line_the_flag(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kwargs: dict[str, Any],
    keyword: str,
    flag: str,
) -> None:
    """``recuse.certify(agreement=80)`` said "--agreement must be in [0.5, 1) ...", a flag
    a Python caller never wrote: the library names its keyword, ``recuse certify`` its
    flag (``named_settings``, as the audit's ``level`` / ``--level``)."""
    import recuse
    from recuse.cli import main

    with pytest.raises(ConfigError) as err:
        recuse.certify(_table(30), **kwargs)
    assert str(err.value) == keyword and "--" not in str(err.value)
    src = tmp_path / "pairs.csv"
    _table(30).to_csv(src, index=False)
    name, value = next(iter(kwargs.items()))
    assert main(["certify", str(src), "--" + name.replace("_", "-"), str(value)]) == 2
    assert flag in capsys.readouterr().err


@pytest.mark.parametrize("scope", ["lines", None, 1])
def test_a_thresholds_files_unknown_self_scope_is_an_input_error(scope: object) -> None:
    """An edited thresholds file's self_scope other than snapshot or line: an error naming
    the file and the fix, not a roster's ConfigError without the file (nor, with no
    roster, read as a scope); a file without the key (written before it) is snapshot."""
    from recuse.mitigation.selective import read_thresholds

    spec: dict[str, Any] = {
        "recuse_thresholds": 1,
        "target": 0.85,
        "delta": 0.1,
        "strata": False,
        "judges": [{"judge": "gpt-4", "confidence": "probability", "thresholds": {"all": 0.6}}],
    }
    assert read_thresholds(spec, file="t.json")[0]["judge"] == "gpt-4"
    pairs = pd.DataFrame({"item_id": ["i"], "prompt_id": ["p"], "judge": ["gpt-4"], "p_a": [0.9],
                          "model_a": ["gpt-4"], "model_b": ["claude-v1"]})  # fmt: skip
    assert list(apply_thresholds(pairs, spec, Roster.load(), file="t.json")["decision"]) == ["a"]
    with pytest.raises(InputError, match=r"t\.json.*'self_scope' must be"):
        read_thresholds({**spec, "self_scope": scope}, file="t.json")
    with pytest.raises(InputError, match=r"t\.json.*'self_scope' must be"):
        apply_thresholds(pairs, {**spec, "self_scope": scope}, None, file="t.json")


def test_thresholds_certified_with_a_roster_are_not_applied_without_one() -> None:
    """Certified per own/family/other stratum (with a roster), applied without a roster
    (every item pooled as 'all'), every item found no threshold and went to a person,
    exit 0; certified without a roster ('all'), applied with one, the same. Both are
    refused; a stratum the calibration lacked still sends its items to a person."""
    rng = np.random.default_rng(5)
    cal = _calibrated(600, rng).assign(model_a="gpt-4", model_b="claude-v1")
    cal.loc[::2, "model_a"] = "alpaca-13b"  # half own (gpt-4 judges gpt-4), half other
    cal = cal.assign(judge="gpt-4")
    with_roster = certify_judges(cal, ROSTER, Options(target=0.8, delta=0.1)).thresholds()
    assert set(with_roster["judges"][0]["thresholds"]) == {"own", "other"}
    new = cal.drop(columns="human")
    with pytest.raises(ConfigError, match="per own/family/other stratum, but these items are "
                       r"read without a roster \(all pooled\)"):  # fmt: skip
        apply_thresholds(new, with_roster, None, file="t.json")
    pooled = certify_judges(cal, None, Options(target=0.8, delta=0.1)).thresholds()
    assert set(pooled["judges"][0]["thresholds"]) == {"all"}
    with pytest.raises(ConfigError, match=r"pooled \(no roster's own/family/other strata\)"):
        apply_thresholds(new, pooled, ROSTER, file="t.json")
    # an item of a family stratum the calibration never saw goes to a person (a note
    # says the file does not know gpt-3.5-turbo: the roster put it in the family)
    fam = new.head(4).assign(model_a="gpt-3.5-turbo", model_b="alpaca-13b")
    with pytest.warns(UserWarning, match=r"saw no answers of gpt-3\.5-turbo \(family\)"):
        decided = apply_thresholds(fam, with_roster, ROSTER, file="t.json")
    assert (decided["decision"] == PERSON).all() and len(decided) == 4


def test_observed_agreement_of_applied_decisions_by_hand() -> None:
    """Five items: i0-i2 labelled a, i3 a tie, i4 unlabelled; the judge keeps i0 (a, right)
    and i1 (b, wrong), sends i2 and i3 to a person. Not-tied labelled: 3; kept 2; agree
    1; one tie left out."""
    from recuse.mitigation.selective import observed

    pairs = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                          "human": [1.0, 1.0, 1.0, 0.5, np.nan]})  # fmt: skip
    decided = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                            "decision": ["a", "b", PERSON, PERSON, "a"]})  # fmt: skip
    seen = observed(decided, pairs)
    assert seen is not None and (seen.n, seen.kept, seen.agree, seen.ties) == (3, 2, 1, 1)
    assert seen.agreement == 0.5
    assert observed(decided, pairs.assign(human=np.nan)) is None
    assert observed(decided, pairs.drop(columns="human")) is None


def test_observed_counts_tied_labels_as_certified_with_ties_counted() -> None:
    """Certified with ``human_ties="count"``, a tie label agrees only with a tie verdict:
    i0-i3 labelled (a, a, a, tie), i0 kept right, i1 kept wrong, i3 kept as a tie (right),
    i2 to a person. Labelled 4, kept 3, agree 2, none left out. (Before: the tie was left
    out, agreement 1/2, beside a guarantee that counts ties.)"""
    from recuse.mitigation.selective import observed

    pairs = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                          "human": [1.0, 1.0, 1.0, 0.5, np.nan]})  # fmt: skip
    decided = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                            "decision": ["a", "b", PERSON, "tie", "a"]})  # fmt: skip
    seen = observed(decided, pairs, "count")
    assert seen is not None and (seen.n, seen.kept, seen.agree, seen.ties) == (4, 3, 2, 0)
    left_out = observed(decided, pairs)
    assert left_out is not None and (left_out.n, left_out.kept, left_out.agree) == (3, 2, 1)


def test_items_of_one_prompt_have_no_held_out_check() -> None:
    """All items of one prompt: every fold but one is empty, and that one was decided by
    thresholds certified on no labels, so the held-out coverage read 0% (and the
    cascade's held-out person share 100%) as if measured. Now there is no check: NaN in
    Python, null in the JSON, 'one prompt' printed. Two prompts are checked."""
    rng = np.random.default_rng(2)
    one = _calibrated(300, rng).assign(prompt_id="q")
    r = certify_judges(one, None, Options(target=0.8, delta=0.1, strata=False),
                       cascade=["j"])  # fmt: skip
    (s,) = r.judges[0].strata
    assert s.certified and not s.heldout.checked and s.heldout.n == 300
    assert np.isnan(s.heldout.coverage) and np.isnan(r.judges[0].heldout.coverage)
    d = s.to_dict()
    assert d["heldout_coverage"] is None and d["heldout_kept"] is None
    cas = r.cascade
    assert cas is not None and not cas.heldout.checked
    assert np.isnan(cas.heldout_person_share) and np.isnan(cas.stages[0].heldout_share)
    assert cas.to_dict()["heldout_person_share"] is None
    two = one.assign(prompt_id=np.where(np.arange(300) % 2, "q1", "q2"))
    r2 = certify_judges(two, None, Options(target=0.8, delta=0.1, strata=False))
    (s2,) = r2.judges[0].strata
    assert s2.heldout.checked and 0 < s2.heldout.coverage <= 1


def test_labels_that_are_all_ties_say_so() -> None:
    """Every label a tie (left out by default): certify printed an empty table and
    'nothing certified' with no reason (a thresholds file with an empty map), and a
    cascade said 'no labelled item: certification needs human labels' of a table that
    has 60. Both now say the labels are ties and how to count them; a judge without
    labelled items beside one with them says why it certified nothing, and its empty
    map sends its items to a person."""
    tied = _table(60).assign(human=0.5)
    for cascade in (None, ["j"]):
        with pytest.raises(InputError, match="all 60 labels are ties, and tied labels are left"):
            certify_judges(tied, None, Options(strata=False), cascade=cascade)
    counted = certify_judges(tied, None, Options(strata=False, human_ties="count"))
    assert counted.judges[0].n_labelled == 60 and not counted.judges[0].certified
    other = _table(60, judge="k", start=100).assign(human=0.5)
    both = certify_judges(pd.concat([_table(60), other]), None, Options(strata=False))
    k = both.judges[1]
    assert k.judge == "k" and k.n_labelled == 0 and k.n_ties_excluded == 60
    assert "(no labelled item: its 60 labels are ties, left out; count them with" in k.guarantee()
    decided = apply_thresholds(other.drop(columns="human"), both.thresholds(), None, judge="k")
    assert (decided["decision"] == PERSON).all()


def test_a_cascade_stage_no_item_reaches_keeps_its_judges_kind_and_applies() -> None:
    """Pooled, the first judge (planted: p_a 0.9 toward each label, in both orders) keeps
    all 400 items, so none reaches the second:
    its certificate said confidence 'single verdict' (the kind of no rows), and
    apply_thresholds on the very table certified refused the second judge's
    probabilities ('certifies gpt-4 on picks'). Its kind is now that of all its verdicts;
    and a file written so (nothing certified) applies: the first judge decides every item."""
    first = simulate_selective(400, seed=5).pairs
    sure = np.where(first["human"] > 0.5, 0.9, 0.1)
    right = first.assign(judge="gpt-3.5-turbo", p_a_first=sure, p_a_second=sure, p_a=sure)
    pairs = pd.concat([right, first])
    o = Options(target=0.8, strata=False)
    c = certify_judges(pairs, ROSTER, o, cascade=["gpt-3.5-turbo", "gpt-4"])
    assert c.cascade is not None
    assert [s.share for s in c.cascade.stages] == [1.0, 0.0]
    assert [s.certificate.confidence for s in c.cascade.stages] == ["probability"] * 2
    spec = c.thresholds()
    decided = apply_thresholds(pairs, spec, ROSTER, file="t.json")
    assert (decided["judge"] == "gpt-3.5-turbo").all() and len(decided) == 400
    spec["judges"][1]["confidence"] = "single verdict"  # as the file was written before
    again = apply_thresholds(pairs, spec, ROSTER, file="t.json")
    pd.testing.assert_frame_equal(again, decided)


def test_a_judge_named_for_a_cascade_is_refused() -> None:
    """judge= (--judge) was ignored for a cascade's file, even a judge it does not hold:
    every judge of the cascade decided, with exit 0."""
    first = simulate_selective(200, seed=5).pairs
    pairs = pd.concat([first.assign(judge="gpt-3.5-turbo"), first])
    c = certify_judges(pairs, ROSTER, Options(target=0.8), cascade=["gpt-3.5-turbo", "gpt-4"])
    for judge in ("gpt-4", "nobody"):
        with pytest.raises(ConfigError) as err:
            apply_thresholds(pairs, c.thresholds(), ROSTER, file="t.json", judge=judge)
        assert str(err.value).startswith(
            f"--judge {judge}: t.json is a cascade (gpt-3.5-turbo → gpt-4 → person)"
        )
    assert len(apply_thresholds(pairs, c.thresholds(), ROSTER, file="t.json")) == 200


def test_a_cascade_stages_held_out_check_reads_confidence_as_its_certificate() -> None:
    """Planted: 400 items, labels a/b, each its own prompt. The first judge is sure and
    right (p_a 0.9 toward the label, both orders) on items 0-199 and calls the rest a
    tie: it keeps 0-199, held out too. The second judge judged 0-199 in both orders (so
    its confidence is order consistency) and 200-399 in one order only: 150 right
    picks, 10 wrong, 40 ties. Its certificate reads those one-order items at 0.5, where
    they agree 150/200 = 75% < 80%: nothing certified. The held-out check read the rows
    reaching it by their own kind ('single verdict': a pick at 1), certified c ≥ 1 in
    every fold and kept the 160 picks (150 agreeing): a held-out share of 0.4 beside a
    certified share of 0."""
    n = 400
    label = np.where(np.arange(n) % 2 == 0, 1.0, 0.0)
    base = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)],
                         "prompt_id": [f"q{k}" for k in range(n)], "human": label})  # fmt: skip
    easy = np.arange(n) < 200
    p1 = np.where(easy, np.where(label == 1, 0.9, 0.1), 0.5)
    first = base.assign(judge="j1", p_a_first=p1, p_a_second=p1, p_a=p1)
    pick = np.where(label == 1, 1.0, 0.0)  # the label's pick
    hard = np.flatnonzero(~easy)
    pick[hard[150:160]] = 1 - pick[hard[150:160]]  # 10 wrong picks
    pick[hard[160:]] = 0.5  # 40 ties
    second = base.assign(judge="j2", p_a_first=pick, p_a_second=np.where(easy, pick, np.nan),
                         p_a=pick)  # fmt: skip
    o = Options(target=0.8, delta=0.1, strata=False)
    c = certify_judges(pd.concat([first, second]), None, o, cascade=["j1", "j2"]).cascade
    assert c is not None
    one, two = c.stages
    assert (one.share, one.heldout_share) == (0.5, 0.5)
    assert two.certificate.confidence == "order consistency"
    assert two.certificate.thresholds == {"all": None} and two.share == 0.0
    assert two.heldout_share == 0.0  # was 160 / 400 = 0.4
    assert (c.heldout.kept, c.heldout.agree) == (200, 200)  # was (360, 350)
    assert c.heldout_person_share == 0.5  # was 0.1


def _family_apart() -> Roster:
    """The built-in roster but gpt-3.5-turbo a family of its own (an outsider to gpt-4),
    as a recuse.toml or --roster file with another [[model]] entry makes it."""
    from recuse.roster import Entry

    roster = Roster.load()
    roster.add(Entry("gpt-3.5-turbo", "gpt-3.5", ROSTER.entries["gpt-3.5-turbo"].aliases))
    return roster


def test_a_roster_that_draws_the_strata_otherwise_is_refused_at_apply() -> None:
    """Planted: gpt-4 is as confident on gpt-3.5-turbo's answers (its family) as on an
    outsider's but right there only c - 0.3 of the time, so the family stratum cannot
    be certified at 0.8 and its items go to a person. Applied with a roster where
    gpt-3.5-turbo is an outsider, those items were read as 'other' and kept under the
    other stratum's threshold, without a word. The file now keeps whose answers each
    generator gave the judge, and apply refuses a roster that reads one otherwise."""
    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, family_drop=0.3, seed=3)
    o = Options(target=0.8, delta=0.1)
    spec = certify_judges(sim.pairs, ROSTER, o).thresholds()
    (judge,) = spec["judges"]
    # each id, and each other spelling the built-in roster has for it (roster.toml)
    assert judge["models"] == {"alpaca-13b": "other", "claude-v1": "other",
                               "gpt-3.5-turbo": "family", "gpt-4": "own",
                               "llama-13b": "other", "vicuna-13b": "other",
                               "GPT-4": "own", "gpt4": "own", "alpaca_eval_gpt4": "own",
                               "ChatGPT": "family", "gpt35_turbo": "family",
                               "gpt-35-turbo": "family", "gpt3.5-turbo": "family",
                               "claude": "other", "claude-1": "other",
                               "vicuna-13b-v1.2": "other"}  # fmt: skip
    other = judge["thresholds"]["other"]
    assert judge["thresholds"]["family"] is None and other is not None
    new = sim.pairs.drop(columns="human")
    family = sim.stratum == "family"
    # as certified: the family items go to a person
    right = apply_thresholds(new, spec, ROSTER, file="t.json")
    assert (right["decision"][family] == PERSON).all()
    # the file without 'models' (an earlier recuse's), another roster: the planted
    # family items are 'other' and kept at the other stratum's threshold
    old = {**spec, "judges": [{k: v for k, v in judge.items() if k != "models"}]}
    wrong = apply_thresholds(new, old, _family_apart(), file="t.json")
    moved = wrong[family & (wrong["decision"] != PERSON)]
    assert len(moved) > 100 and set(moved["stratum"]) == {"other"}
    assert (moved["threshold"] == other).all() and (moved["confidence"] >= other).all()
    assert sim.q[moved.index].mean() < 0.65  # planted: 0.59, under a guaranteed 0.8
    with pytest.raises(ConfigError) as err:
        apply_thresholds(new, spec, _family_apart(), file="t.json")
    assert str(err.value) == (
        "t.json was certified with another roster than this one: the strata "
        "(own/family/other) of judge 'gpt-4' are drawn otherwise — gpt-3.5-turbo: its "
        "family's there, an outsider's here; their items would be kept under a threshold "
        "certified for another stratum — give the roster it was certified with (the same "
        "recuse.toml [[model]] entries and --roster file), or certify again with this one"
    )


def test_a_generator_the_certification_never_saw_is_read_by_the_roster_with_a_note() -> None:
    """gpt-4o's answers were not among the calibration items: the file cannot say whose
    they are, so the roster given decides (gpt-4o is gpt-4's family in the built-in one)
    and a note says so; the decisions are those of the roster's strata."""
    from recuse.mitigation.selective import StrataUnchecked

    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, seed=3)
    spec = certify_judges(sim.pairs, ROSTER, Options(target=0.8, delta=0.1)).thresholds()
    new = sim.pairs.drop(columns="human")
    new["model_a"] = new["model_a"].replace({"gpt-3.5-turbo": "gpt-4o"})
    new["model_b"] = new["model_b"].replace({"gpt-3.5-turbo": "gpt-4o"})
    with pytest.warns(StrataUnchecked) as notes:
        decided = apply_thresholds(new, spec, ROSTER, file="t.json")
    (note,) = notes
    assert str(note.message) == (
        "t.json: the certification of 'gpt-4' saw no answers of gpt-4o (family): their "
        "items' strata are drawn by the roster given here, unchecked, and its guarantee "
        "assumes such items are exchangeable with the calibration items"
    )
    family = sim.stratum == "family"
    assert set(decided["stratum"][family & (decided["decision"] != PERSON)]) <= {"family"}
    lam = spec["judges"][0]["thresholds"]["family"]
    kept = decided[family & (decided["decision"] != PERSON)]
    assert lam is not None and (kept["threshold"] == lam).all() and len(kept) > 0


def test_a_roster_that_makes_a_certified_id_another_models_alias_is_refused() -> None:
    """Certified with a roster where acme-7b is its own model of gpt-4's family (the
    planted family stratum: right c - 0.3 of the time, not certified), applied with one
    where acme-7b is an alias of "acme", an outsider: the new items (read by that
    roster) name acme, which the file did not list, so the check passed them with a note
    that the certification "saw no answers of acme" and kept them under the other
    threshold (planted agreement about 0.59 under a certified 0.8). The file's ids are
    now read with the roster given: acme-7b is acme here, an outsider's, refused. An id
    hand-edited into another case reads as the same model."""
    from recuse.roster import Entry

    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, family_drop=0.3, seed=3)
    acme = {"gpt-3.5-turbo": "acme-7b"}
    pairs = sim.pairs.assign(model_a=sim.pairs["model_a"].replace(acme),
                             model_b=sim.pairs["model_b"].replace(acme))  # fmt: skip
    there = Roster.load()
    there.add(Entry("acme-7b", "gpt"))
    spec = certify_judges(pairs, there, Options(target=0.8, delta=0.1)).thresholds()
    (judge,) = spec["judges"]
    assert judge["models"]["acme-7b"] == "family" and judge["thresholds"]["family"] is None
    here = Roster.load()
    here.add(Entry("acme", "acme", ("acme-7b",)))
    new = pairs.drop(columns="human")  # read by that roster, as load_input reads it
    for side in ("model_a", "model_b"):
        new[side] = new[side].replace({"acme-7b": "acme"})
    family = sim.stratum == "family"
    old = {**spec, "judges": [{k: v for k, v in judge.items() if k != "models"}]}
    wrong = apply_thresholds(new, old, here, file="t.json")  # unchecked: what was kept
    moved = wrong[family & (wrong["decision"] != PERSON)]
    assert len(moved) > 100 and set(moved["stratum"]) == {"other"}
    assert sim.q[moved.index].mean() < 0.65
    with pytest.raises(ConfigError) as err:
        apply_thresholds(new, spec, here, file="t.json")
    assert ("of judge 'gpt-4' are drawn otherwise — acme-7b (read as acme here): its "
            "family's there, an outsider's here;") in str(err.value)  # fmt: skip
    # hand-edited into another case, the id is the same model to the roster: refused too
    models = {("ACME-7B " if m == "acme-7b" else m): v for m, v in judge["models"].items()}
    edited = {**spec, "judges": [{**judge, "models": models}]}
    with pytest.raises(ConfigError, match=r"ACME-7B  \(read as acme here\): its family's"):
        apply_thresholds(new, edited, here, file="t.json")
    # with the roster it was certified with, the family items go to a person
    right = apply_thresholds(pairs.drop(columns="human"), spec, there, file="t.json")
    assert (right["decision"][family] == PERSON).all()


def test_a_roster_that_makes_a_certified_alias_a_model_of_its_own_is_refused() -> None:
    """Certified with a roster where acme-7b is an alias of gpt-4-0613 (gpt-4's family:
    the planted family stratum, not certified), applied with one where acme-7b is a
    model of its own, an outsider: the new items name acme-7b, which the file did not
    list (it kept ids only), so the check noted a generator the certification "saw no
    answers of" and kept its family items under the other threshold. The file now keeps
    each id's other spellings too: acme-7b, gpt-4-0613's family answers there, an
    outsider's here, is refused."""
    from recuse.roster import Entry

    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, family_drop=0.3, seed=3)
    there = Roster.load()
    there.add(Entry("gpt-4-0613", "gpt", ("acme-7b",), line="gpt-4"))
    as_read = {"gpt-3.5-turbo": "gpt-4-0613"}  # acme-7b in the file, read by that roster
    pairs = sim.pairs.assign(model_a=sim.pairs["model_a"].replace(as_read),
                             model_b=sim.pairs["model_b"].replace(as_read))  # fmt: skip
    spec = certify_judges(pairs, there, Options(target=0.8, delta=0.1)).thresholds()
    (judge,) = spec["judges"]
    assert judge["models"]["gpt-4-0613"] == judge["models"]["acme-7b"] == "family"
    assert judge["thresholds"]["family"] is None
    here = Roster.load()
    here.add(Entry("acme-7b", "acme"))
    new = pairs.drop(columns="human").replace({"model_a": {"gpt-4-0613": "acme-7b"},
                                               "model_b": {"gpt-4-0613": "acme-7b"}})  # fmt: skip
    family = sim.stratum == "family"
    ids_only = {m: v for m, v in judge["models"].items() if m != "acme-7b"}
    old = {**spec, "judges": [{**judge, "models": ids_only}]}
    with pytest.warns(UserWarning, match=r"saw no answers of acme-7b \(other\)"):
        wrong = apply_thresholds(new, old, here, file="t.json")
    moved = wrong[family & (wrong["decision"] != PERSON)]
    assert len(moved) > 100 and set(moved["stratum"]) == {"other"}
    assert sim.q[moved.index].mean() < 0.65  # planted: about 0.59, under a certified 0.8
    with pytest.raises(ConfigError, match=r"acme-7b: its family's there, an outsider's here"):
        apply_thresholds(new, spec, here, file="t.json")
    right = apply_thresholds(pairs.drop(columns="human"), spec, there, file="t.json")
    assert (right["decision"][family] == PERSON).all()


@pytest.mark.parametrize("models", [["gpt-4"], {"gpt-4": "self"}, {"gpt-4": 1}, {"": "own"}])
def test_a_thresholds_files_malformed_models_are_refused(models: object) -> None:
    from recuse.mitigation.selective import read_thresholds

    spec = certify_judges(simulate_selective(300, seed=1).pairs, ROSTER,
                          Options(target=0.8)).thresholds()  # fmt: skip
    spec["judges"][0]["models"] = models
    with pytest.raises(InputError, match=r"t\.json.*judges\[0\]\.models must map each "
                       "generator id to own, family or other"):  # fmt: skip
        read_thresholds(spec, file="t.json")


@pytest.mark.parametrize("scope", ["snapshot", "line"])
def test_the_models_a_thresholds_file_keeps_decide_every_items_stratum(scope: str) -> None:
    """What the file keeps (whose answers each generator gives the judge) is all the
    stratum depends on: the strata drawn from it by hand (own: one side own, the other
    known and not; family: one side family, the other an outsider's) are strata_of's,
    over every pair of gpt-4's own snapshots, its family, outsiders and a missing model."""
    from itertools import product

    from recuse.mitigation.selective import models_of, strata_of

    names = ["gpt-4", "gpt-4-0613", "gpt-4-0314", "gpt-3.5-turbo", "gpt-4o", "claude-v1",
             "alpaca-13b", None]  # fmt: skip
    pairs = list(product(names, names))
    rows = pd.DataFrame({"judge": "gpt-4", "model_a": [a for a, _ in pairs],
                         "model_b": [b for _, b in pairs]})  # fmt: skip
    o = Options(self_scope=scope)
    whose = dict(models_of(rows, "gpt-4", ROSTER, o) or ())
    assert whose["gpt-4-0613"] == ("own" if scope == "line" else "family")

    def by_hand(a: str | None, b: str | None) -> str:
        wa, wb = whose.get(a or "", "?"), whose.get(b or "", "?")
        known = a is not None and b is not None
        if known and ("own" in (wa, wb)) and wa != wb:
            return "own"
        if known and {wa, wb} == {"family", "other"}:
            return "family"
        return "other"

    drawn = strata_of(rows, ROSTER, selves=ROSTER.self_map(scope))  # type: ignore[arg-type]
    assert list(drawn) == [by_hand(a, b) for a, b in pairs]


def test_the_guarantee_gives_the_judges_share_of_all_its_labelled_items() -> None:
    """A judge certified on one stratum only: 60 other-model items all agreeing (kept,
    100% of the stratum) and 40 own-answer items half wrong (none kept). certify's table
    shows the strata's 100% and 0%; its line said only 'on the items it keeps (other c ≥
    0.9)', while `recuse gate --certified` and the audit read 60 of 100, 60.0%."""
    other = _table(60, judge="gpt-4", model_a="claude-v1", model_b="vicuna-13b")
    own = _table(40, judge="gpt-4", agree=20, model_a="gpt-4", model_b="vicuna-13b", start=60)
    result = certify_judges(pd.concat([other, own]), ROSTER, Options(target=0.8, delta=0.1))
    (k,) = result.judges
    assert {s.stratum: s.coverage for s in k.strata} == {"own": 0.0, "other": 1.0}
    assert "(other c ≥ 0.9: 60 of its 100 labelled items, 60.0%)" in k.guarantee()
