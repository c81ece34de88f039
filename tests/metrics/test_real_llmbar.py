"""Pinned values on real data: LLMBar's MT-Bench set (200 human-labelled pairs, both orders).

Judges GPT-4 and ChatGPT (gpt-3.5-turbo) against their own models' MT-Bench answers,
whose generators the reader recovers by exact text match. The confusion-matrix cells
are also counted straight from the table with pandas, as a check that does not use
the metric code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recuse.data
from recuse.errors import EstimationError
from recuse.metrics import (
    confusion_matrix,
    family_preference,
    first_position_rate,
    flip_rate,
    pairwise_bias,
    position_consistency,
    self_preference,
    verbosity_bias,
)
from recuse.metrics.bootstrap import Resampling
from recuse.roster import Roster

# judge -> metric -> (estimate, ci_low, ci_high, n); 90 % BCa intervals, 2000 resamples, seed 0
#: gpt-4's position rates' intervals: BCa widened by t_{ν−1}/z on the prompts' effective
#: number (estimate.moved_span: at most half its 75 prompts change with the order);
#: gpt-3.5's, most of whose prompts change, the BCa's expanded for its 75 prompts (as are
#: both judges' DP self-preference and verbosity: Hesterberg's √(G/(G−1)) t_{G−1})
PINNED = {
    "gpt-4": {
        "self_eo": (39.5 / 43 - 3.5 / 8, 0.2191, 0.7149, 51),
        # DP as a difference: the judge picks its own in 44 of 51 pairs, humans in 43
        "self_dp": (44 / 51 - 43 / 51, -0.0606, 0.1000, 51),
        "family_eo": (36.5 / 40 - 9 / 18, 0.2344, 0.5925, 58),
        "verbosity": (0.205469, 0.0940, 0.3264, 195),
        "consistency": (174 / 200, 0.8175, 0.9108, 200),
        "flip": (26 / 200, 0.0892, 0.1825, 200),
        "first": (0.51, 0.4806, 0.5380, 200),
    },
    "gpt-3.5-turbo": {
        "self_eo": (30.5 / 43 - 12 / 24, 0.0726, 0.3389, 67),
        # humans prefer gpt-3.5's answer slightly more often (43 / 67) than it does
        "self_dp": (42.5 / 67 - 43 / 67, -0.1161, 0.1139, 67),
        "family_eo": (28 / 37 - 2 / 5, 0.2167, 0.6348, 42),
        "verbosity": (0.182224, 0.0635, 0.3041, 195),
        "consistency": (115 / 200, 0.5027, 0.6404, 200),
        "flip": (85 / 200, 0.3596, 0.4973, 200),
        "first": (0.7025, 0.6667, 0.7384, 200),
    },
}
CELLS = {"gpt-4": (39.5, 3.5, 4.5, 3.5), "gpt-3.5-turbo": (30.5, 12.5, 12.0, 12.0)}


@pytest.fixture(scope="module")
def pairs(shared_data: Path) -> pd.DataFrame:
    return recuse.data.load("llmbar-mtbench", data_dir=shared_data)


def _cells_by_pandas(pairs: pd.DataFrame, judge: str) -> tuple[float, float, float, float]:
    d = pairs[pairs["judge"] == judge]
    d = d[(d["model_a"] == judge) ^ (d["model_b"] == judge)]
    d = d[d["model_a"].notna() & d["model_b"].notna() & d["p_a"].notna()]
    own_a = d["model_a"] == judge
    p_own = np.where(own_a, d["p_a"], 1 - d["p_a"])
    pick = np.where(p_own > 0.5, 1.0, np.where(p_own < 0.5, 0.0, 0.5))
    human_own = np.where(own_a, d["human"], 1 - d["human"]) > 0.5
    return (
        float(pick[human_own].sum()),
        float((1 - pick[human_own]).sum()),
        float(pick[~human_own].sum()),
        float((1 - pick[~human_own]).sum()),
    )


def test_the_data_is_what_the_test_expects(pairs: pd.DataFrame) -> None:
    counts = pairs["judge"].value_counts()
    assert counts["gpt-4"] == 200 and counts["gpt-3.5-turbo"] == 200
    assert pairs["prompt_id"].nunique() == 75
    assert set(pairs["human"].unique()) == {0.0, 1.0}  # ties removed upstream


@pytest.mark.parametrize("judge", ["gpt-4", "gpt-3.5-turbo"])
def test_confusion_matrix(pairs: pd.DataFrame, judge: str) -> None:
    m = confusion_matrix(pairs, judge=judge)
    cells = (m.own_own, m.own_other, m.other_own, m.other_other)
    assert cells == CELLS[judge]
    assert cells == _cells_by_pandas(pairs, judge)


@pytest.mark.parametrize("judge", ["gpt-4", "gpt-3.5-turbo"])
def test_pinned_values(pairs: pd.DataFrame, judge: str) -> None:
    roster = Roster.builtin()
    got = {
        "self_eo": self_preference(pairs, judge=judge, min_n=5),
        "self_dp": self_preference(pairs, judge=judge, kind="dp", min_n=5),
        "family_eo": family_preference(pairs, roster, judge=judge, min_n=5),
        "verbosity": verbosity_bias(pairs, judge=judge),
        "consistency": position_consistency(pairs, judge=judge),
        "flip": flip_rate(pairs, judge=judge),
        "first": first_position_rate(pairs, judge=judge),
    }
    for name, r in got.items():
        est, lo, hi, n = PINNED[judge][name]
        assert r.estimate == pytest.approx(est, abs=1e-6), name
        assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), abs=5e-4), name
        assert r.n == n, name
    # with verdict-only judges, probabilities and picks agree
    pick = self_preference(pairs, judge=judge, verdict="pick", min_n=5)
    assert pick.estimate == got["self_eo"].estimate


def test_gpt4_eo_is_estimated_at_the_default_group_size_with_a_low_n_mark(
    pairs: pd.DataFrame,
) -> None:
    """The paper's headline case: 43 / 8 pairs. min_n 5 estimates it, marked as low n."""
    r = self_preference(pairs, judge="gpt-4")
    assert r.estimate == pytest.approx(39.5 / 43 - 3.5 / 8)
    assert r.ci_low < r.estimate < r.ci_high
    assert [w for w in r.warnings if w.startswith("low n")] == [
        "low n: only 8 pairs where the human prefers the other response (under 10); "
        "the interval is likely too narrow — read it as rough"
    ]
    assert "BCa" in r.method
    # a stricter min_n still refuses it, naming the small group
    with pytest.raises(EstimationError, match="only 8 pairs where the human prefers the other"):
        self_preference(pairs, judge="gpt-4", min_n=10)


