"""The familiarity-weighted ensemble: weights by hand, and less self-preference on planted data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.familiarity import familiarity_bias
from recuse.metrics.position import first_position_rate, position_consistency
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import self_preference
from recuse.mitigation.familiarity_ensemble import (
    ENSEMBLE_COLUMNS,
    SELF_PREFERENCE_COLUMNS,
    agreement_difference,
    column_words,
    compare_ensembles,
    compare_self_preference,
    familiarity_weighted_ensemble,
    familiarity_weights,
    human_agreement,
    self_preference_difference,
    with_member_perplexities,
)
from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity
from recuse.tables import validate_pairs


def _two_judges() -> pd.DataFrame:
    # judge j finds item x familiar (low ppl), k finds both items alike
    return validate_pairs(
        pd.DataFrame(
            {
                "item_id": ["x", "y", "x", "y"],
                "prompt_id": ["p", "q", "p", "q"],
                "model_a": "m",
                "model_b": "n",
                "human": [1, 0, 1, 0],
                "judge": ["j", "j", "k", "k"],
                "p_a_first": [1.0, 0.0, 0.0, 1.0],
                "p_a_second": [1.0, np.nan, 0.0, 0.5],
                "p_a": np.nan,
                "ppl_a": [np.e**1, np.e**3, np.e**2, np.e**2],
                "ppl_b": [np.e**4, np.e**4, np.e**4, np.e**4],
            }
        )
    )


def test_weights_by_hand() -> None:
    t = _two_judges()
    w = familiarity_weights(t, tau=1.0)
    # j: f = min log ppl = 1 (x), 3 (y); z = -1/sqrt(2), +1/sqrt(2). k: f = 2, 2 -> z = 0
    zx = -1 / np.sqrt(2)
    assert w.loc["x", "j"] == pytest.approx(np.exp(zx) / (np.exp(zx) + 1))
    assert w.loc["y", "j"] == pytest.approx(np.exp(-zx) / (np.exp(-zx) + 1))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    plain = familiarity_weights(t, tau=0.0)
    np.testing.assert_allclose(plain.to_numpy(), 0.5)


def test_ensemble_verdicts_by_hand() -> None:
    t = _two_judges()
    e = familiarity_weighted_ensemble(t, tau=1.0, name="ens").set_index("item_id")
    w = familiarity_weights(t, tau=1.0)
    assert e.loc["x", "p_a_first"] == pytest.approx(w.loc["x", "j"] * 1.0)
    # y, second order: only k judged it -> its verdict alone
    assert e.loc["y", "p_a_second"] == pytest.approx(0.5)
    assert e.loc["y", "p_a_first"] == pytest.approx(w.loc["y", "k"])
    assert (e["judge"] == "ens").all() and e["human"].tolist() == [1.0, 0.0]
    plain = familiarity_weighted_ensemble(t, tau=0.0).set_index("item_id")
    assert plain.loc["x", "p_a"] == pytest.approx(0.5)


def test_member_without_perplexity_is_left_out() -> None:
    t = _two_judges()
    t.loc[0, "ppl_a"] = np.nan  # j on x
    e = familiarity_weighted_ensemble(t, tau=1.0).set_index("item_id")
    assert e.attrs["left_out"] == 1
    assert e.loc["x", "p_a_first"] == pytest.approx(0.0)  # k's verdict only


def test_bad_options() -> None:
    t = _two_judges()
    with pytest.raises(ConfigError, match="tau"):
        familiarity_weights(t, tau=-1)
    with pytest.raises(ConfigError, match="two judges"):
        familiarity_weights(t, judges=["j"])
    with pytest.raises(InputError, match="ppl_a"):
        familiarity_weights(t.drop(columns=["ppl_a"]))


def test_weighted_ensemble_reduces_planted_self_preference() -> None:
    """Self-preference that arises only through perplexity: the weighted ensemble has less."""
    judges = {
        m: PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.6, agreement=0.6, noise_sd=0.2)
        for m in ("m1", "m2", "m3")
    }
    sim = simulate_familiarity(judges, n_prompts=300, verdicts="prob", seed=1)
    table, skipped = compare_self_preference(sim.pairs, tau=2.0, boot=Resampling(n_boot=300))
    assert not skipped
    est = table.pivot(index="member", columns="evaluator", values="estimate")
    assert (est["single"] > 0.3).all()
    assert (est["plain"] < est["single"]).all()
    assert (est["weighted"] < est["plain"]).all()
    assert set(table["metric"]) == {"self_preference_eo", "self_preference_eo_difference"}
    # the paired differences equal the differences of the separate estimates (same
    # items), and the weighting's reduction is clear of zero for every member
    for a, b in (("weighted", "plain"), ("weighted", "single"), ("plain", "single")):
        assert np.allclose(est[f"{a} - {b}"], est[a] - est[b], atol=1e-12)
    high = table.pivot(index="member", columns="evaluator", values="ci_high")
    assert (high["weighted - plain"] < 0).all() and (high["plain - single"] < 0).all()
    # the paired interval is narrower than the two separate ones put together
    low = table.pivot(index="member", columns="evaluator", values="ci_low")
    paired = high["weighted - plain"] - low["weighted - plain"]
    assert (paired < (high["weighted"] - low["weighted"]) + (high["plain"] - low["plain"])).all()


def test_self_preference_difference_by_hand() -> None:
    """Two members' verdicts on pairs holding m's own response (a; six pairs three times
    over, so the bootstrap has prompts to resample), hand-computed EO."""
    base = validate_pairs(
        pd.DataFrame(
            {
                "item_id": [f"i{k}" for k in range(18)],
                "prompt_id": [f"p{k}" for k in range(18)],
                "model_a": "m",
                "model_b": "n",
                "human": [1, 1, 1, 0, 0, 0.5] * 3,
                "judge": "m",
                "p_a_first": [0.9, 0.8, 0.4, 0.7, 0.2, 0.9] * 3,
                "p_a_second": np.nan,
                "p_a": np.nan,
            }
        )
    )
    other = validate_pairs(
        base.assign(judge="k", p_a_first=[0.6, 0.5, 0.4, 0.3, 0.1, 0.0] * 3, p_a=np.nan)
    )
    r = self_preference_difference(
        other, base.iloc[::-1], judge="m", min_n=1, boot=Resampling(n_boot=100)
    )
    # k: recall own (0.6+0.5+0.4)/3, other (0.7+0.9)/2; m: (0.9+0.8+0.4)/3, (0.3+0.8)/2
    eo_k = (0.6 + 0.5 + 0.4) / 3 - (0.7 + 0.9) / 2
    eo_m = (0.9 + 0.8 + 0.4) / 3 - (0.3 + 0.8) / 2
    assert r.estimate == pytest.approx(eo_k - eo_m)
    assert r.n == 15  # the human ties are left out
    assert r.components["recall_own_difference"] == pytest.approx((1.5 - 2.1) / 3)
    with pytest.raises(InputError, match="item 'i0' more than once"):
        self_preference_difference(pd.concat([other, other.head(1)]), base, judge="m")


# --- evaluation without the members' own responses ------------------------------------


def _labelled(p_a: list[float], human: list[float], judge: str = "j") -> pd.DataFrame:
    n = len(p_a)
    return validate_pairs(
        pd.DataFrame(
            {
                "item_id": [f"i{k}" for k in range(n)],
                "prompt_id": [f"p{k // 2}" for k in range(n)],
                "model_a": "m",
                "model_b": "n",
                "human": human,
                "judge": judge,
                "p_a_first": p_a,
                "p_a_second": np.nan,
                "p_a": np.nan,
            }
        )
    )


def test_human_agreement_by_hand() -> None:
    t = _labelled([0.9, 0.4, 0.2, 1.0, 0.7, 0.5], [1, 1, 0, 0.5, 0, 1])
    r = human_agreement(t, min_n=1, boot=Resampling(n_boot=100))
    # human prefers a: 0.9, 0.4, 0.5; prefers b: 1 - 0.2, 1 - 0.7; the tie is left out
    assert r.estimate == pytest.approx((0.9 + 0.4 + 0.5 + 0.8 + 0.3) / 5)
    assert r.n == 5 and r.n_clusters == 3
    assert r.components["agreement_human_prefers_a"] == pytest.approx(1.8 / 3)
    assert r.components["agreement_human_prefers_b"] == pytest.approx(1.1 / 2)
    assert r.ci_low <= r.estimate <= r.ci_high
    assert not r.signed and r.to_dict()["signed"] is False  # a share: no '+'
    # its reference is chance, as agreement_accuracy's: the p-value tests against 0.5
    assert r.null == 0.5 and r.to_dict()["null"] == 0.5
    near = human_agreement(_labelled([0.5] * 6, [1, 1, 0, 0, 1, 0]), min_n=1,
                           boot=Resampling(n_boot=100))  # fmt: skip
    assert near.estimate == pytest.approx(0.5) and near.p_value == pytest.approx(1.0)
    pick = human_agreement(t, verdict="pick", min_n=1, boot=Resampling(n_boot=100))
    assert pick.estimate == pytest.approx((1 + 0 + 0.5 + 1 + 0) / 5)
    split = human_agreement(t, human_ties="split", min_n=1, boot=Resampling(n_boot=100))
    assert split.estimate == pytest.approx((0.9 + 0.4 + 0.5 + 0.8 + 0.3 + 0.5) / 6)


def test_human_agreement_matches_numpy_on_simulated_verdicts() -> None:
    rng = np.random.default_rng(5)
    human = rng.integers(0, 2, 400).astype(float)
    p = np.where(human == 1, 0.7, 0.3) + rng.uniform(-0.25, 0.25, 400)  # inside [0, 1]
    r = human_agreement(_labelled(p.tolist(), human.tolist()), boot=Resampling(n_boot=200))
    expected = np.mean(np.where(human == 1, p, 1 - p))
    assert r.estimate == pytest.approx(expected)
    assert r.covers(0.7)  # the planted expected accuracy


def test_agreement_difference_is_paired() -> None:
    rng = np.random.default_rng(2)
    human = rng.integers(0, 2, 300).astype(float)
    base = np.where(human == 1, 0.65, 0.35) + rng.normal(0, 0.25, 300)
    good = _labelled(np.clip(base + np.where(human == 1, 0.05, -0.05), 0, 1).tolist(),
                     human.tolist(), "good")  # fmt: skip
    ref = _labelled(np.clip(base, 0, 1).tolist(), human.tolist(), "ref")
    both = pd.concat([good, ref], ignore_index=True)
    d = agreement_difference(both, "good", "ref", boot=Resampling(n_boot=300))
    a_good = human_agreement(both, judge="good", boot=Resampling(n_boot=300)).estimate
    a_ref = human_agreement(both, judge="ref", boot=Resampling(n_boot=300)).estimate
    assert d.estimate == pytest.approx(a_good - a_ref)
    assert d.judge == "good" and d.n == 300
    assert 0 < d.ci_low  # paired: the small shift is resolved
    same = agreement_difference(
        pd.concat([ref, ref.assign(judge="copy")], ignore_index=True),
        "copy",
        "ref",
        boot=Resampling(n_boot=100),
    )
    assert (same.estimate, same.ci_low, same.ci_high) == (0.0, 0.0, 0.0)
    with pytest.raises(ConfigError, match="different"):
        agreement_difference(both, "ref", "ref")


def test_with_member_perplexities() -> None:
    t = _two_judges()
    e = familiarity_weighted_ensemble(t, tau=1.0, name="ens")
    withk = with_member_perplexities(e, t, "k").set_index("item_id")
    assert withk.loc["x", "ppl_a"] == pytest.approx(np.e**2)
    assert withk.loc["y", "ppl_b"] == pytest.approx(np.e**4)
    with pytest.raises(ConfigError, match="not in the table"):
        with_member_perplexities(e, t, "nobody")
    with pytest.raises(InputError, match="ppl_b"):
        with_member_perplexities(e, t.drop(columns=["ppl_b"]), "k")


def test_compare_ensembles_on_planted_familiarity() -> None:
    """One member follows its own perplexities, the other does not: weighting removes some."""
    judges = {
        "fam": PlantedFamiliarity(judge_slope=-3.0, agreement=0.3, noise_sd=0.3),
        "calm": PlantedFamiliarity(judge_slope=0.0, agreement=0.6, noise_sd=0.3),
    }
    sim = simulate_familiarity(judges, n_prompts=300, verdicts="prob", seed=4)
    frame, skipped = compare_ensembles(sim.pairs, taus=(2.0,), boot=Resampling(n_boot=300))
    assert not skipped
    assert frame.attrs["items"] == len(sim.pairs) // 2 and frame.attrs["items_dropped"] == 0
    fb = frame[(frame["metric"] == "familiarity_bias") & (frame["perplexity_of"] == "fam")]
    est = fb.set_index("evaluator")["estimate"]
    # planted: human slope 0, fam's slope -3 -> familiarity_bias 3 for fam alone
    assert (
        fb.set_index("evaluator").loc["fam", "ci_low"]
        < 3.0
        < fb.set_index("evaluator").loc["fam", "ci_high"]
    )
    assert est["fam"] > est["ensemble(tau=0)"] > est["ensemble(tau=2)"] > est["calm"] - 0.5
    w = frame.attrs["mean_weights"]
    assert w["ensemble(tau=0)"]["fam"] == pytest.approx(0.5)
    acc = frame[frame["metric"] == "human_agreement"].set_index("evaluator")["estimate"]
    assert acc["calm"] > acc["fam"]
    diff = frame[frame["metric"] == "human_agreement_difference"]
    assert set(diff["evaluator"]) == {"fam", "calm", "ensemble(tau=2)"}
    assert set(frame["kind"]) == {"single", "plain", "weighted"}
    pos = frame[frame["metric"] == "position_consistency"]
    assert len(pos) == 4  # both orders carry the same verdict in this simulation
    assert (pos["estimate"] == 1.0).all()


def test_compare_ensembles_uses_common_items_and_refuses_bad_taus() -> None:
    t = _two_judges()
    t.loc[0, "ppl_a"] = np.nan  # j on x: x is not common
    frame, skipped = compare_ensembles(t, boot=Resampling(n_boot=50), min_n=1, min_n_slope=1)
    assert frame.attrs["items"] == 1 and frame.attrs["items_dropped"] == 1
    assert any("familiarity_bias" in s.metric for s in skipped)  # one item: no slope
    with pytest.raises(ConfigError, match="taus"):
        compare_ensembles(t, taus=(0.0,))
    t.loc[3, "ppl_a"] = np.nan  # k on y: no common item left
    with pytest.raises(EstimationError, match="every member"):
        compare_ensembles(t)


def test_compare_self_preference_without_own_responses_skips_with_reason() -> None:
    t = _two_judges()  # judges j, k never wrote m's or n's responses
    frame, skipped = compare_self_preference(t, boot=Resampling(n_boot=50), min_n=1)
    assert frame.empty
    assert {(s.judge, s.metric) for s in skipped} == {
        (j, f"self_preference_eo[{e}]") for j in ("j", "k") for e in ("single", "plain", "weighted")
    }
    assert all(s.reason for s in skipped)


def test_self_preference_of_the_ensembles_is_the_planted_value() -> None:
    """Self-preference only through familiarity, human labels independent of the judges
    (agreement 0): Bias_EO toward m1 is then 2·E[verdict for m1's answer] − 1, worked out
    here from the planted P(picks a) = expit(−2·d_k) of every member and weights made by
    hand (z of the lower log-perplexity within a member, softmax of τ·z) — not from the
    drawn verdicts. Over 100 tables of 200 prompts (agreement 0.6, against a 15,000-prompt
    table) the means matched within 1.5 SE: single +0.433, plain +0.087, weighted (τ=2)
    +0.034, weighted − plain −0.053, covered by 85–90% of the 90% intervals."""
    planted = PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.6, agreement=0.0, noise_sd=0.2)
    members = ("m1", "m2", "m3")
    t = simulate_familiarity(
        dict.fromkeys(members, planted), n_prompts=400, verdicts="prob", seed=3
    ).pairs
    table, _ = compare_self_preference(t, tau=2.0, boot=Resampling(n_boot=200))
    est = table[table["member"] == "m1"].set_index("evaluator")
    own = t[t["judge"] == "m1"]
    own_is_a = (own["model_a"] == "m1").to_numpy()
    keep = own_is_a | (own["model_b"] == "m1").to_numpy()
    p_own, f = [], []
    for k in members:
        r = t[t["judge"] == k]
        la, lb = np.log(r["ppl_a"].to_numpy()), np.log(r["ppl_b"].to_numpy())
        p_a = 1 / (1 + np.exp(2.0 * (la - lb)))
        p_own.append(np.where(own_is_a, p_a, 1 - p_a)[keep])
        low = np.minimum(la, lb)
        f.append(((low - low.mean()) / low.std(ddof=1))[keep])
    w = np.exp(2.0 * np.array(f))
    w /= w.sum(axis=0)
    truth = {
        "single": 2 * p_own[0].mean() - 1,
        "plain": 2 * np.mean(p_own) - 1,
        "weighted": 2 * (w * np.array(p_own)).sum(axis=0).mean() - 1,
    }
    truth["weighted - plain"] = truth["weighted"] - truth["plain"]
    assert truth["weighted - plain"] < -0.04  # the weighting removes part of it
    for evaluator, value in truth.items():
        row = est.loc[evaluator]
        assert row["ci_low"] < value < row["ci_high"], evaluator
        assert row["estimate"] == pytest.approx(value, abs=0.04 if "-" not in evaluator else 0.015)


#: what a comparison row says beside its numbers, each from the result that computed it
SAID = ("definition", "null", "null_bound", "signed", "absolute_value", "warnings", "notes")


def _said(r: MetricResult) -> dict[str, object]:
    d = r.to_dict()
    return {
        **{k: d[k] for k in SAID[1:5]},
        "definition": r.method.split("; ", 1)[0],
        "warnings": "; ".join(r.warnings),
        "notes": "; ".join(r.notes),
    }


def _row_says(row: pd.Series, r: MetricResult) -> None:
    assert row["estimate"] == pytest.approx(r.estimate, abs=1e-12)
    got = {k: (None if k == "null_bound" and pd.isna(row[k]) else row[k]) for k in SAID}
    assert got == _said(r)


def test_self_preference_rows_say_what_their_results_say() -> None:
    """Each row of compare_self_preference carries its result's definition, no-bias
    value and warnings, read from the estimator called on its own (the table had the
    numbers only), and every column has its words."""
    planted = PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.6, agreement=0.6, noise_sd=0.2)
    members = ["m1", "m2", "m3"]
    t = simulate_familiarity(
        dict.fromkeys(members, planted), n_prompts=12, verdicts="prob", seed=3
    ).pairs
    boot = Resampling(n_boot=50)
    table, _ = compare_self_preference(t, tau=1.0, boot=boot, min_n=1)
    rows = table[table["member"] == "m1"].set_index("evaluator")
    single = t[t["judge"] == "m1"]
    alone = self_preference(single, judge="m1", boot=boot, min_n=1)
    _row_says(rows.loc["single"], alone)
    assert alone.null == 0.0 and "Def. 4.1" in alone.definition
    assert alone.warnings and rows.loc["single", "warnings"].startswith("low n")
    plain = familiarity_weighted_ensemble(t, judges=members, tau=0.0, name="plain")
    diff = self_preference_difference(plain, single, judge="m1", boot=boot, min_n=1)
    _row_says(rows.loc["plain - single"], diff)
    assert "paired difference" in rows.loc["plain - single", "definition"]
    words = column_words(table, SELF_PREFERENCE_COLUMNS)
    assert list(words) == list(table.columns) and all(words.values())
    assert set(SAID) <= set(words)


def test_ensemble_rows_say_what_their_results_say() -> None:
    """Each metric of compare_ensembles, row by row against its estimator called on its
    own: the agreement's no-bias value is 0.5 (a judge that always says 50/50), the
    agreement difference's and the familiarity bias's 0, the position consistency's 1
    (its ceiling), the first-position rate's 0.5."""
    judges = {
        "fam": PlantedFamiliarity(judge_slope=-3.0, agreement=0.3, noise_sd=0.3),
        "calm": PlantedFamiliarity(judge_slope=0.0, agreement=0.6, noise_sd=0.3),
    }
    t = simulate_familiarity(judges, n_prompts=12, verdicts="prob", seed=4).pairs
    # a slot preference on every other prompt, so the position metrics measure something
    shifted = t["prompt_id"].astype(str).str[-1].isin(list("13579"))
    t = validate_pairs(
        t.assign(p_a_second=t["p_a_second"] * np.where(shifted, 0.7, 1.0), p_a=np.nan)
    )
    boot = Resampling(n_boot=50)
    frame, skipped = compare_ensembles(t, taus=(1.0,), boot=boot, min_n=1, min_n_slope=5)
    assert not skipped
    row = frame.set_index(["evaluator", "metric", frame["perplexity_of"].fillna("")]).loc
    fam = t[t["judge"] == "fam"]
    expected = {
        "human_agreement": (human_agreement(fam, boot=boot, min_n=1), 0.5),
        "position_consistency": (position_consistency(fam, boot=boot, min_n=1), 1.0),
        "first_position_rate": (first_position_rate(fam, boot=boot, min_n=1), 0.5),
    }
    for metric, (r, null) in expected.items():
        _row_says(row[("fam", metric, "")], r)
        assert r.null == null, metric
    ens = familiarity_weighted_ensemble(t, tau=1.0, name="ensemble(tau=1)")
    plain = familiarity_weighted_ensemble(t, tau=0.0, name="ensemble(tau=0)")
    both = pd.concat([ens, plain], ignore_index=True)
    diff = agreement_difference(both, "ensemble(tau=1)", "ensemble(tau=0)", boot=boot, min_n=1)
    _row_says(row[("ensemble(tau=1)", "human_agreement_difference", "")], diff)
    assert diff.null == 0.0
    fb = familiarity_bias(with_member_perplexities(ens, t, "calm"), boot=boot, min_n=5)
    _row_says(row[("ensemble(tau=1)", "familiarity_bias", "calm")], fb)
    assert fb.null == 0.0
    assert frame.loc[frame["metric"] == "human_agreement", "null"].eq(0.5).all()
    words = column_words(frame, ENSEMBLE_COLUMNS)
    assert list(words) == list(frame.columns) and all(words.values())
