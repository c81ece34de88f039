"""Robustness battery: each check against a planted truth or an independent fit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from statsmodels.miscmodels.ordinal_model import OrderedModel

from recuse.errors import ConfigError, EstimationError
from recuse.regression import robustness as rb
from recuse.regression.favoritism import design, fit_favoritism, prepare
from recuse.simulate.ratings import simulate_ratings

FAMS = {"j0": "A", "j1": "A", "j2": "B", "j3": "B", "j4": "C"}


def test_length_control_recovers_planted_length_slopes() -> None:
    kappa = {"j0": 0.1, "j1": 0.0, "j2": -0.05, "j3": 0.05, "j4": 0.0}
    sim = simulate_ratings(seed=1, n_prompts=120, length_effect=kappa, noise_sd=0.1)
    res = rb.length_controlled(sim.ratings, sim.families, normalize="none")
    truth = sim.truth().reindex(res.params.index)
    err = (res.params - truth).abs()
    assert (err < 4 * res.bse).all(), err
    assert res.variant == "length control"


def _ordinal_sim(seed: int = 0, n_prompts: int = 40) -> pd.DataFrame:
    sim = simulate_ratings(
        seed=seed,
        n_prompts=n_prompts,
        dimensions=("d1",),
        noise="logistic",
        noise_sd=1.0,
        cuts=(1.0, 2.0, 3.0),
        slope={j: 4.0 for j in FAMS},
        intercept={j: 0.5 + 0.1 * k for k, j in enumerate(FAMS)},
        self_bias={"j0": 1.0, "j1": -0.5, "j2": 0.0, "j3": 0.5, "j4": 0.0},
        family_bias={"A": 0.5, "B": 0.0},
        families=FAMS,
    )
    # a reference on a few levels, as human means are, so that rows repeat
    r = sim.ratings.assign(reference=(sim.ratings["reference"] * 4).round() / 4)
    return r


def test_ordinal_logit_equals_uncompressed_orderedmodel() -> None:
    ratings = _ordinal_sim(n_prompts=20)
    p = prepare(ratings, FAMS, normalize="none")
    got = rb.ordinal_logit(p)["d1"]
    X, terms, _ = design(p.frame, judge_intercepts=False, dimension_effects=False)
    y = pd.Series(pd.Categorical(p.frame["rating"].astype(int), ordered=True))
    full = OrderedModel(y, X, distr="logit").fit(method="bfgs", disp=False, maxiter=5000, gtol=1e-9)
    k = X.shape[1]
    np.testing.assert_allclose(got.params.to_numpy(), np.asarray(full.params)[:k], atol=2e-4)
    np.testing.assert_allclose(got.bse.to_numpy(), np.asarray(full.bse)[:k], rtol=2e-3)
    assert [t.name for t in terms] == list(got.params.index)


def test_ordinal_logit_recovers_planted_log_odds() -> None:
    ratings = _ordinal_sim(seed=3, n_prompts=150)
    res = rb.ordinal_logit(ratings, FAMS, normalize="none")["d1"]
    truth = {"self[j0]": 1.0, "self[j1]": -0.5, "self[j3]": 0.5, "family[A]": 0.5}
    for term, value in truth.items():
        assert abs(res.params[term] - value) < 4 * res.bse[term], term
    assert res.scale_note == "log-odds"


def test_gam_on_linear_data_agrees_with_ols() -> None:
    sim = simulate_ratings(seed=2, n_prompts=60)
    ols = fit_favoritism(sim.ratings, sim.families)
    g = rb.gam(sim.ratings, sim.families)
    s = [t for t in ols.params.index if t.startswith(("self", "family"))]
    assert np.allclose(g.params[s], ols.params[s], atol=0.01)
    assert (g.bse[s] > 0).all()


def test_held_out_family_reference_by_hand() -> None:
    # one completion (p1, d, m=x) rated by judges a1, a2 (family A) and b1 (family B)
    rows = [
        ("p1", "x", "a1", 2.0),
        ("p1", "x", "a2", 4.0),
        ("p1", "x", "b1", 1.0),
        ("p1", "a1", "b1", 3.0),
        ("p1", "a1", "a2", 4.0),
    ]
    t = pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "rating"])
    t["dimension"], t["reference"] = "d", 4.0
    fams = {"a1": "A", "a2": "A", "b1": "B", "x": "C"}
    alt = rb.held_out_family_reference(t, fams, family="A", normalize="none").frame
    # only b1's rating of x remains; its new reference is mean(2, 4) = 3
    assert alt[["judge", "model"]].values.tolist() == [["b1", "x"]]
    assert alt["ref"].tolist() == [3.0]
    keep = rb.held_out_family_reference(
        t, fams, family="A", normalize="none", drop_family_models=False
    )
    # b1's rating of a1's completion stays, but nobody in A rated it as a judge of a1?
    # a2 did (4.0): reference 4.0
    assert sorted(keep.frame["ref"].tolist()) == [3.0, 4.0]
    with pytest.raises(ConfigError):
        rb.held_out_family_reference(t, fams, family="Z")


def test_leave_family_out_runs_per_family() -> None:
    sim = simulate_ratings(seed=6, n_prompts=40)
    out = rb.leave_family_out(sim.ratings, sim.families)
    assert set(out) == {"A", "B", "C"}
    # judges of the held-out family have no coefficients in its fit
    assert not any(t.endswith(("[j0]", "[j1]")) for t in out["A"].params.index)


def test_weakest_and_drop_models() -> None:
    q = {"j0": 0.6, "j1": 0.3, "j2": 0.6, "j3": 0.2, "j4": 0.6}
    sim = simulate_ratings(seed=7, n_prompts=40, quality=q)
    assert rb.weakest_models(sim.ratings, sim.families, k=2) == ["j3", "j1"]
    res = rb.drop_weakest(sim.ratings, sim.families)
    assert "self[j3]" not in res.params.index and "self[j0]" in res.params.index
    many = rb.drop_one_model(sim.ratings, sim.families)
    assert sorted(many) == sorted(FAMS)
    assert "self[j2]" not in many["j2"].params.index
    # without j3, family B has one member left: no family term
    assert "family[B]" not in many["j3"].params.index
    with pytest.raises(ConfigError):
        rb.drop_models(sim.ratings, sim.families, models=["nope"])


def test_slices() -> None:
    sim = simulate_ratings(seed=8, n_prompts=40)
    by_dim = rb.by_dimension(sim.ratings, sim.families)
    assert set(by_dim) == {"d1", "d2"}
    one = sim.ratings[sim.ratings["dimension"] == "d1"]
    direct = fit_favoritism(one, sim.families)
    # the slice keeps the full-data scale; both dimensions share max here or not,
    # so compare on the unnormalised scale
    a = rb.by_dimension(sim.ratings, sim.families, normalize="none")["d1"].params
    b = fit_favoritism(one, sim.families, normalize="none").params
    assert np.allclose(a, b)
    assert direct.n == by_dim["d1"].n
    by_task = rb.by_group(sim.ratings, sim.families, column="task")
    assert set(by_task) == {"qa", "summarization"}
    with pytest.raises(ConfigError):
        rb.by_group(sim.ratings.drop(columns=["task"]), sim.families, column="task")


def test_battery_lines_up_and_records_skipped_checks() -> None:
    sim = simulate_ratings(seed=9, n_prompts=30)
    bat = rb.battery(
        sim.ratings.drop(columns=["length"]),
        sim.families,
        checks=["length", "drop-weakest", "by-task"],
    )
    assert "length" in bat.skipped and "length" in bat.skipped["length"]
    tab = bat.table()
    assert set(tab["variant"]) == {"main", "drop weakest", "task: qa", "task: summarization"}
    assert list(tab.columns[:4]) == ["variant", "method", "kind", "label"]
    with pytest.raises(ConfigError):
        rb.battery(sim.ratings, sim.families, checks=["nope"])


def test_real_data_battery_keeps_the_papers_conclusions(shared_data) -> None:  # type: ignore[no-untyped-def]
    from recuse.data import load
    from recuse.roster import Roster

    pf = load("play-favorites", data_dir=shared_data)
    bat = rb.battery(
        pf, Roster.load(), checks=["length", "leave-family-out", "drop-weakest", "by-task"]
    )
    assert not bat.skipped
    assert rb.weakest_models(pf, Roster.load()) == [
        "llama-3.1-8b-instruct",
        "mistral-7b-instruct-v0.2",
    ]
    tab = bat.table()
    s = tab[(tab["kind"] == "self") & (tab["label"] == "claude-3.5-sonnet-20241022")]
    assert (s["estimate"] > 0).all()
    g = tab[(tab["kind"] == "self") & (tab["label"] == "gpt-4o")]
    assert (g["estimate"] > 0).all()
    # without the weak models' completions, they still judge: Llama 3 8B's ratings of
    # Llama 3 70B and Mistral 7B's of Mistral Large keep both family terms (the
    # independent recheck of the headline numbers: -0.083 and +0.010)
    fam = tab[(tab["variant"] == "drop weakest") & (tab["kind"] == "family")]
    lam = fam.set_index("label")["estimate"]
    assert lam["llama"] == pytest.approx(-0.0828, abs=5e-4)
    assert lam["mistral"] == pytest.approx(0.0104, abs=5e-4)


# ------------------------------------------------------------- degenerate data


def _hand(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    t = pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "rating", "reference"])
    t["dimension"], t["task"], t["dataset"] = "d", "qa", "s"
    t["length"] = [10.0 + 7 * (i % 5) + len(m) for i, m in enumerate(t["model"])]
    return t


HAND_FAMS = {"a": "A", "b": "B", "c": "A", "d": "B"}
DEGENERATE = {
    # judge a rates only model b: no self or family term anywhere
    "one judge, one other model": (
        _hand([(f"p{i}", "b", "a", i % 3, (i * 7) % 4) for i in range(12)]),
        {"length": "no prompt has two completions", "by-task: qa": "no self- or family-bias"},
    ),
    # judge a rates only itself: its self term equals its intercept
    "one judge rating itself": (
        _hand([(f"p{i}", "a", "a", i % 3, (i * 7) % 4) for i in range(12)]),
        {"drop-one-model: a": "no ratings left without a", "by-dimension: d": "rates only its own"},
    ),
    # a and c (family A) rate a and c: the family term equals the intercepts − self terms
    "one family": (
        _hand(
            [
                (f"p{i}", m, j, (i + len(m + j) + (m == j)) % 4, (i * 7 + ord(m)) % 5)
                for i in range(12)
                for m in "ac"
                for j in "ac"
            ]
        ),
        {
            "leave-family-out: A": "no ratings left once the A judges",
            "drop-weakest": "no ratings left",
        },
    ),
    # judges a, b rate models c, d only
    "no self rows": (
        _hand(
            [
                (f"p{i}", m, j, (i + ord(m) + ord(j)) % 4, (i * 7 + ord(m)) % 5)
                for i in range(12)
                for m in "cd"
                for j in "ab"
            ]
        ),
        {"drop-one-model: c": "never rates its own completions"},
    ),
}


@pytest.mark.parametrize("case", sorted(DEGENERATE))
@pytest.mark.parametrize("se", ["HC0", "HC3", "cluster"])
def test_every_check_on_degenerate_data_is_fitted_or_skipped_with_its_cause(
    case: str, se: str
) -> None:
    table, expected = DEGENERATE[case]
    events: list[rb.Progress] = []
    bat = rb.battery(table, HAND_FAMS, checks="all", se=se, progress=events.append)  # type: ignore[arg-type]
    for check in rb.CHECKS:
        done = [k for k in bat.skipped if k == check or k.startswith(f"{check}: ")]
        assert done or any(True for _ in bat.results), (check, bat.skipped)
    for key, reason in bat.skipped.items():
        assert reason, key
    for key, fragment in expected.items():
        assert fragment in bat.skipped[key], (key, bat.skipped)
    # progress: main, then start/end of every check, in order
    assert [(e.check, e.stage) for e in events] == [
        ("main", "start"),
        ("main", "end"),
        *[(c, s) for c in rb.CHECKS for s in ("start", "end")],
    ]
    ends = [e for e in events if e.stage == "end" and e.check != "main"]
    assert sum(e.fitted for e in ends) == len(bat.results)
    assert sum(e.skipped for e in ends) == len(bat.skipped)


def test_one_prompt_and_constant_scores() -> None:
    one = simulate_ratings(seed=1, n_prompts=1).ratings
    bat = rb.battery(one, FAMS, checks="fast", se="HC0")
    assert not bat.skipped and len(bat.results) > 5
    # one prompt, one dimension: each self term rests on one rating, so HC3 (leverage
    # 1) is undefined there; clustering by prompt is undefined everywhere
    bat = rb.battery(one, FAMS, checks=["by-dimension"], se="HC3")
    assert "leverage 1" in bat.skipped["by-dimension: d1"]
    # it said 'need ratings of two prompts or more', without what to do; the way it
    # names is one that fits
    with pytest.raises(EstimationError) as err:
        rb.battery(one, FAMS, checks="fast", se="cluster")
    assert str(err.value).endswith(
        "— add ratings of other prompts, or choose standard errors without clusters (--se HC1)"
    )
    assert not rb.battery(one, FAMS, checks="fast", se="HC1").skipped
    # constant ratings: no main fit, so the battery says why instead of checking
    flat = simulate_ratings(seed=1, n_prompts=5).ratings.assign(rating=3.0)
    with pytest.raises(EstimationError, match="every rating is the same"):
        rb.battery(flat, FAMS, checks="all")
    # constant within one slice only: that slice is skipped
    sim = simulate_ratings(seed=2, n_prompts=20, dimensions=("d1",)).ratings
    sim.loc[sim["task"] == "qa", "rating"] = 0.5
    bat = rb.battery(sim, FAMS, checks=["by-task"])
    assert "every rating is the same" in bat.skipped["by-task: qa"]
    assert "task: summarization" in bat.results


def test_battery_reuses_a_given_main_fit_and_fast_names_the_cheap_checks() -> None:
    sim = simulate_ratings(seed=3, n_prompts=20)
    main = fit_favoritism(sim.ratings, sim.families)
    bat = rb.battery(sim.ratings, sim.families, checks="fast", main=main)
    assert bat.main is main and "main" not in bat.seconds
    assert list(bat.seconds) == list(rb.FAST_CHECKS)
    assert set(rb.FAST_CHECKS) | set(rb.SLOW_CHECKS) == set(rb.CHECKS)
    assert set(rb.SLOW_CHECKS) == {"ordinal", "gam"}


def test_ordinal_score_is_the_gradient_of_the_weighted_loglike() -> None:
    from statsmodels.tools.numdiff import approx_fprime

    ratings = _ordinal_sim(n_prompts=15)
    p = prepare(ratings, FAMS, normalize="none")
    X, _, _ = design(p.frame, judge_intercepts=False, dimension_effects=False)
    y = pd.Series(pd.Categorical(p.frame["rating"].astype(int), ordered=True))
    weights = np.random.default_rng(0).integers(1, 4, size=len(y)).astype(float)
    model = rb.FrequencyWeightedOrderedModel(y, X, freq_weights=weights, distr="logit")
    rng = np.random.default_rng(1)
    for _ in range(3):
        params = np.concatenate([rng.normal(0, 0.5, X.shape[1]), [-1.0, 0.2, -0.3]])
        numeric = approx_fprime(params, model.loglike, centered=True)
        np.testing.assert_allclose(model.score(params), numeric, rtol=1e-6, atol=1e-6)
    # the Hessian (differences of the score) against statsmodels' second differences
    from statsmodels.tools.numdiff import approx_hess

    np.testing.assert_allclose(
        model.hessian(params), approx_hess(params, model.loglike), rtol=1e-4, atol=1e-3
    )


def test_ordinal_check_on_continuous_ratings_is_a_quick_skip() -> None:
    """The ordered logit on ratings that are not a scale (continuous scores: a category
    per distinct value, thousands of thresholds) ran for more than 5 minutes on 5,000
    simulated ratings (`recuse audit --robustness all`); now each slice is a skip
    saying why, in well under a second."""
    import time

    from recuse.simulate.ratings import simulate_ratings

    sim = simulate_ratings(seed=1)
    assert sim.ratings.groupby("dimension")["rating"].nunique().min() > 1000
    start = time.perf_counter()
    bat = rb.battery(sim.ratings, sim.families, checks=["ordinal"])
    assert time.perf_counter() - start < 10
    reasons = {k: v for k, v in bat.skipped.items() if k.startswith("ordinal")}
    assert set(reasons) == {"ordinal: d1", "ordinal: d2"}
    assert all("distinct rating values" in v for v in reasons.values())


def test_drop_weakest_removes_their_completions_and_keeps_them_as_judges() -> None:
    """Play Favorites, Section 6.2: "remove their completions from the data and rerun".
    The weak models stay as judges, so the family term of a family whose only other
    member is weak (A: j0 and weak j1) is still estimated, from j1's ratings of j0.
    Checked against a planted truth and a dense least-squares fit built by hand."""
    q = {"j0": 0.6, "j1": 0.3, "j2": 0.6, "j3": 0.2, "j4": 0.6}
    planted = {"A": 0.3, "B": -0.2}
    sim = simulate_ratings(seed=7, n_prompts=60, quality=q, family_bias=planted)
    res = rb.drop_weakest(sim.ratings, sim.families, normalize="none", se="HC0")
    weak = ["j3", "j1"]
    r = sim.ratings.dropna(subset=["rating"])
    kept = r[~r["model"].isin(weak)].reset_index(drop=True)
    # every rating by a weak judge of a kept completion is still there
    assert res.n == len(kept) and kept["judge"].isin(weak).sum() > 0
    assert "self[j1]" not in res.params.index and "self[j0]" in res.params.index
    for fam, value in planted.items():
        assert abs(res.params[f"family[{fam}]"] - value) < 4 * res.bse[f"family[{fam}]"], fam
    # the same fit by hand: judge intercepts and slopes, self and family dummies,
    # dimension effect, solved with numpy's least squares
    fam = kept["judge"].map(FAMS)
    same = fam == kept["model"].map(FAMS)
    is_self = kept["judge"] == kept["model"]
    cols = {}
    for j in sorted(kept["judge"].unique()):
        cols[f"judge[{j}]"] = (kept["judge"] == j).astype(float)
        cols[f"reference:judge[{j}]"] = cols[f"judge[{j}]"] * kept["reference"]
    for j in sorted(kept.loc[is_self, "judge"].unique()):
        cols[f"self[{j}]"] = (is_self & (kept["judge"] == j)).astype(float)
    for f in ("A", "B"):
        cols[f"family[{f}]"] = (same & ~is_self & (fam == f)).astype(float)
    cols["dimension[d2]"] = (kept["dimension"] == "d2").astype(float)
    X = pd.DataFrame(cols)
    beta = np.linalg.lstsq(X.to_numpy(), kept["rating"].to_numpy(float), rcond=None)[0]
    by_hand = pd.Series(beta, index=X.columns)
    for term in ("family[A]", "family[B]", "self[j0]", "self[j2]"):
        assert res.params[term] == pytest.approx(by_hand[term], abs=1e-9), term
    # the definition is written beside the numbers
    assert "without the completions of j3, j1 (they still judge" in res.method
    tab = rb.battery(sim.ratings, sim.families, checks=["drop-weakest"]).table()
    assert tab.loc[tab["variant"] == "drop weakest", "method"].str.contains("still judge").all()
    # dropped as judges too (drop-one-model, or as_judges=True), A has no family term
    both = rb.drop_models(sim.ratings, sim.families, models=weak, normalize="none")
    assert "family[A]" not in both.params.index
    assert "by and of j3, j1" in both.method


def test_each_rows_n_is_the_ratings_its_coefficient_rests_on() -> None:
    """The table's ``n`` was the whole fit's on every row (4,000 beside a γ_j that rests
    on 80 ratings): read as the row's n it overstates each coefficient's evidence 25-fold.
    Now ``n_term`` is the row's, counted here from the raw ratings as its definition says
    (γ_j: judge j rating its own model; λ_F: F's judges rating F's other models), and
    ``n_fit`` the fit's, named so and defined as not the row's — in every variant,
    slices included."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    raw = sim.ratings
    bat = rb.battery(raw, sim.families, checks=["by-task", "drop-weakest"])
    tab = bat.table()
    assert set(tab["variant"]) == {"main", "drop weakest", "task: qa", "task: summarization"}
    assert list(tab.columns) == list(rb.COMPARISON_COLUMNS)
    assert "n" not in tab.columns
    defs = rb.COMPARISON_COLUMNS
    assert "own model" in defs["n_term"] and "F's other models" in defs["n_term"]
    assert "not the n behind this row's coefficient" in defs["n_fit"]
    weak = set(rb.weakest_models(prepare(raw, sim.families)))
    fam = raw["judge"].map(sim.families)
    same = fam == raw["model"].map(sim.families)
    for variant, rows in tab.groupby("variant"):
        keep = pd.Series(True, index=raw.index)
        if str(variant).startswith("task: "):
            keep = raw["task"] == str(variant).removeprefix("task: ")
        elif variant == "drop weakest":
            keep = ~raw["model"].isin(weak)
        keep &= raw["rating"].notna()
        sub = raw[keep]
        assert (rows["n_fit"] == len(sub)).all(), variant
        res = bat.main if variant == "main" else bat.results[str(variant)]
        assert (rows["n_fit"] == res.n).all()
        for _, r in rows.iterrows():
            judge_of = (
                sub["judge"] == r["label"] if r["kind"] == "self" else fam[keep] == r["label"]
            )
            if r["kind"] == "self":
                expected = int((judge_of & (sub["model"] == r["label"])).sum())
            else:
                expected = int((judge_of & same[keep] & (sub["model"] != sub["judge"])).sum())
            assert r["n_term"] == expected, (variant, r["label"])
        # the label matters: one fit's n on every row, many times each row's own
        assert rows["n_fit"].nunique() == 1 and (rows["n_term"] < rows["n_fit"] / 3).all()