def test_summary_matches(pairs: pd.DataFrame) -> None:
    res = pairwise_bias(pairs, Roster.builtin(), judges=["gpt-4", "gpt-3.5-turbo"], min_n=5)
    assert res.get("self_preference_eo", "gpt-4").estimate == pytest.approx(
        PINNED["gpt-4"]["self_eo"][0]
    )
    assert res.get("flip_rate", "gpt-3.5-turbo").estimate == pytest.approx(0.425)
    # the ChatGPT family EO has only 5 pairs on one side: refused at min_n=10, kept at 5
    assert res.get("family_preference_eo", "gpt-3.5-turbo").n == 42


def test_ladder_splits_gpt35_harmful_rung_by_order(pairs: pd.DataFrame) -> None:
    """GPT-3.5's 'harmful 0.50' over its 24 own-worse pairs: 4 own in both orders, 16
    splits, 4 other in both — counted per order with pandas, then by the ladder."""
    from recuse.metrics.ladder import self_preference_ladder

    d = pairs[(pairs["judge"] == "gpt-3.5-turbo")]
    d = d[((d["model_a"] == "gpt-3.5-turbo") ^ (d["model_b"] == "gpt-3.5-turbo"))]
    own_a = (d["model_a"] == "gpt-3.5-turbo").to_numpy()
    human_own = np.where(own_a, d["human"], 1 - d["human"])
    first = np.where(own_a, d["p_a_first"], 1 - d["p_a_first"])[human_own < 0.5]
    second = np.where(own_a, d["p_a_second"], 1 - d["p_a_second"])[human_own < 0.5]
    both_own = int(((first > 0.5) & (second > 0.5)).sum())
    both_other = int(((first < 0.5) & (second < 0.5)).sum())
    assert (len(first), both_own, both_other) == (24, 4, 4)
    results, _ = self_preference_ladder(pairs, judges="gpt-3.5-turbo", boot=Resampling(n_boot=200))
    got = {r.metric: r.estimate for r in results}
    assert got["harmful"] == pytest.approx(0.5)
    assert got["harmful_own_both"] == pytest.approx(4 / 24)
    assert got["harmful_split"] == pytest.approx(16 / 24)
    assert got["harmful_other_both"] == pytest.approx(4 / 24)
    # docs/statistics.md reads the rung from these counts
    page = Path(__file__).parents[2] / "docs" / "statistics.md"
    text = " ".join(page.read_text("utf-8").split())
    n = len(first)
    parts = [round(got[k] * n) for k in ("harmful_own_both", "harmful_split", "harmful_other_both")]
    assert (f"GPT-3.5's \"harmful {got['harmful']:.2f}\" is {parts[0]} of its {n} own-worse "
            f"pairs chosen in both orders, {parts[1]} splits and {parts[2]} the other in both"
            ) in text  # fmt: skip


