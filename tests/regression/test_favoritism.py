"""Eq. 1: planted truth, coverage, statsmodels' own SEs, hand-checkable designs, real data."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from recuse.cli import main
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.regression.favoritism import (
    SIGNIFICANCE_WORDS,
    fit_favoritism,
    length_feature,
    narrow_judges,
    prepare,
    without_se,
)
from recuse.roster import Roster
from recuse.simulate.ratings import simulate_ratings


def test_recovers_planted_coefficients() -> None:
    sim = simulate_ratings(seed=3, n_prompts=150, noise_sd=0.1)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none", se="HC3")
    truth = sim.truth().reindex(res.params.index)
    assert not truth.isna().any()
    err = (res.params - truth).abs()
    assert (err < 4 * res.bse).all(), err[err >= 4 * res.bse]
    assert err[[t for t in err.index if t.startswith(("self", "family"))]].max() < 0.02


def test_noise_free_data_give_the_exact_coefficients() -> None:
    sim = simulate_ratings(seed=5, n_prompts=12, noise_sd=0.0)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    truth = sim.truth().reindex(res.params.index)
    np.testing.assert_allclose(res.params.to_numpy(), truth.to_numpy(), atol=1e-9)


def test_hand_checkable_design() -> None:
    # judge a (family F) and judge b (family G) rate models a and b on two prompts.
    # a: other -> 0.1 + 1.0*ref ; own -> same + 0.2   => δ_a 0.1, β_a 1, γ_a 0.2
    # b: other -> 0.0 + 0.5*ref ; own -> same - 0.1   => δ_b 0,   β_b .5, γ_b -0.1
    rows = []
    for p, ref_a, ref_b in (("p1", 0.2, 0.4), ("p2", 0.6, 0.8)):
        rows += [
            (p, "a", "a", 0.1 + ref_a + 0.2, ref_a),
            (p, "b", "a", 0.1 + ref_b, ref_b),
            (p, "a", "b", 0.5 * ref_a, ref_a),
            (p, "b", "b", 0.5 * ref_b - 0.1, ref_b),
        ]
    table = pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "rating", "reference"])
    table["dimension"] = "d"
    res = fit_favoritism(table, {"a": "F", "b": "G"}, normalize="none")
    p = res.params
    assert p["self[a]"] == pytest.approx(0.2, abs=1e-12)
    assert p["self[b]"] == pytest.approx(-0.1, abs=1e-12)
    assert p["reference:judge[a]"] == pytest.approx(1.0, abs=1e-12)
    assert p["judge[a]"] == pytest.approx(0.1, abs=1e-12)
    assert p["reference:judge[b]"] == pytest.approx(0.5, abs=1e-12)
    assert res.family_bias().empty  # no family has two members
    assert any("family-bias of F not estimable" in n for n in res.notes)
    # written with the minus sign of every other table (it was an ASCII hyphen here)
    (line,) = [x for x in res.summary().splitlines() if x.strip().startswith("b ")]
    assert line.split()[1] == "\u22120.10" and "-0." not in line


def test_90_percent_intervals_cover_the_truth_about_90_percent() -> None:
    hits, total = 0, 0
    fams = {"j0": "A", "j1": "A", "j2": "B", "j3": "B", "j4": "C"}
    for seed in range(100):
        sim = simulate_ratings(
            families=fams,
            n_prompts=30,
            noise_sd=0.15,
            seed=seed,
            self_bias={"j0": 0.05, "j1": -0.05, "j2": 0.0, "j3": 0.1, "j4": 0.02},
            family_bias={"A": 0.03, "B": -0.02},
        )
        res = fit_favoritism(sim.ratings, sim.families, normalize="none", se="HC3")
        truth = sim.truth()
        c = res.tidy()
        c = c[c["kind"].isin(["self", "family"])]
        t = truth.reindex(c["term"]).to_numpy()
        hits += int(((c["lower"].to_numpy() <= t) & (t <= c["upper"].to_numpy())).sum())
        total += len(c)
    assert total == 700
    assert 0.86 <= hits / total <= 0.94, hits / total


def _formula_frame(ratings: pd.DataFrame, families: dict[str, str]) -> pd.DataFrame:
    """Indicators built independently of the package, for statsmodels' formula API."""
    d = ratings.dropna(subset=["rating"]).copy()
    jf, mf = d["judge"].map(families), d["model"].map(families)
    d["self_label"] = np.where(d["judge"] == d["model"], d["judge"], "none")
    d["fam_label"] = np.where((jf == mf) & (d["judge"] != d["model"]), jf, "none")
    return d


@pytest.mark.parametrize("se", ["HC0", "HC1", "HC3", "cluster"])
def test_robust_ses_equal_statsmodels_formula_fit(se: str) -> None:
    sim = simulate_ratings(seed=11, n_prompts=40, unparsed=0.02)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none", se=se)  # type: ignore[arg-type]
    d = _formula_frame(sim.ratings, dict(sim.families))
    formula = (
        "rating ~ 0 + C(judge) + C(judge):reference + C(self_label, Treatment('none'))"
        " + C(fam_label, Treatment('none')) + C(dimension)"
    )
    kw = {"cov_kwds": {"groups": pd.factorize(d["prompt_id"])[0]}} if se == "cluster" else {}
    ref = smf.ols(formula, data=d).fit(cov_type=se, **kw)
    for judge in sim.families:
        name = f"C(self_label, Treatment('none'))[T.{judge}]"
        assert res.params[f"self[{judge}]"] == pytest.approx(ref.params[name], abs=1e-10)
        assert res.bse[f"self[{judge}]"] == pytest.approx(ref.bse[name], rel=1e-8)
    for fam in ("A", "B"):
        name = f"C(fam_label, Treatment('none'))[T.{fam}]"
        assert res.params[f"family[{fam}]"] == pytest.approx(ref.params[name], abs=1e-10)
        assert res.bse[f"family[{fam}]"] == pytest.approx(ref.bse[name], rel=1e-8)
    assert res.n == len(d)


def test_normalisation_modes() -> None:
    sim = simulate_ratings(seed=2, n_prompts=30)
    base = fit_favoritism(sim.ratings, sim.families, normalize="max").params
    scaled = sim.ratings.assign(
        rating=sim.ratings["rating"] * 4, reference=sim.ratings["reference"] * 4
    )
    assert np.allclose(fit_favoritism(scaled, sim.families, normalize="max").params, base)
    raw = fit_favoritism(sim.ratings, sim.families, normalize="none").params
    raw4 = fit_favoritism(scaled, sim.families, normalize="none").params
    s = [t for t in raw.index if t.startswith(("self", "family"))]
    assert np.allclose(raw4[s], 4 * raw[s])
    shifted = sim.ratings.assign(
        rating=sim.ratings["rating"] * 3 + 1, reference=sim.ratings["reference"] * 3 + 1
    )
    r1 = fit_favoritism(sim.ratings, sim.families, normalize="range").params
    r2 = fit_favoritism(shifted, sim.families, normalize="range").params
    assert np.allclose(r1, r2)
    # max-normalisation divides by the largest rating or reference in the dimension
    p = prepare(sim.ratings, sim.families, normalize="max")
    for dim, g in sim.ratings.groupby("dimension"):
        m = max(g["rating"].max(), g["reference"].max())
        assert p.scales.set_index("dimension").loc[dim, "scale"] == pytest.approx(m)


