"""Familiarity analyses (Figures 3-5 and the summary slope) against independent computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from recuse.errors import EstimationError, InputError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.familiarity import (
    familiarity_bias,
    familiarity_summary,
    fit_logit_slopes,
    log_perplexity_by_model,
    log_perplexity_difference,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve,
    perplexity_curve_by_self,
)
from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity
from recuse.tables import validate_pairs


def _table(**cols: object) -> pd.DataFrame:
    n = len(next(v for v in cols.values() if isinstance(v, list)))  # type: ignore[arg-type]
    base: dict[str, object] = {
        "item_id": [f"i{k}" for k in range(n)],
        "prompt_id": [f"p{k}" for k in range(n)],
        "model_a": None,
        "model_b": None,
        "judge": "j",
        "p_a_second": None,
        "p_a": None,
    }
    base.update(cols)
    return validate_pairs(pd.DataFrame(base))


@pytest.fixture(scope="module")
def one_judge() -> object:
    return simulate_familiarity(
        {"j": PlantedFamiliarity(judge_slope=-1.5, agreement=0.5)},
        human_slope=-0.5,
        human_votes=3,
        n_prompts=300,
        verdicts="prob",
        seed=11,
    )


# --- the logistic fits ------------------------------------------------------------------


def test_fit_logit_slopes_equals_statsmodels_glm() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = np.clip(1 / (1 + np.exp(-(0.3 - 1.2 * x))) + rng.normal(0, 0.2, 300), 0, 1)
    w = np.vstack([np.ones(300), rng.integers(0, 3, size=300).astype(float)])
    ours = fit_logit_slopes(x, y, w)
    X = sm.add_constant(x)
    for b in range(2):
        ref = sm.GLM(y, X, family=sm.families.Binomial(), freq_weights=w[b]).fit(tol=1e-12)
        np.testing.assert_allclose(ours[b], ref.params, rtol=1e-7, atol=1e-9)


def test_fit_logit_slopes_separated_is_nan() -> None:
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    assert np.isnan(fit_logit_slopes(x, y, np.ones((1, 4)))).all()


# --- the summary number ------------------------------------------------------------------


def test_familiarity_bias_point_is_difference_of_glm_slopes(one_judge: object) -> None:
    pairs = one_judge.pairs  # type: ignore[attr-defined]
    r = familiarity_bias(pairs, boot=Resampling(n_boot=300))
    X = sm.add_constant(np.asarray(log_perplexity_difference(pairs)))
    bj = sm.GLM(pairs["p_a"], X, family=sm.families.Binomial()).fit().params.iloc[1]
    bh = sm.GLM(pairs["human"], X, family=sm.families.Binomial()).fit().params.iloc[1]
    assert r.estimate == pytest.approx(bh - bj, abs=1e-7)
    assert r.components["judge_slope"] == pytest.approx(bj, abs=1e-7)
    assert r.n == len(pairs) and r.n_clusters == 300 and r.metric == "familiarity_bias"


def test_familiarity_bias_interval_matches_cluster_robust_se(one_judge: object) -> None:
    """Bootstrap width vs the sandwich SE of a stacked GLM (judge + human rows, clustered)."""
    pairs = one_judge.pairs  # type: ignore[attr-defined]
    r = familiarity_bias(pairs, boot=Resampling(level=0.9, n_boot=2000))
    d = log_perplexity_difference(pairs)
    n = len(pairs)
    stacked = pd.DataFrame(
        {
            "y": np.concatenate([pairs["p_a"], pairs["human"]]),
            "d": np.tile(d, 2),
            "h": np.repeat([0.0, 1.0], n),
            "g": np.tile(pairs["prompt_id"].to_numpy(), 2),
        }
    )
    X = np.column_stack([np.ones(2 * n), stacked["d"], stacked["h"], stacked["h"] * stacked["d"]])
    groups = pd.factorize(stacked["g"])[0]
    fit = sm.GLM(stacked["y"], X, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups}
    )
    assert np.asarray(fit.params)[3] == pytest.approx(r.estimate, abs=1e-6)
    boot_se = (r.ci_high - r.ci_low) / (2 * 1.6449)
    assert boot_se == pytest.approx(np.asarray(fit.bse)[3], rel=0.2)


def test_familiarity_bias_recovers_planted_value(one_judge: object) -> None:
    r = familiarity_bias(one_judge.pairs, boot=Resampling(level=0.99, n_boot=500))  # type: ignore[attr-defined]
    truth = one_judge.true_value("j")  # type: ignore[attr-defined]
    assert truth == pytest.approx(1.0)
    assert r.covers(truth)
    assert abs(r.estimate - truth) < 0.3


def test_familiarity_bias_zero_when_judge_moves_like_humans() -> None:
    sim = simulate_familiarity(
        {"j": PlantedFamiliarity(judge_slope=-0.8)}, human_slope=-0.8, n_prompts=400, seed=5
    )
    r = familiarity_bias(sim.pairs, verdict="pick", boot=Resampling(n_boot=400))
    assert sim.true_value("j") == 0.0
    assert r.covers(0.0)


@pytest.mark.slow
@pytest.mark.parametrize("verdicts", ["pick", "prob"])
def test_familiarity_bias_interval_coverage(verdicts: str) -> None:
    """90% intervals cover the planted value about 90% of the time (150 simulations)."""
    reps, hits, estimates = 150, 0, []
    for s in range(reps):
        sim = simulate_familiarity(
            {"j": PlantedFamiliarity(judge_slope=-1.5, agreement=0.5)},
            human_slope=-0.5,
            human_votes=3,
            n_prompts=60,
            verdicts=verdicts,  # type: ignore[arg-type]
            seed=1000 + s,
        )
        r = familiarity_bias(sim.pairs, boot=Resampling(level=0.9, n_boot=300, seed=s))
        hits += r.covers(1.0)
        estimates.append(r.estimate)
    coverage = hits / reps
    # binomial sd at 150 reps is 0.025: accept 0.83-0.96
    assert 0.83 <= coverage <= 0.96, coverage
    assert abs(np.mean(estimates) - 1.0) < 0.1


def test_familiarity_summary_ranks_judges() -> None:
    sim = simulate_familiarity(
        {
            "calm": PlantedFamiliarity(judge_slope=-0.2),
            "swayed": PlantedFamiliarity(judge_slope=-2.5),
        },
        n_prompts=250,
        seed=2,
    )
    results, skipped = familiarity_summary(sim.pairs, boot=Resampling(n_boot=300))
    assert not skipped
    assert [r.judge for r in results] == ["swayed", "calm"]
    for r in results:
        assert r.covers(sim.true_value(str(r.judge)))


def test_familiarity_bias_counts_rows_without_perplexity(one_judge: object) -> None:
    pairs = one_judge.pairs.copy()  # type: ignore[attr-defined]
    pairs.loc[:9, "ppl_a"] = np.nan
    r = familiarity_bias(pairs, boot=Resampling(n_boot=100))
    assert r.n == len(pairs) - 10


def test_familiarity_bias_errors() -> None:
    t = _table(human=[1, 0, 1], p_a_first=[1, 0, 1])
    with pytest.raises(InputError, match="no ppl_a column"):
        familiarity_bias(t)
    t2 = _table(human=[1, 0, 1], p_a_first=[1, 0, 1], ppl_a=[0.0, 2, 3], ppl_b=[1.0, 2, 3])
    with pytest.raises(InputError, match="not positive"):
        familiarity_bias(t2)
    t3 = _table(human=[1, 0, 1], p_a_first=[1, 0, 1], ppl_a=[1.0, 2, 3], ppl_b=[3.0, 2, 1])
    with pytest.raises(EstimationError, match="only 3 pairs"):
        familiarity_bias(t3)
    # none usable: "no pair has ...", not "only 0 pairs have ... (need at least 5)"
    t4 = _table(human=[None, None, None], p_a_first=[1, 0, 1], ppl_a=[1.0, 2, 3],
                ppl_b=[3.0, 2, 1])  # fmt: skip
    with pytest.raises(EstimationError) as err:
        familiarity_bias(t4)
    assert str(err.value) == (
        "cannot estimate familiarity_bias for judge 'j': no pair has both perplexities, a "
        "verdict and a human label"
    )
    with pytest.raises(EstimationError, match=r"only 1 pair has both .* \(need at least 2\)"):
        familiarity_bias(t3.iloc[:1], min_n=2)


# --- Figure 3 ----------------------------------------------------------------------------


def test_perplexity_curve_equals_groupby_means(one_judge: object) -> None:
    pairs = one_judge.pairs  # type: ignore[attr-defined]
    edges = perplexity_bins(0.5, 1.0)
    c = perplexity_curve(pairs, edges=edges, boot=Resampling(n_boot=200), min_n=5)
    d = log_perplexity_difference(pairs)
    b = pd.cut(d, edges, right=False)
    for rater, col in (("judge", "p_a"), ("human", "human")):
        ref = pairs[col].groupby(b, observed=True).agg(["mean", "size"])
        mine = c[c["rater"] == rater]
        np.testing.assert_allclose(mine["mean"], ref["mean"], rtol=1e-12)
        assert mine["n"].tolist() == ref["size"].tolist()
    ok = c[c["note"] == ""]
    assert ((ok["ci_low"] <= ok["mean"]) & (ok["mean"] <= ok["ci_high"])).all()
    # the judge's win rate for a falls with d (it prefers the less perplexing response)
    j = c[c["rater"] == "judge"]["mean"].to_numpy()
    assert j[0] > 0.7 and j[-1] < 0.3


def test_perplexity_curve_small_bins_are_flagged() -> None:
    t = _table(human=[1, 0, 1, 1], p_a_first=[1, 1, 0, 0], ppl_a=[2, 2, 8, 8], ppl_b=[8, 8, 2, 2])
    c = perplexity_curve(t, edges=[-5, 0, 5], min_n=3, boot=Resampling(n_boot=50))
    assert c["ci_low"].isna().all()
    assert c["note"].str.contains("only 2").all()


# --- Figure 4 ----------------------------------------------------------------------------


def test_perplexity_curve_by_self_orients_own_to_a() -> None:
    t = _table(
        model_a=["j", "x", "x", "y"],
        model_b=["x", "j", "y", "x"],
        human=[1, 1, 0, 1],
        p_a_first=[1.0, 0.25, 0.5, 0.0],
        ppl_a=[2.0, 8.0, 2.0, 2.0],
        ppl_b=[8.0, 2.0, 8.0, 8.0],
    )
    c = perplexity_curve_by_self(t, edges=[-5, 0, 5], min_n=1, boot=Resampling(n_boot=50))
    own = c[(c["subset"] == "own") & (c["rater"] == "judge")]
    # both own pairs: d(own) = log 2 - log 8 < 0; verdicts for own: 1 and 1 - 0.25
    assert own["bin_low"].tolist() == [-5.0] and own["n"].tolist() == [2]
    assert own["mean"].iloc[0] == pytest.approx(0.875)
    hum = c[(c["subset"] == "own") & (c["rater"] == "human")]
    assert hum["mean"].iloc[0] == pytest.approx(0.5)  # 1 for row 1, 1 - 1 for row 2
    other = c[(c["subset"] == "other") & (c["rater"] == "judge")]
    assert other["n"].sum() == 2 and other["mean"].iloc[0] == pytest.approx(0.25)


def test_perplexity_curve_by_self_needs_own_responses(one_judge: object) -> None:
    with pytest.raises(EstimationError, match="own response"):
        perplexity_curve_by_self(one_judge.pairs, boot=Resampling(n_boot=50))  # type: ignore[attr-defined]


def test_perplexity_curve_by_self_flat_split_when_no_self_shift() -> None:
    """Verdicts depend on perplexity only: own and other curves agree bin by bin."""
    judges = {m: PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.4) for m in ("m1", "m2")}
    sim = simulate_familiarity(judges, n_prompts=600, verdicts="prob", seed=4)
    c = perplexity_curve_by_self(
        sim.pairs,
        judge="m1",
        edges=perplexity_bins(0.5, 1.0),
        boot=Resampling(n_boot=300),
        with_human=False,
    )
    own = c[c["subset"] == "own"].set_index("bin_low")
    other = c[c["subset"] == "other"].set_index("bin_low")
    both = own.merge(other, left_index=True, right_index=True, suffixes=("_own", "_other"))
    both = both[(both["n_own"] >= 40) & (both["n_other"] >= 40)]
    assert len(both) >= 3
    assert (np.abs(both["mean_own"] - both["mean_other"]) < 0.12).all()


# --- Figure 5 ----------------------------------------------------------------------------


def test_own_perplexity_gap_recovers_planted_gap() -> None:
    judges = {
        "m1": PlantedFamiliarity(own_gap=-0.5),
        "m2": PlantedFamiliarity(own_gap=0.0),
    }
    sim = simulate_familiarity(judges, n_prompts=400, seed=8)
    results, skipped = own_perplexity_gap(sim.pairs, boot=Resampling(n_boot=400))
    assert not skipped
    by_judge = {r.judge: r for r in results}
    for j in judges:
        assert by_judge[j].covers(sim.true_gap(j)), (j, by_judge[j])
    assert by_judge["m1"].ci_high < 0


def test_own_perplexity_gap_counts_each_response_once() -> None:
    # response (p0, j) appears in two pairs; (p0, x) and (p0, y) once each
    t = _table(
        prompt_id=["p0", "p0", "p1", "p1"],
        model_a=["j", "j", "j", "x"],
        model_b=["x", "y", "x", "y"],
        human=[1, 1, 1, 1],
        p_a_first=[1, 1, 1, 1],
        ppl_a=[np.e, np.e, np.e**2, np.e**5],
        ppl_b=[np.e**3, np.e**4, np.e**4, np.e**6],
    )
    results, _ = own_perplexity_gap(t, min_n=1, boot=Resampling(n_boot=50))
    r = results[0]
    # own: p0 -> 1, p1 -> 2 ; other: 3, 4 (p0), 4, 5, 6 (p1)
    assert r.components["mean_log_ppl_own"] == pytest.approx(1.5)
    assert r.components["mean_log_ppl_other"] == pytest.approx(22 / 5)
    assert r.counts == {"own responses": 2, "responses of other models": 5}
    by_model = log_perplexity_by_model(t, min_n=1, boot=Resampling(n_boot=50))
    assert by_model[["model", "n"]].values.tolist() == [["j", 2], ["x", 3], ["y", 2]]


def test_own_perplexity_gap_skips_judges_without_own_responses(one_judge: object) -> None:
    results, skipped = own_perplexity_gap(one_judge.pairs, boot=Resampling(n_boot=50))  # type: ignore[attr-defined]
    assert not results
    assert skipped[0].judge == "j" and "own responses" in skipped[0].reason


def test_own_responses_follow_selves_as_self_preference_does() -> None:
    """With a model line as the judge itself (``selves``), a sibling snapshot's answers are
    its own in Figures 4 and 5 too, as in the self-preference metrics: the line's
    familiarity gap no longer compares ids alone."""
    # judge j-0613; j-0314 is the same line; x and y are others; 8 copies of two prompts
    copies = 8
    t = _table(
        judge="j-0613",
        prompt_id=[f"p{k}{s}" for k in range(copies) for s in ("a", "a", "b", "b")],
        model_a=["j-0314", "j-0613", "x", "j-0314"] * copies,
        model_b=["x", "y", "y", "y"] * copies,
        human=[1, 1, 0, 1] * copies,
        p_a_first=[1.0, 0.5, 0.25, 0.75] * copies,
        ppl_a=[np.e, np.e**2, np.e**5, np.e**3] * copies,
        ppl_b=[np.e**4, np.e**4, np.e**6, np.e**6] * copies,
    )
    selves = {"j-0613": "j", "j-0314": "j"}
    boot = Resampling(n_boot=50)
    exact, _ = own_perplexity_gap(t, min_n=1, boot=boot)
    line, _ = own_perplexity_gap(t, min_n=1, boot=boot, selves=selves)
    # responses: "a": j-0314 1, x 4, j-0613 2, y 4; "b": x 5, y 6, j-0314 3 (y 6 once)
    assert exact[0].components["mean_log_ppl_own"] == pytest.approx(2.0)  # j-0613 only
    assert exact[0].components["mean_log_ppl_other"] == pytest.approx((1 + 4 + 4 + 5 + 6 + 3) / 6)
    assert line[0].components["mean_log_ppl_own"] == pytest.approx((1 + 2 + 3) / 3)
    assert line[0].components["mean_log_ppl_other"] == pytest.approx((4 + 4 + 5 + 6) / 4)
    bars = log_perplexity_by_model(t, min_n=1, boot=boot, selves=selves)
    assert dict(zip(bars["model"], bars["own"], strict=True)) == {
        "j-0314": True, "j-0613": True, "x": False, "y": False,
    }  # fmt: skip
    curve = perplexity_curve_by_self(
        t, edges=[-10, 0, 10], min_n=1, boot=boot, with_human=False, selves=selves
    )
    own = curve[curve["subset"] == "own"]
    other = curve[curve["subset"] == "other"]
    # own pairs: rows 0, 1 and 3, oriented to the line's answer (verdicts 1, 0.5, 0.75)
    assert own["n"].sum() == 3 * copies and own["mean"].iloc[0] == pytest.approx(0.75)
    assert other["n"].sum() == copies  # x vs y only
    plain = perplexity_curve_by_self(t, edges=[-10, 0, 10], min_n=1, boot=boot, with_human=False)
    assert plain[plain["subset"] == "own"]["n"].sum() == copies