@pytest.mark.parametrize(
    ("judge", "own_picks", "estimate", "ci"),
    [
        ("gpt-4", 44 / 51, -0.0462, (-0.113, 0.058)),
        ("gpt-3.5-turbo", 42.5 / 67, 0.0135, (-0.097, 0.122)),
    ],
)
def test_calibrated_self_preference_on_real_data(
    pairs: pd.DataFrame, judge: str, own_picks: float, estimate: float, ci: tuple[float, float]
) -> None:
    """EO's +0.48 (GPT-4) and +0.21 (GPT-3.5) do not survive calibration to the judge's
    competence: both intervals hold 0. The own-pick rate is counted by hand (CELLS)."""
    from recuse.metrics.competence import calibrated_self_preference

    # one κ, the gap-only competence (GPT-4 sits at the ceiling, where the default adds the
    # label term: test_gpt4_at_its_ceiling_is_conditioned_on_the_label)
    r = calibrated_self_preference(pairs, judge=judge, stratum=None, label=False)
    assert r.components["own_pick_rate"] == pytest.approx(own_picks)
    assert r.estimate == pytest.approx(estimate, abs=5e-4)
    assert (r.ci_low, r.ci_high) == pytest.approx(ci, abs=2e-3)
    assert r.ci_low < 0 < r.ci_high


def test_the_category_term_on_real_data_equals_a_statsmodels_fit(pairs: pd.DataFrame) -> None:
    """MT-Bench's categories: humanities and roleplay have 20+ pairs without GPT-4's own
    answer for every judge, the other six share one κ. The estimate is a plain logit with
    that design (strengths from the labels), refitted here with statsmodels."""
    import statsmodels.api as sm
    from scipy import special

    from recuse.metrics.competence import calibrated_self_preference, label_strengths
    from recuse.metrics.self_preference import favored_side

    r = calibrated_self_preference(pairs, judge="gpt-4", label=False)
    assert "κ_c for humanities, roleplay; coding, extraction" in r.method
    assert any("near its ceiling" in w for w in r.warnings)
    d = pairs[pairs["judge"] == "gpt-4"]
    d = d[d["model_a"].notna() & d["model_b"].notna() & (d["model_a"] != d["model_b"])]
    s = label_strengths(pairs[pairs["judge"] == "gpt-4"])
    d = d[d["model_a"].isin(list(s)) & d["model_b"].isin(list(s))].reset_index(drop=True)
    side = favored_side(d).astype(float)
    g = d["model_a"].map(s).to_numpy() - d["model_b"].map(s).to_numpy()
    cols = [g * (d["category"] == c).to_numpy(float) for c in ("humanities", "roleplay")]
    cols.append(g * (~d["category"].isin(["humanities", "roleplay"])).to_numpy(float))
    ok1, ok2 = d["p_a_first"].notna().to_numpy(), d["p_a_second"].notna().to_numpy()
    w = 1.0 / (ok1.astype(float) + ok2.astype(float))
    x, y, ww = [], [], []
    for ok, col, first in ((ok1, "p_a_first", 1.0), (ok2, "p_a_second", -1.0)):
        x.append(np.column_stack([c[ok] for c in cols] + [np.full(ok.sum(), first), side[ok]]))
        y.append(d[col].to_numpy(float)[ok])
        ww.append(w[ok])
    xx, yy, wt = np.vstack(x), np.concatenate(y), np.concatenate(ww)
    fit = sm.GLM(yy, xx, family=sm.families.Binomial(), var_weights=wt).fit()
    own = xx[:, -1] != 0
    p0 = special.expit(xx[:, :-1] @ fit.params[:-1])
    observed = (np.where(xx[:, -1] > 0, yy, 1 - yy) * wt)[own].sum() / wt[own].sum()
    predicted = (np.where(xx[:, -1] > 0, p0, 1 - p0) * wt)[own].sum() / wt[own].sum()
    assert r.estimate == pytest.approx(observed - predicted, abs=1e-6)
    assert r.estimate == pytest.approx(-0.0415, abs=5e-4)