def test_a_stray_score_that_sets_the_scale_alone_is_said() -> None:
    """One rating of 100 where the others lie within about 0-1: max-normalisation
    divides every score of that dimension by 100, not by about 1, and the fit ran with
    nothing to show it. A note names the dimension and the row."""
    sim = simulate_ratings(seed=2, n_prompts=30)
    clean = fit_favoritism(sim.ratings, sim.families)
    assert not [n for n in clean.warnings if "apart" in n]
    stray = sim.ratings.copy()
    stray.loc[7, "rating"] = 100.0
    row = stray.loc[7]
    res = fit_favoritism(stray, sim.families)
    (note,) = [n for n in res.warnings if "apart" in n]
    assert f"dimension {row['dimension']!r}: its top score 100 (held by 1 of 1,500" in note
    assert f"judge {row['judge']!r} on model {row['model']!r}, prompt {row['prompt_id']!r}" in note
    d = stray[stray["dimension"] == row["dimension"]]
    others = np.concatenate([d["rating"], d["reference"]])
    others = others[others < 100]
    assert f"({others.min():g} to {others.max():g})" in note
    # what it warns of: that dimension's scores are divided by 100, not by about 1
    assert res.scales.set_index("dimension").loc[row["dimension"], "scale"] == 100
    # "range" also reads the bottom; "none" divides by nothing
    low = sim.ratings.copy()
    low.loc[3, "reference"] = -50.0
    (note,) = [
        n for n in fit_favoritism(low, sim.families, normalize="range").warnings if "apart" in n
    ]
    assert "its bottom score -50 (held by 1 of 1,500" in note
    assert not fit_favoritism(low, sim.families).warnings
    assert not [
        n for n in fit_favoritism(stray, sim.families, normalize="none").warnings if "apart" in n
    ]
    # a score so far out that columns underflow to nothing: the error says why
    huge = sim.ratings[sim.ratings["dimension"] == "d1"].copy()
    huge.loc[huge.index[7], "rating"] = 1e300
    with pytest.raises(EstimationError, match=r"are 0 in every row.*its top score 1e\+300"):
        fit_favoritism(huge, sim.families)


def test_a_rarely_used_top_of_a_two_valued_scale_is_not_called_stray() -> None:
    sim = simulate_ratings(seed=2, n_prompts=30)
    binary = sim.ratings.assign(rating=0.0, reference=(sim.ratings["reference"] > 0.5) * 1.0)
    binary.loc[5, "rating"] = 1.0
    assert not prepare(binary, sim.families).warnings


def test_unparsed_rows_are_excluded_and_counted() -> None:
    sim = simulate_ratings(seed=4, n_prompts=20, unparsed=0.05)
    n_bad = int(sim.ratings["rating"].isna().sum())
    assert n_bad > 0
    res = fit_favoritism(sim.ratings, sim.families)
    assert res.n_excluded == {"unparsed": n_bad}
    assert res.n == len(sim.ratings) - n_bad


def test_result_is_immutable_and_renders() -> None:
    sim = simulate_ratings(seed=1, n_prompts=20)
    fams = {k: v for k, v in sim.families.items()}
    res = fit_favoritism(sim.ratings, fams, se="HC1", level=0.8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.level = 0.5  # type: ignore[misc]
    t = res.tidy()
    t.loc[:, "estimate"] = 0.0
    assert (res.tidy()["estimate"] != 0).any()
    assert list(res.self_bias().columns[:3]) == ["judge", "family", "estimate"]
    wide, narrow = res.conf_int(0.95), res.conf_int()
    assert ((wide["upper"] - wide["lower"]) > (narrow["upper"] - narrow["lower"])).all()
    assert np.allclose(narrow["lower"].to_numpy(), res.tidy()["lower"].to_numpy())
    assert "Self-bias" in res.summary() and "j3" in res.summary()
    json.dumps(res.to_dict())


def test_html_escapes_names() -> None:
    sim = simulate_ratings(seed=1, n_prompts=15, families={"<b>x": "F", "y": "F", "z": "G"})
    res = fit_favoritism(sim.ratings, sim.families)
    out = res.to_html()
    assert "<b>x" not in out and "&lt;b&gt;x" in out


def test_bad_input_raises_clear_errors() -> None:
    sim = simulate_ratings(seed=1, n_prompts=10)
    with pytest.raises(InputError, match="reference"):
        fit_favoritism(sim.ratings.drop(columns=["reference"]), sim.families)
    with pytest.raises(InputError, match="no family"):
        fit_favoritism(sim.ratings, {"j0": "A"})
    with pytest.raises(ConfigError, match="standard-error"):
        fit_favoritism(sim.ratings, sim.families, se="HC9")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="level"):
        fit_favoritism(sim.ratings, sim.families, level=90)
    # references that never vary for one judge: its slope is not identified
    flat = sim.ratings.assign(
        reference=sim.ratings["reference"].where(sim.ratings["judge"] != "j0", 0.5)
    )
    with pytest.raises(EstimationError, match=r"reference does not vary among judge j0"):
        fit_favoritism(flat, sim.families, normalize="none")
    # ... nor where they are all 0 (its column is empty): it said 'design column(s) with
    # no data: reference:judge[j0]', without the cause
    zero = sim.ratings.assign(reference=flat["reference"].where(flat["judge"] != "j0", 0))
    with pytest.raises(EstimationError) as err:
        fit_favoritism(zero, sim.families)
    assert "reference:judge[j0] are 0 in every row" in str(err.value)
    assert "the reference does not vary among judge j0's ratings" in str(err.value)
    # every rating and reference 0: the ratings carry nothing, said first
    with pytest.raises(EstimationError, match=r"^every rating is the same \(0\)"):
        fit_favoritism(sim.ratings.assign(rating=0.0, reference=0.0), sim.families)