def _statsmodels_eq1(d: pd.DataFrame, families: dict[str, str], *, length: bool) -> Any:
    """Eq. 1 (+ κ_j tanh(length z-score within prompt and dimension)) by statsmodels'
    OLS on a design built here, clustered by prompt (CR1)."""
    import statsmodels.api as sm

    d = d.reset_index(drop=True)
    cols: dict[str, pd.Series] = {}
    for j in sorted(d["judge"].unique()):
        is_j = (d["judge"] == j).astype(float)
        cols[f"judge[{j}]"] = is_j
        cols[f"slope[{j}]"] = is_j * d["ref"]
        cols[f"self[{j}]"] = is_j * (d["model"] == j)
        if length:
            cols[f"length:judge[{j}]"] = is_j * d["tanh_length"]
    jf, mf = d["judge"].map(families), d["model"].map(families)
    for fam in sorted(set(jf)):
        cols[f"family[{fam}]"] = ((jf == fam) & (mf == fam) & (d["judge"] != d["model"])) * 1.0
    for dim in sorted(d["dimension"].unique())[1:]:
        cols[f"dimension[{dim}]"] = (d["dimension"] == dim).astype(float)
    x = pd.DataFrame(cols)
    x = x.loc[:, x.abs().sum() > 0]
    groups = pd.factorize(d["prompt_id"])[0]
    return sm.OLS(d["y"], x, hasconst=True).fit(cov_type="cluster", cov_kwds={"groups": groups})