def test_gpt4_at_its_ceiling_is_conditioned_on_the_label(pairs: pd.DataFrame) -> None:
    """GPT-4 is predicted to pick its own answer above the ceiling (the warning above), so
    by default its competence is conditioned on each pair's human label: no ceiling
    warning, the method says so, and the headline moves by less than 0.005 (−0.046 to
    −0.046 with one κ; the interval still holds 0)."""
    from recuse.metrics.competence import calibrated_self_preference

    gap_only = calibrated_self_preference(pairs, judge="gpt-4", stratum=None, label=False)
    r = calibrated_self_preference(pairs, judge="gpt-4", stratum=None)
    assert "conditioned on each pair's human label" in r.method
    assert not any("near its ceiling" in w for w in r.warnings)
    assert r.estimate == pytest.approx(gap_only.estimate, abs=0.005)
    assert r.ci_low < 0 < r.ci_high
    # GPT-3.5 is below the ceiling: the same number as before
    low = calibrated_self_preference(pairs, judge="gpt-3.5-turbo", stratum=None)
    same = calibrated_self_preference(pairs, judge="gpt-3.5-turbo", stratum=None, label=False)
    assert low.estimate == same.estimate


@pytest.mark.parametrize(
    ("judge", "own", "other"), [("gpt-4", 51, 141), ("gpt-3.5-turbo", 67, 125)]
)
def test_the_calibrated_headline_counts_the_pairs_its_competence_is_learnt_on(
    pairs: pd.DataFrame, judge: str, own: int, other: int
) -> None:
    """The headline's unit says the pairs its competence is learnt on are counted beside
    n: the detail shown beside the estimate (report, terminal's data column) names
    them. Counted by hand with pandas: the judge's pairs of two known models with a
    verdict, holding its own answer (n) or not."""
    from recuse.analyses.self_preference import describe_dp
    from recuse.metrics.competence import calibrated_self_preference

    d = pairs[(pairs["judge"] == judge) & pairs["model_a"].notna() & pairs["model_b"].notna()]
    d = d[d["p_a"].notna()]
    holds = (d["model_a"] == judge) | (d["model_b"] == judge)
    assert (int(holds.sum()), int((~holds).sum())) == (own, other)
    r = calibrated_self_preference(pairs, judge=judge, boot=Resampling(n_boot=20))
    assert r.n == own
    assert r.components["pairs_without_own"] == other
    assert f"{other} pairs without its own answer" in describe_dp(r)


def test_the_count_beside_the_headline_is_the_same_with_one_step_resamples(
    pairs: pd.DataFrame,
) -> None:
    """The audit's table (4 judges, 785 patterns) takes one-step resamples, whose
    components come from other sums: the same 141 pairs without GPT-4's own answer."""
    from recuse.analyses.self_preference import describe_dp
    from recuse.metrics.competence import calibrated_self_preference

    r = calibrated_self_preference(pairs, judge="gpt-4", one_step=True, boot=Resampling(n_boot=20))
    assert r.components["pairs_without_own"] == 141
    assert describe_dp(r) == (
        "picks its own 0.86 vs 0.90 predicted from 141 pairs without its own answer"
    )