def test_ratings_that_differ_only_at_rounding_are_refused_not_fitted_exactly() -> None:
    """Scores that vary, but by less than the rounding of their size, were fitted as an
    exact fit and written as results: 1e15 + a 1-5 score gave every coefficient a
    standard error of 0 and z = inf ('significant'); scores of 1e-300 beside references
    of 1-5 gave every coefficient 0 with z NaN. Both are refused, saying why."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    assert fit_favoritism(sim.ratings, sim.families).coefficients["se"].gt(0).all()
    offset = sim.ratings.assign(rating=sim.ratings["rating"] + 1e15)
    with pytest.raises(EstimationError, match=r"^the ratings differ by too little"):
        fit_favoritism(offset, sim.families)
    # scores of 1e-300 differ by plenty for their size; their squares underflow: said so
    tiny = sim.ratings.assign(rating=sim.ratings["rating"] * 1e-300)
    with pytest.raises(EstimationError, match=r"once scaled, below the 1e-50 whose fourth"):
        fit_favoritism(tiny, sim.families)


def test_ratings_too_large_to_fit_in_floating_point_are_refused() -> None:
    """Unnormalised ratings and references of 1e160 stopped in X'X's eigenvalues
    (LinAlgError: a traceback through the CLI) and 1e150 left every term without a
    standard error, said to be 'not separable from the fit's other terms'. Up to the
    limit the fit is equivariant: each coefficient scales with the ratings (slopes on
    the reference do not) and each standard error with them; above it, a refusal."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    base = fit_favoritism(sim.ratings, sim.families, normalize="none").coefficients
    factor = 1e40
    big = sim.ratings.assign(
        rating=sim.ratings["rating"] * factor, reference=sim.ratings["reference"] * factor
    )
    scaled = fit_favoritism(big, sim.families, normalize="none").coefficients
    slope = base["term"].str.startswith("reference:").to_numpy()
    times = np.where(slope, 1.0, factor)
    assert np.allclose(scaled["estimate"], base["estimate"] * times, rtol=1e-6, atol=0)
    assert np.allclose(scaled["se"], base["se"] * times, rtol=1e-6, atol=0)
    for factor in (1e51, 1e160, 1e300):
        huge = sim.ratings.assign(
            rating=sim.ratings["rating"] * factor, reference=sim.ratings["reference"] * factor
        )
        with pytest.raises(EstimationError, match=r"once scaled, above the 1e\+50"):
            fit_favoritism(huge, sim.families, normalize="none")


def test_nearly_dependent_columns_are_named() -> None:
    """References of 1e6 plus a tenth of a 1-5 score, unnormalised, make each judge's
    reference slope nearly its intercept (they vary by 1e-7 of their size). The design
    was refused naming 'column(s) ?': no column's QR diagonal was negligible though the
    equilibrated X'X was singular at 1e-10. The terms of that near-dependency are named."""
    from regression.conftest import seven_ratings

    big = seven_ratings()
    big[["rating", "reference"]] = 1e6 + big[["rating", "reference"]] / 10
    families = {"gpt-4o": "gpt-4o", "claude-2.1": "claude-2.1"}
    with pytest.raises(EstimationError) as err:
        fit_favoritism(big, families, normalize="none")
    said = str(err.value)
    assert "?" not in said
    for term in ("judge[gpt-4o]", "reference:judge[gpt-4o]", "reference:judge[claude-2.1]"):
        assert term in said.split(" are (nearly) linear combinations")[0]


def test_every_nearly_dependent_direction_is_named_with_its_cause() -> None:
    """References offset by 1e6 for all five judges: five near-dependencies (each
    judge's reference slope nearly its intercept). Only the weakest direction's terms
    were named (judge[j0], judge[j1] and their slopes), so fixing those two would not
    have fitted; and the cause read 'references that vary', which they do. Every
    judge's two terms are named now, and the offset as the cause."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    shifted = sim.ratings.assign(reference=sim.ratings["reference"] + 1e6)
    spread = (shifted.groupby("judge")["reference"].std() / 1e6).min()  # by hand
    with pytest.raises(EstimationError) as err:
        fit_favoritism(shifted, sim.families, normalize="none")
    named, cause = str(err.value).split(" are (nearly) linear combinations of the others — ")
    judges = sorted(sim.ratings["judge"].unique())
    assert len(judges) == 5
    for j in judges:
        assert f"judge[{j}]" in named and f"reference:judge[{j}]" in named
    assert cause.startswith(
        f"the references of judge(s) {', '.join(judges)} vary by as little as {spread:.1g} "
        "of their size (around 1e+06)"
    )


def test_a_term_equal_to_the_intercepts_is_left_out_with_a_note() -> None:
    sim = simulate_ratings(seed=1, n_prompts=10)
    # j0 rates only its own completions: its self term would equal its intercept
    own_only = sim.ratings[(sim.ratings["judge"] != "j0") | (sim.ratings["model"] == "j0")]
    res = fit_favoritism(own_only, sim.families)
    assert "self[j0]" not in res.params.index and "self[j1]" in res.params.index
    assert "self-bias of j0 not estimable: it rates only its own completions" in res.notes
    # the A judges (j0, j1) rate only A models: family term = intercepts − self terms
    closed = sim.ratings[
        ~sim.ratings["judge"].isin(["j0", "j1"]) | sim.ratings["model"].isin(["j0", "j1"])
    ]
    res = fit_favoritism(closed, sim.families)
    assert "family[A]" not in res.params.index and "family[B]" in res.params.index
    assert any("family-bias of A not estimable: its judges rate only" in n for n in res.notes)


def test_length_feature_is_tanh_of_within_prompt_z_score() -> None:
    sim = simulate_ratings(seed=9, n_prompts=5)
    p = prepare(sim.ratings, sim.families)
    feat = length_feature(p.frame)
    f = p.frame.assign(feat=feat)
    one = f[(f["prompt_id"] == "p2") & (f["dimension"] == "d1")]
    lengths = one.drop_duplicates("model").set_index("model")["length"]
    z = (lengths - lengths.mean()) / lengths.std(ddof=1)
    got = one.drop_duplicates("model").set_index("model")["feat"]
    assert np.allclose(got, np.tanh(z))


# ------------------------------------------------------------------ real data

PINNED_SELF = {
    "claude-2.1": 0.0061,
    "claude-3-sonnet-20240229": 0.0138,
    "claude-3.5-sonnet-20241022": 0.0439,
    "gpt-3.5-turbo": 0.0343,
    "gpt-4o": 0.0309,
    "llama-3.1-70b-instruct": -0.0053,
    "llama-3.1-8b-instruct": -0.1129,
    "mistral-7b-instruct-v0.2": -0.0122,
    "mistral-large-2407": 0.0140,
}
PINNED_FAMILY = {"claude": 0.0146, "gpt": 0.0188, "llama": -0.0443, "mistral": -0.0088}


@pytest.fixture(scope="module")
def play_favorites(shared_data):  # type: ignore[no-untyped-def]
    from recuse.data import load

    return load("play-favorites", data_dir=shared_data)


def _statsmodels_play_favorites(ratings: pd.DataFrame, roster: Roster) -> object:
    """Eq. 1 fitted by statsmodels' formula API on a frame built here, not by
    :func:`prepare`: each dimension's ratings and references divided by the largest of
    either in that dimension ("max" normalisation), self = the judge rating its own id,
    family = another model of the judge's roster family; HC0 standard errors."""
    d = ratings.copy()
    d["rating"] = pd.to_numeric(d["rating"], errors="coerce")
    d["reference"] = pd.to_numeric(d["reference"], errors="coerce")
    d = d.dropna(subset=["rating", "reference"]).reset_index(drop=True)
    top = d.groupby("dimension")[["rating", "reference"]].transform("max").max(axis=1)
    d["y"], d["ref"] = d["rating"] / top, d["reference"] / top
    jf, mf = d["judge"].map(roster.family), d["model"].map(roster.family)
    d["self_label"] = np.where(d["judge"] == d["model"], d["judge"], "none")
    d["fam_label"] = np.where((jf == mf) & (d["judge"] != d["model"]), jf, "none")
    formula = (
        "y ~ 0 + C(judge) + C(judge):ref + C(self_label, Treatment('none'))"
        " + C(fam_label, Treatment('none')) + C(dimension)"
    )
    return smf.ols(formula, data=d).fit(cov_type="HC0")