def test_length_control_and_held_out_references_equal_statsmodels_ols() -> None:
    """The battery's length-control and leave-family-out fits, on correlated ratings
    (answer_sd) with planted length slopes: every self, family and length term and its
    cluster-robust (CR1) standard error is statsmodels' OLS on a design built here.
    Ratings and references divided by their dimension's largest value; the length
    feature tanh((ℓ − mean) / sd) over one length per model of each prompt and dimension
    (sd with ddof 1: ddof 0 fails); the held-out reference the mean normalised rating
    of the held-out family's judges, with their ratings and their family's completions
    removed. (On Play Favorites the battery agrees with the same code to 1e-14.)"""
    kappa = {"j0": 0.1, "j1": 0.0, "j2": -0.05, "j3": 0.05, "j4": 0.0}
    sim = simulate_ratings(seed=12, n_prompts=30, length_effect=kappa, answer_sd=0.05,
                           unparsed=0.02)  # fmt: skip
    fams = dict(sim.families)
    d = sim.ratings.dropna(subset=["rating"]).copy()
    top = d.groupby("dimension")[["rating", "reference"]].max().max(axis=1)
    d["y"] = d["rating"] / d["dimension"].map(top)
    d["ref"] = d["reference"] / d["dimension"].map(top)
    one_per_model = d.drop_duplicates(["prompt_id", "dimension", "model"])
    by = one_per_model.groupby(["prompt_id", "dimension"])["length"]
    at = pd.MultiIndex.from_frame(d[["prompt_id", "dimension"]])
    mean, sd = by.mean().reindex(at).to_numpy(), by.std(ddof=1).reindex(at).to_numpy()
    d["tanh_length"] = np.tanh((d["length"].to_numpy() - mean) / sd)

    def same(res: Any, ref: Any, kinds: tuple[str, ...]) -> None:
        terms = [t for t in ref.params.index if t.startswith(kinds)]
        assert len(terms) >= 3
        for t in terms:
            assert res.params[t] == pytest.approx(ref.params[t], abs=1e-10), t
            assert res.bse[t] == pytest.approx(ref.bse[t], rel=1e-8), t
        assert res.n == len(ref.model.endog)

    length = rb.length_controlled(sim.ratings, sim.families)
    same(length, _statsmodels_eq1(d, fams, length=True), ("self", "family", "length"))
    held = rb.leave_family_out(sim.ratings, sim.families)
    keys = ["prompt_id", "dimension", "model"]
    for fam in ("A", "B"):
        alt = d[d["judge"].map(fams) == fam].groupby(keys)["y"].mean()
        rest = d[(d["judge"].map(fams) != fam) & (d["model"].map(fams) != fam)].copy()
        rest["ref"] = alt.reindex(pd.MultiIndex.from_frame(rest[keys])).to_numpy()
        rest = rest[rest["ref"].notna()]
        same(held[fam], _statsmodels_eq1(rest, fams, length=False), ("self", "family"))