def test_the_shared_method_names_the_judges_conditioned_on_the_label(pairs: pd.DataFrame) -> None:
    """The judges of a table share one method; it said "near its ceiling, its competence
    is conditioned on each pair's human label" for GPT-3.5 too, whose competence (0.63
    predicted own picks, under the ceiling) is not. Now it names GPT-4, and the
    predicted own-pick rates are what the words say: a statsmodels logistic fit of each
    judge's order rows (weight 1 / orders) on κ_c (s_a − s_b) (κ for humanities and
    roleplay, one pooled for the other categories, as the method says), first, own,
    family, plus the label for GPT-4 only, s the human labels' Bradley–Terry strengths."""
    import statsmodels.api as sm

    res = pairwise_bias(pairs, Roster.builtin(), judges=["gpt-4", "gpt-3.5-turbo"],
                        metrics=["self_preference_calibrated"], curves=False,
                        boot=Resampling(n_boot=50, seed=0))  # fmt: skip
    fams = Roster.builtin()
    models = sorted(set(pairs["model_a"].dropna()) | set(pairs["model_b"].dropna()))
    items = pairs[(pairs["judge"] == "gpt-4") & pairs["model_a"].notna() & pairs["model_b"].notna()]
    sides = [(items["model_a"] == m).to_numpy(float) - (items["model_b"] == m).to_numpy(float)
             for m in models[1:]]  # fmt: skip
    design = np.stack(sides, axis=1)
    bt = sm.GLM(items["human"].to_numpy(), design, family=sm.families.Binomial()).fit()
    strength = dict(zip(models, np.r_[0.0, bt.params], strict=True))
    for judge, with_label in (("gpt-4", True), ("gpt-3.5-turbo", False)):
        r = res.get("self_preference_calibrated", judge)
        assert "(+ α·label" in r.method and "here that of gpt-4)" in r.method
        d = pairs[(pairs["judge"] == judge) & pairs["model_a"].notna() & pairs["model_b"].notna()]
        orders = d[["p_a_first", "p_a_second"]].notna().sum(axis=1)
        rows = []
        for col, first in (("p_a_first", 1.0), ("p_a_second", -1.0)):
            part = d[d[col].notna()]
            rows.append(part.assign(y=part[col], first=first, w=1 / orders[part.index]))
        o = pd.concat(rows)
        gap = o["model_a"].map(strength) - o["model_b"].map(strength)
        own = (o["model_a"] == judge).astype(float) - (o["model_b"] == judge).astype(float)
        fam = fams.family(judge)
        fa = (o["model_a"].map(fams.family) == fam) & (o["model_a"] != judge)
        fb = (o["model_b"].map(fams.family) == fam) & (o["model_b"] != judge)
        x = pd.DataFrame({
            "k_humanities": np.where(o["category"] == "humanities", gap, 0.0),
            "k_roleplay": np.where(o["category"] == "roleplay", gap, 0.0),
            "k_pooled": np.where(o["category"].isin(["humanities", "roleplay"]), 0.0, gap),
            "first": o["first"], "own": own,
            "family": np.where(own != 0, 0.0, fa.astype(float) - fb.astype(float)),
        })  # fmt: skip
        if with_label:
            x["label"] = np.where(o["human"] > 0.5, 1.0, -1.0)
        fit = sm.GLM(o["y"].to_numpy(), x.to_numpy(), family=sm.families.Binomial(),
                     var_weights=o["w"].to_numpy()).fit()  # fmt: skip
        p_a = 1 / (1 + np.exp(-(x.assign(own=0.0).to_numpy() @ fit.params)))
        mine = own != 0
        p_own = np.where(own[mine] > 0, p_a[mine.to_numpy()], 1 - p_a[mine.to_numpy()])
        predicted = (
            pd.Series(p_own * o["w"][mine].to_numpy()).groupby(o["item_id"][mine].to_numpy()).sum()
        )
        assert r.components["predicted_own_pick_rate"] == pytest.approx(predicted.mean(), abs=1e-6)