def test_real_play_favorites_estimates_are_pinned(play_favorites: pd.DataFrame) -> None:
    roster = Roster.load()
    res = fit_favoritism(play_favorites, roster, se="HC0")
    assert res.n == 63_222
    assert not res.warnings  # no stray score on real data
    sb, fb = res.self_bias(), res.family_bias()
    assert len(sb) == 9 and len(fb) == 4
    got_self = dict(zip(sb["judge"], sb["estimate"], strict=True))
    got_fam = dict(zip(fb["family"], fb["estimate"], strict=True))
    # every γ_j and λ_F (and its HC0 standard error) is statsmodels' on a frame built here
    ref = _statsmodels_play_favorites(play_favorites, roster)
    assert int(ref.nobs) == res.n  # type: ignore[attr-defined]
    ref_params, ref_bse = ref.params, ref.bse  # type: ignore[attr-defined]
    for _, row in sb.iterrows():
        name = f"C(self_label, Treatment('none'))[T.{row['judge']}]"
        assert row["estimate"] == pytest.approx(ref_params[name], abs=1e-10), name
        assert row["se"] == pytest.approx(ref_bse[name], rel=1e-8), name
    for _, row in fb.iterrows():
        name = f"C(fam_label, Treatment('none'))[T.{row['family']}]"
        assert row["estimate"] == pytest.approx(ref_params[name], abs=1e-10), name
        assert row["se"] == pytest.approx(ref_bse[name], rel=1e-8), name
    # the pinned figures (4 decimals) are a second check on the same numbers
    for k, v in PINNED_SELF.items():
        assert got_self[k] == pytest.approx(v, abs=5e-5), k
    for k, v in PINNED_FAMILY.items():
        assert got_fam[k] == pytest.approx(v, abs=5e-5), k
    # the paper's qualitative findings: GPT models and Claude 3.5 Sonnet favour
    # themselves, Llama 3 8B is significantly negative, claude and gpt favour family
    sig = dict(zip(sb["judge"], sb["significant"], strict=True))
    for j in ("gpt-4o", "gpt-3.5-turbo", "claude-3.5-sonnet-20241022"):
        assert got_self[j] > 0 and sig[j]
    assert got_self["llama-3.1-8b-instruct"] < 0 and sig["llama-3.1-8b-instruct"]
    assert got_fam["claude"] > 0 and got_fam["gpt"] > 0


@pytest.mark.slow
def test_default_cluster_errors_cover_with_correlated_ratings_and_hc0_does_not() -> None:
    """Three dimensions of one answer share an error (answer_sd): ratings of a prompt are
    correlated. The default (cluster by prompt, CR1) covers the planted self-biases at
    90% ± 3 points; HC0, which treats the ratings as independent, does not."""
    from recuse.regression.favoritism import fit_prepared, prepare

    gamma = {"j0": 0.1, "j1": 0.0, "j2": 0.05, "j3": -0.05, "j4": 0.0}
    covered: dict[str, list[bool]] = {"cluster": [], "HC0": []}
    for seed in range(150):
        sim = simulate_ratings(
            n_prompts=30, dimensions=("d1", "d2", "d3"), noise_sd=0.05, answer_sd=0.1,
            self_bias=gamma, seed=seed,
        )  # fmt: skip
        prepared = prepare(sim.ratings, sim.families, normalize="none")
        for se in covered:
            sb = fit_prepared(prepared, se=se, level=0.9).self_bias()  # type: ignore[arg-type]
            bounds = zip(sb["judge"], sb["lower"], sb["upper"], strict=True)
            covered[se] += [lo <= gamma[j] <= hi for j, lo, hi in bounds]
    rate = {se: float(np.mean(v)) for se, v in covered.items()}
    n = len(covered["cluster"])  # 750 intervals; binomial SE at 0.9 is about 1.1 points
    assert abs(rate["cluster"] - 0.90) <= 0.03, (rate, n)
    assert rate["HC0"] < 0.85, (rate, n)
    assert fit_prepared(prepared).se_type.startswith("cluster")  # the default


def test_a_term_on_few_prompts_reads_t_on_those_prompts_less_one() -> None:
    """Lopsided cells: model j0's answers on 5 of 40 prompts, so judge j0's own ratings
    (γ_j0's rows) lie on those 5. Its cluster-robust error rests on them, and t on the 40
    prompts less one held a planted γ 0.81 of the time at 90% (300 tables,
    docs/statistics.md): its interval and p-value read t on 4 df (scipy's), the other
    judges' on 39."""
    from scipy import stats

    sim = simulate_ratings(n_prompts=40, dimensions=("a", "b"), seed=1)
    r = sim.ratings
    few = r["prompt_id"].isin(["p1", "p5", "p9", "p20", "p33"])
    res = fit_favoritism(r[(r["model"] != "j0") | few], sim.families)
    sb = res.self_bias().set_index("judge")
    for judge, df in (("j0", 4), ("j1", 39)):
        g = sb.loc[judge]
        assert g["df"] == df
        half = stats.t.ppf(0.95, df) * g["se"]
        assert (g["lower"], g["upper"]) == pytest.approx(
            (g["estimate"] - half, g["estimate"] + half)
        )
        assert g["p"] == pytest.approx(2 * stats.t.sf(abs(g["estimate"] / g["se"]), df))
    assert res.conf_int().loc["self[j0]"].tolist() == pytest.approx(
        [sb.loc["j0", "lower"], sb.loc["j0", "upper"]]
    )
    assert "on fewer prompts: on those less one" in res.se_type
    # the z and p definitions said "Student's t on 39 df (the clusters less one)" of
    # every term, j0's p read on 4: they send the reader to each term's df column
    words = res.to_dict()["definitions"]
    for column in ("z", "p"):
        assert "t on each term's df (its df column" in words[column]
        assert (
            "on 39 df" not in words[column] and "39 where it has ratings in every" in words[column]
        )
    assert res.term_prompts["self[j0]"] == 5 and not res.few_prompts("self[j0]")
    # on 3 prompts: said in the fit's notes (the command prints them), under FEW_CLUSTERS
    three = fit_favoritism(r[(r["model"] != "j0") | r["prompt_id"].isin(["p1", "p5", "p9"])],
                           sim.families)  # fmt: skip
    assert three.term_prompts["self[j0]"] == 3 and three.term_prompts["self[j1]"] == 40
    (note,) = [n for n in three.notes if n.startswith("γ_j of j0: its")]
    assert "lie on only 3 prompts" in note and note in three.few_prompts("self[j0]")


def test_cluster_variable_can_be_chosen_and_is_checked() -> None:
    from recuse.regression.favoritism import fit_prepared

    sim = simulate_ratings(n_prompts=30, seed=3)
    prepared = prepare(sim.ratings, sim.families, normalize="none")
    by_prompt = fit_prepared(prepared)
    by_task = fit_prepared(prepared, cluster="task")
    assert by_task.se_type.startswith("cluster-robust by task (CR1), Student t on 1 df")  # 2 tasks
    assert np.allclose(by_prompt.coefficients["estimate"], by_task.coefficients["estimate"])
    assert not np.allclose(by_prompt.coefficients["se"], by_task.coefficients["se"])
    with pytest.raises(ConfigError, match="--cluster 'nope'"):
        fit_prepared(prepared, cluster="nope")


def test_each_result_states_its_unit_and_no_bias_value() -> None:
    """γ and λ say what one unit is under the normalisation used, and that 0 is no
    bias; before, every normalisation was labelled 'normalised score' (raw ratings
    with --normalize none too) and the JSON carried no unit or no-bias value."""
    sim = simulate_ratings(seed=1, n_prompts=20)
    by = {n: fit_favoritism(sim.ratings, sim.families, normalize=n) for n in ("max", "none")}
    assert by["none"].scale_note == "rating points"
    assert by["max"].scale_note == "normalised score"
    assert "top" in by["max"].definition("self") and "top" not in by["none"].definition("self")
    for res in by.values():
        d = res.to_dict()["definitions"]
        assert d["null"] == 0.0
        assert d["self_bias"] == res.definition("self") and "0 = no self-bias" in d["self_bias"]
        assert "0 = no family bias" in d["family_bias"]
        assert res.scale_note in d["self_bias"] and res.scale_note in d["family_bias"]
        # `significant` (in every row) is defined where the numbers are: the table's
        # 'sig. *' said it is each interval alone, not the audit's flag; the JSON did not
        assert d["significant"] == (
            f"the 90% interval [lower, upper] excludes 0 ({SIGNIFICANCE_WORDS})"
        )
        assert "no multiple-testing adjustment" in d["significant"]


def test_the_significance_words_hold_with_and_without_the_audits_adjustment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The words said the audit flags what its Benjamini–Hochberg adjustment keeps, untrue
    under ``recuse audit --no-fdr``, which flags each interval alone: they name both,
    with the option as ``recuse audit --help`` spells it."""
    assert "Benjamini–Hochberg adjustment keeps" in SIGNIFICANCE_WORDS
    assert "(with --no-fdr, whose own interval excludes 0)" in SIGNIFICANCE_WORDS
    assert main(["audit", "--help"]) == 0
    assert "--no-fdr" in capsys.readouterr().out.split()


def test_one_rating_per_dimension_flags_no_bias() -> None:
    """Every judge gives 3 to everything, on two dimensions whose scales differ (so the
    normalised ratings are not all equal and the 'every rating is the same' error does
    not apply): the dimension effects fit exactly, and no self or family term may be
    'significant'. Before, every γ and λ was ±1e-17 with a standard error of 1e-18 and
    flagged (the audit said 'rates its own answers lower than the reference warrants')."""
    sim = simulate_ratings(seed=1, n_prompts=20)
    d1 = (sim.ratings["dimension"] == "d1").to_numpy()
    flat = sim.ratings.assign(rating=3.0, reference=sim.ratings["reference"] * (1 + 3 * d1))
    res = fit_favoritism(flat, sim.families)
    bias = pd.concat([res.self_bias(), res.family_bias()])
    assert not bias["significant"].any()
    assert (bias["estimate"] == 0).all()


def test_a_rating_that_is_no_number_is_refused_not_excluded_as_ok() -> None:
    """A ratings DataFrame passed straight to fit_favoritism with ratings written as
    text ("seven") lost those rows without a word but "excluded: 300 ok" (the status
    of rows the judge did rate); ratings True / False read "every rating is the same
    (0)"."""
    sim = simulate_ratings(seed=4, n_prompts=20)
    text = sim.ratings.assign(rating=sim.ratings["rating"].astype(object))
    text.loc[7, "rating"] = "seven"
    flags = sim.ratings.assign(reference=sim.ratings["reference"] > 0.5)
    for table, column, said in ((text, "rating", "'seven'"), (flags, "reference", "False")):
        with pytest.raises(InputError) as err:
            fit_favoritism(table, sim.families)
        assert (err.value.column, err.value.row) == (column, 8 if column == "rating" else 1)
        assert said in str(err.value) and "validate_ratings" in str(err.value)
    # numbers written as text are numbers; an empty rating with its status is excluded
    as_text = sim.ratings.assign(rating=sim.ratings["rating"].map(repr))
    same = fit_favoritism(as_text, sim.families).n
    assert same == fit_favoritism(sim.ratings, sim.families).n == len(sim.ratings)


def test_a_column_named_twice_is_an_error_naming_it() -> None:
    """``concat(axis=1)`` of a ratings table and its rating column: ``ratings["rating"]``
    is a frame, and the fit stopped with pandas' TypeError "arg must be a list, tuple,
    1-d array, or Series"; now the header's error, naming the column."""
    sim = simulate_ratings(seed=5, n_prompts=12, noise_sd=0.0)
    twice = pd.concat([sim.ratings, sim.ratings[["rating"]]], axis=1)
    for call in (
        lambda: fit_favoritism(twice, sim.families),
        lambda: prepare(twice, sim.families),
    ):
        with pytest.raises(InputError, match="2 columns named 'rating'") as err:
            call()
        assert err.value.column == "rating"


def test_the_json_keeps_every_digit_of_a_small_p_value() -> None:
    """favoritism.json rounded to 10 decimal places (pandas' to_json): claude-3-sonnet's
    self-bias p of 4.5e-10 on play-favorites read 5e-10 beside coefficients.csv's
    4.5e-10. The JSON's numbers are now the fit's own, every digit. A planted self-bias
    gives p-values from about 0.1 to 1e-14: each JSON value equals the table's."""
    gammas = {"j0": 0.0, "j1": 0.05, "j2": 0.07, "j3": -0.06, "j4": 0.1}
    sim = simulate_ratings(seed=3, n_prompts=40, self_bias=gammas)
    res = fit_favoritism(sim.ratings, sim.families, se="HC1")
    table = res.self_bias().set_index("judge")
    rows = json.loads(json.dumps(res.to_dict()))["self_bias"]
    assert any(1e-12 < r["p"] < 1e-4 for r in rows), [r["p"] for r in rows]
    for r in rows:
        for key in ("estimate", "se", "p", "lower", "upper"):
            assert r[key] == float(table.loc[r["judge"], key]), (r["judge"], key)


def test_a_term_fitted_exactly_by_its_own_rating_has_no_standard_error() -> None:
    """Each judge rates its own model once beside two other ratings: its intercept,
    slope and γ fit its three ratings exactly, so nothing in the data measures γ's noise
    (its standard error is 0 but for rounding), while a third judge leaves residuals in
    the fit. The rounding's sign decided: a variance of −1e-33 read as no finite standard
    error (not estimated), one of +6e-32 as γ = +0.4000 with se 0.0000, an interval
    [+0.4000, +0.4000] and 'significant', subtracted by the correction. Both γ are now
    without a standard error, named in the notes and not significant."""
    from regression.conftest import exact_selves

    families = {"gpt-4o": "gpt", "claude-2.1": "claude", "x-judge": "x"}
    res = fit_favoritism(exact_selves(), families)
    gamma = res.self_bias().set_index("judge")
    # by hand, ratings ÷ 5: gpt-4o's others lie on 0.8 → 0.8 and 0.6 → 0.4 (slope 2,
    # intercept -0.8), so its own at 0.8 is predicted 0.8 and reads 1.0: γ = 0.2;
    # claude-2.1's on 0.8 → 0.6, 0.6 → 0.8 (slope -1, intercept 1.4): 0.6 for 1.0, γ = 0.4
    assert gamma["estimate"].to_dict() == pytest.approx({"claude-2.1": 0.4, "gpt-4o": 0.2})
    assert gamma["se"].isna().all() and not gamma["significant"].any(), gamma
    assert without_se(res.coefficients) == ["γ_j of claude-2.1", "γ_j of gpt-4o"]
    assert sum("no finite standard error" in n for n in res.notes) == 2, res.notes


@pytest.mark.parametrize("factor", [1e-7, 1e49])
def test_a_fit_on_an_extreme_scale_is_written_in_units_of_a_power_of_ten(
    factor: float,
) -> None:
    """Unnormalised scores of 1e49 wrote each γ in fifty digits (the last thirty-four a
    float's noise), scores of 1e-7 each γ as +0.0000, starred significant: 'no bias'.
    The summary and the HTML write each table in units of the power of ten of its
    largest number, said in the title (the caption), at the precision the numbers beside
    it choose; the JSON keeps every digit."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    scaled = sim.ratings.assign(
        rating=sim.ratings["rating"] * factor, reference=sim.ratings["reference"] * factor
    )
    res = fit_favoritism(scaled, sim.families, normalize="none")
    gamma = res.self_bias()
    numbers = gamma[["estimate", "se", "lower", "upper"]].to_numpy(float)
    power = int(np.floor(np.log10(np.abs(numbers).max())))  # by hand: the largest's
    assert power == (48 if factor > 1 else -8)  # from equivariance: the unscaled γ ~ 0.1
    unit = "in units of 10" + str(power).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    lines = res.summary().splitlines()
    assert f"Self-bias γ_j ({unit})" in lines
    assert max(len(x) for x in lines if x.startswith("  ")) < 50  # the tables' rows
    # each γ, its error and interval at two decimals (the largest, scaled, is over 0.1)
    for _, r in gamma.iterrows():
        e, s, lo, hi = (r[c] / 10.0**power for c in ("estimate", "se", "lower", "upper"))
        want = f"{e:+.2f}  se {s:.2f}  [{lo:.2f}, {hi:.2f}]".replace("-", "\u2212")
        (line,) = [x for x in lines if x.startswith(f"  {r['judge']}  ")]
        assert " ".join(want.split()) in " ".join(line.split()), (line, want)
        if r["significant"]:
            assert line.endswith(" *") and abs(e) >= 0.005  # never reads 0 when starred
    page = res.to_html()
    assert f"<caption>estimate, se, lower and upper {unit}</caption>" in page
    cells = [c.split("</td>")[0] for c in page.split("<td>")[1:]]
    assert max(map(len, cells)) < 12 and "0.0000" not in page
    assert json.loads(json.dumps(res.to_dict()))["self_bias"][0]["estimate"] == float(
        gamma["estimate"].iloc[0]
    )


def test_the_html_table_writes_p_values_minus_signs_and_counts_as_the_report_does() -> None:
    """to_html wrote every float with four decimals: an ASCII hyphen beside the U+2212 of
    every other table, a p-value of 1.4e-4 as 0.0001 (and 2e-6 as 0.0000), and NaN as
    'nan'. Now p reads as every p-value reads (< 0.001, 0.009), z with two decimals,
    estimate/se/interval as the summary writes them, nothing not finite written."""
    sim = simulate_ratings(seed=3, n_prompts=25)  # a p under 0.001 (t on 24 df)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    gamma = res.self_bias()
    page = res.to_html()
    rows = [r for r in page.splitlines() if r.startswith("<tr><td>j")]
    assert len(rows) == len(gamma)
    for row, (_, r) in zip(rows, gamma.iterrows(), strict=True):
        cells = row.removeprefix("<tr><td>").removesuffix("</td></tr>").split("</td><td>")
        assert cells[:2] == [r["judge"], r["family"]]
        p = float(r["p"])
        assert cells[5] == ("&lt; 0.001" if p < 0.001 else f"{p:.3f}"), (cells, p)
        assert cells[4] == f"{r['z']:.2f}".replace("-", "\u2212")
        assert cells[2] == f"{r['estimate']:+.3f}".replace("-", "\u2212")  # all under 0.1
        assert cells[6] == f"{r['lower']:.3f}".replace("-", "\u2212")
        assert "-" not in "".join(cells[2:])
    assert any(float(p) < 0.001 for p in gamma["p"])  # the < 0.001 branch is exercised


@pytest.mark.parametrize("factor", [1e-9, 1e-8, 1e-20])
def test_a_fit_on_small_scores_is_the_fit_scaled(factor: float) -> None:
    """Residuals within 1e-9 of the scores' size, or 1 if larger, were rounding: scores of
    1e-9 fitted every residual as rounding (an 'exact fit'), each γ 0 with a standard
    error of 0; scores of 1e-8 left every γ without one; of 1e-10, refused as 'differing
    by too little for their size'. The fit is equivariant as on large scores: each
    coefficient and standard error scales with the scores (slopes do not), z is the same."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    base = fit_favoritism(sim.ratings, sim.families, normalize="none").coefficients
    small = sim.ratings.assign(
        rating=sim.ratings["rating"] * factor, reference=sim.ratings["reference"] * factor
    )
    scaled = fit_favoritism(small, sim.families, normalize="none").coefficients
    slope = base["term"].str.startswith("reference:").to_numpy()
    times = np.where(slope, 1.0, factor)
    assert np.allclose(scaled["estimate"], base["estimate"] * times, rtol=1e-6, atol=0)
    assert np.allclose(scaled["se"], base["se"] * times, rtol=1e-6, atol=0)
    assert np.allclose(scaled["z"], base["z"], rtol=1e-6, atol=0)
    assert (scaled["significant"] == base["significant"]).all()


def test_a_starred_interval_never_reads_as_touching_0() -> None:
    """γ = +0.20 [0.0004, 0.40] excludes 0, starred ("* interval excludes 0"), and was
    written ``[0.00, 0.40] *`` at the table's two decimals, as if it touched 0. The table
    takes the decimals that write that end off 0 (one precision for all its rows); a
    table whose intervals hold 0 or sit clear of it keeps its two."""
    from recuse.regression.favoritism import coefficient_cells

    tab = pd.DataFrame({"estimate": [0.2, -0.3], "se": [0.12, 0.1], "lower": [0.0004, -0.46],
                        "upper": [0.4, -0.14]})  # fmt: skip
    cells, scale = coefficient_cells(tab)
    assert scale == "" and cells == [
        ("+0.2000", "0.1200", "0.0004", "0.4000"),
        ("\u22120.3000", "0.1000", "\u22120.4600", "\u22120.1400"),
    ]
    holds = tab.assign(lower=[-0.004, -0.46])  # [−0.004, 0.40] holds 0: not starred
    assert coefficient_cells(holds)[0][0] == ("+0.20", "0.12", "\u22120.00", "0.40")
    clear = tab.assign(lower=[0.04, -0.46])
    assert coefficient_cells(clear)[0][0] == ("+0.20", "0.12", "0.04", "0.40")


def test_a_scale_just_past_the_limit_reads_past_it() -> None:
    """Ratings whose largest is 1.0004e50 (normalize none) are refused as above the
    1e+50 the fit can square twice, and three significant digits wrote "1e+50 once
    scaled, above the 1e+50"; ratings whose largest is 9.9996e-51 read "1e-50 …, below
    the 1e-50". Each takes the digits that put it past the limit."""
    sim = simulate_ratings(seed=3, n_prompts=20)
    top = float(sim.ratings["rating"].abs().max())
    for target, said in ((1.0004e50, "1.0004e+50 once scaled, above the 1e+50"),
                         (9.9996e-51, "9.9996e-51 once scaled, below the 1e-50")):  # fmt: skip
        scaled = sim.ratings.assign(rating=sim.ratings["rating"] / top * target)
        assert float(scaled["rating"].abs().max()) == pytest.approx(target, rel=1e-12)
        with pytest.raises(EstimationError, match=re.escape(said)):
            fit_favoritism(scaled, sim.families, normalize="none")


def test_a_judge_rating_on_a_smaller_scale_than_the_others_is_said() -> None:
    """One judge rating 0-1 among judges and references on 1-10: max-normalisation
    divides its ratings by 10, the dimension's top, so its planted self-bias of a tenth
    of its own scale read γ = +0.010, '1% of the scale', beside +0.10 for the others,
    with nothing said. A note names the judge, its top and the factor."""
    rng = np.random.default_rng(4)
    models = ["gpt-4", "claude-v1", "llama-2-70b-chat", "palm-2"]
    rows = [
        {"prompt_id": f"p{p}", "model": m, "dimension": "quality", "judge": j, "reference": ref}
        | {"rating": ref + (j == m) + rng.normal(0, 0.1)}
        for p in range(40)
        for m, ref in zip(models, rng.integers(1, 10, len(models)).astype(float), strict=True)
        for j in models[:3]
    ]
    same = pd.DataFrame(rows)
    roster = Roster.builtin()
    clean = fit_favoritism(same, roster)
    assert not clean.warnings
    # every judge adds one point of ten to its own answers: γ = 1/10 of the top score 10
    assert clean.self_bias()["estimate"].to_numpy() == pytest.approx([0.1] * 3, abs=0.01)
    mixed = same.copy()
    claude = mixed["judge"] == "claude-v1"
    mixed.loc[claude, "rating"] = mixed.loc[claude, "rating"] / 10  # its scale 0-1
    res = fit_favoritism(mixed, roster)
    got = dict(zip(res.self_bias()["judge"], res.self_bias()["estimate"], strict=True))
    assert got["claude-v1"] == pytest.approx(0.01, abs=0.001)  # a tenth of its own 0.1
    top = mixed.loc[claude, "rating"].max()
    (note,) = res.warnings
    assert note.startswith(
        f"dimension 'quality', judge 'claude-v1': no rating above {top:g}, "
        f"{round(100 * top / 10)}% of the way up the dimension's scale (its scores reach "
        f"{mixed['rating'].max():g})"
    )
    assert f"about {10 / top:.0f} times its own" in note
    # the references on 0-100 beside every judge's 1-10: one note, on the references
    hundred = same.assign(reference=same["reference"] * 10)
    (note,) = fit_favoritism(hundred, roster).warnings
    top = hundred["rating"].max()
    assert note.startswith(
        f"dimension 'quality': no judge rates above {top:g}, {round(100 * top / 90)}% of "
        "the way up the dimension's scale, which the references set (they reach 90)"
    )


def test_a_lone_judge_or_a_harsh_panel_below_the_references_gets_the_dimension_note() -> None:
    """A dimension's one judge rating 1-10 beside references on 0-100: the references
    set the scale, but the note per judge blamed the judge ("put its ratings on the
    dimension's scale") and called the references' 90 its scores. Two judges rating
    0-0.25 beside references on 0-1 (a harsh panel on one scale): the note offered only
    references on another scale; it says a harsh panel reads so too."""
    lone = pd.DataFrame({"dimension": "d", "judge": "j", "rating": [1.0, 10.0],
                         "reference": [20.0, 90.0]})  # fmt: skip
    (note,) = narrow_judges(lone)
    # max-normalised: the scale's top is the references' 90, the judge's top 10 of it
    assert note.startswith(
        "dimension 'd': no judge rates above 10, 11% of the way up the dimension's scale, "
        "which the references set (they reach 90)"
    )
    assert "about 9 times the ratings' own" in note  # 90 / 10
    harsh = pd.DataFrame(
        {"dimension": "d", "judge": ["j", "j", "k", "k"], "rating": [0.1, 0.2, 0.15, 0.25],
         "reference": [0.2, 1.0, 0.3, 0.8]}
    )  # fmt: skip
    (note,) = narrow_judges(harsh)
    assert "25% of the way up" in note and "(they reach 1)" in note
    assert note.endswith(
        "if both are on one scale, the judges rate far below the references (a harsh "
        "panel), and the coefficients read it as it is"
    )
    # range-normalised: low 0.1 (the ratings' least), scale 0.9: (0.25 - 0.1) / 0.9 = 17%
    (note,) = narrow_judges(harsh, normalize="range")
    assert "17% of the way up" in note


def test_cluster_intervals_are_student_t_on_the_clusters_less_one() -> None:
    """Cluster-robust intervals and p-values take Student's t on G − 1 degrees of freedom,
    as statsmodels' fit with ``use_t`` (a normal quantile held the planted γ and λ 0.82–0.85
    of the time at 5–6 prompts); heteroskedasticity-robust ones keep the normal's."""
    sim = simulate_ratings(seed=3, n_prompts=7, answer_sd=0.1)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    d = _formula_frame(sim.ratings, dict(sim.families))
    formula = (
        "rating ~ 0 + C(judge) + C(judge):reference + C(self_label, Treatment('none'))"
        " + C(fam_label, Treatment('none')) + C(dimension)"
    )
    groups = {"groups": pd.factorize(d["prompt_id"])[0]}
    ref = smf.ols(formula, data=d).fit(cov_type="cluster", cov_kwds=groups, use_t=True)
    ci, ref_ci = res.tidy().set_index("term"), ref.conf_int(0.1)
    for judge in sim.families:
        name = f"C(self_label, Treatment('none'))[T.{judge}]"
        row = ci.loc[f"self[{judge}]"]
        assert row["lower"] == pytest.approx(ref_ci.loc[name, 0], abs=1e-10)
        assert row["upper"] == pytest.approx(ref_ci.loc[name, 1], abs=1e-10)
        assert row["p"] == pytest.approx(ref.pvalues[name], rel=1e-6)
        assert res.conf_int().loc[f"self[{judge}]", "lower"] == pytest.approx(row["lower"])
    assert res.df == 6 and "Student t on 6 df" in res.se_type
    assert res.to_dict()["df"] == 6
    # coefficients.csv and the JSON name the statistic "z" and gave no word for it: its p
    # is t's on 6 df (scipy), not the normal's a reader of "z" would take (0.012 for 0.047
    # at z = 2.5); the definitions now say which distribution reads it
    zp = res.tidy().set_index("term").loc[[f"self[{j}]" for j in sim.families], ["z", "p"]]
    assert np.allclose(zp["p"], 2 * stats.t.sf(np.abs(zp["z"]), 6), rtol=1e-9)
    words = res.to_dict()["definitions"]
    assert "Student's t on 6 df" in words["z"] and "not the normal" in words["z"]
    assert words["p"].endswith("read against Student's t on 6 df (the clusters less one)")
    assert "the clusters holding the term's ratings less one" in words["df"]
    hc = fit_favoritism(sim.ratings, sim.families, normalize="none", se="HC1")
    assert hc.df is None
    assert "read against the normal distribution" in hc.to_dict()["definitions"]["z"]
    c = hc.tidy().set_index("term").loc["self[j0]"]
    assert c["upper"] - c["estimate"] == pytest.approx(1.6448536 * c["se"], rel=1e-6)


def test_cluster_intervals_hold_their_level_on_six_prompts() -> None:
    """Planted γ and λ on 6 prompts (5 judges, 2 dimensions, an answer-level error shared
    by the dimensions): the 90% intervals cover them 0.86–0.95 of the time (0.83 with the
    normal quantile, on these 100 tables)."""
    hits, total = 0, 0
    for seed in range(100):
        sim = simulate_ratings(
            n_prompts=6,
            answer_sd=0.1,
            seed=500 + seed,
            self_bias={"j0": 0.08, "j1": 0.0, "j2": -0.05, "j3": 0.1, "j4": 0.0},
            family_bias={"A": 0.04, "B": -0.03},
        )
        res = fit_favoritism(sim.ratings, sim.families, normalize="none")
        c = res.tidy()
        c = c[c["kind"].isin(["self", "family"])]
        t = sim.truth().reindex(c["term"]).to_numpy()
        hits += int(((c["lower"].to_numpy() <= t) & (t <= c["upper"].to_numpy())).sum())
        total += len(c)
    assert total == 700
    assert 0.86 <= hits / total <= 0.95, hits / total


def test_ratings_fitted_exactly_give_no_interval_not_a_zero_width_significant_one() -> None:
    """12 ratings that follow their references without noise (two judges, two models,
    three prompts): every residual is 0, so the standard errors read 0 and each γ an
    interval of zero width, 'significant' at z = inf (gpt-4o's +0.167 [0.167, 0.167]).
    Nothing measured the noise: no coefficient has an interval, and the notes say why."""
    import io

    text = """prompt_id,model,judge,rating,reference
p1,gpt-4o,gpt-4o,4,3
p1,gpt-4o,llama-3-70b,3,3
p1,llama-3-70b,gpt-4o,3,3
p1,llama-3-70b,llama-3-70b,4,3
p2,gpt-4o,gpt-4o,5,4
p2,gpt-4o,llama-3-70b,4,4
p2,llama-3-70b,gpt-4o,5,5
p2,llama-3-70b,llama-3-70b,6,5
p3,gpt-4o,gpt-4o,3,2
p3,gpt-4o,llama-3-70b,2,2
p3,llama-3-70b,gpt-4o,2,2
p3,llama-3-70b,llama-3-70b,3,2
"""
    ratings = pd.read_csv(io.StringIO(text))
    ratings["dimension"] = "quality"
    res = fit_favoritism(ratings, {"gpt-4o": "gpt", "llama-3-70b": "llama"}, normalize="none")
    assert res.rsquared == pytest.approx(1.0)
    sb = res.self_bias()
    assert sb["se"].isna().all() and not sb["significant"].any()
    assert any(n.startswith("every rating is fitted exactly (R² = 1)") for n in res.notes)
    assert any("every rating fitted exactly, no residual to estimate it from" in n
               for n in res.notes)  # fmt: skip


def test_a_dimension_whose_ratings_never_vary_is_said() -> None:
    """A dimension of 3s (every rating and reference 3) beside one that varies enters the
    fit as ratings that show no bias: every γ and its error roughly halved, with nothing
    said (a whole file of one value is refused). The fit's notes say it, and the γ is
    what it is: the average over the judge's ratings of both dimensions."""
    sim = simulate_ratings(n_prompts=40, dimensions=("a",), seed=2)
    flat = sim.ratings.assign(dimension="flat", rating=3.0, reference=3.0)
    both = fit_favoritism(pd.concat([sim.ratings, flat]), sim.families, normalize="none")
    alone = fit_favoritism(sim.ratings, sim.families, normalize="none")
    (note,) = [n for n in both.notes if n.startswith("dimension 'flat'")]
    assert f"all {len(flat):,} ratings are 3 — nothing in it varies" in note
    assert not any(n.startswith("dimension") for n in alone.notes)
