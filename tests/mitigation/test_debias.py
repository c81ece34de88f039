"""Debiasing: planted biases removed, effect on means and ranking."""

from __future__ import annotations

import numpy as np
import pytest

from recuse.mitigation.debias import debias, debias_effect, on_few_prompts
from recuse.regression.favoritism import fit_favoritism
from recuse.simulate.ratings import simulate_ratings


def test_debias_subtracts_estimated_self_and_family_terms() -> None:
    sim = simulate_ratings(seed=2, n_prompts=40)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    d = debias(sim.ratings, res, sim.families)
    row = d[(d["judge"] == "j0") & (d["model"] == "j0")].iloc[0]
    assert row["correction"] == pytest.approx(res.params["self[j0]"])
    fam = d[(d["judge"] == "j0") & (d["model"] == "j1")].iloc[0]
    assert fam["correction"] == pytest.approx(res.params["family[A]"])
    other = d[(d["judge"] == "j0") & (d["model"] == "j2")]
    assert (other["correction"] == 0).all()
    assert np.allclose(d["rating"] - d["rating_debiased"], d["correction"])  # scale 1


def test_debiasing_undoes_a_planted_self_bias() -> None:
    # equal quality; j0 rates itself +0.3: before, j0's mean is inflated
    q = {j: 0.5 for j in ("j0", "j1", "j2", "j3", "j4")}
    sim = simulate_ratings(
        seed=4,
        n_prompts=80,
        quality=q,
        slope={j: 1.0 for j in q},
        intercept={j: 0.0 for j in q},
        self_bias={"j0": 0.3, "j1": 0.0, "j2": 0.0, "j3": 0.0, "j4": 0.0},
        family_bias={"A": 0.1, "B": 0.0},
    )
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    eff = debias_effect(sim.ratings, res, sim.families)
    t = eff.table.set_index("model")
    assert t.loc["j0", "rank_before"] == 1
    # the correction takes out (0.3 self + 0.1 from family member j1) / 5 judges
    assert t.loc["j0", "change"] == pytest.approx(-(0.3 + 0.1) / 5, abs=0.01)
    # with slope 1 and no intercept, debiased means track the reference means
    gap_before = (t["before"] - t["reference"]).std()
    gap_after = (t["after"] - t["reference"]).std()
    assert gap_after < gap_before / 3
    assert t.loc["j0", "rank_after"] == t.loc["j0", "rank_reference"]


def test_the_corrections_columns_say_whose_mean_on_what_scale() -> None:
    """The audit's debiased CSV held before, after, reference and change with no word:
    whose mean, on which scale, which way change is taken. The effect says it, each
    column checked here by hand: before, every judge's ratings of the model averaged;
    change, after − before."""
    from recuse.mitigation.debias import DebiasEffect

    sim = simulate_ratings(seed=2, n_prompts=40)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    eff = debias_effect(sim.ratings, res, sim.families)
    t = eff.table.set_index("model")
    words = eff.columns(res.scale_note)
    assert isinstance(eff, DebiasEffect) and set(words) == set(eff.table.columns)
    assert words["before"] == "its mean rating points over its ratings by every judge"
    usable = sim.ratings[sim.ratings["rating"].notna() & sim.ratings["reference"].notna()]
    by_hand = usable.groupby("model")["rating"].mean()
    assert np.allclose(t["before"], by_hand.reindex(t.index))
    assert np.allclose(t["change"], t["after"] - t["before"])
    assert words["change"].startswith("after − before")


def test_the_before_column_names_the_judges_it_averages() -> None:
    """With two of five judges chosen (the audit's --judge), before is the mean of those
    two judges' ratings of each model, worked out here with pandas, and its words name
    them: they read "by every judge" (on play-favorites with gpt-4o and gpt-3.5-turbo
    chosen, gpt-4o's before was 0.958, every judge's mean 0.931)."""
    sim = simulate_ratings(seed=2, n_prompts=40)
    res = fit_favoritism(sim.ratings, sim.families, normalize="none")
    eff = debias_effect(sim.ratings, res, sim.families, judges=["j3", "j1"])
    usable = sim.ratings[sim.ratings["rating"].notna() & sim.ratings["reference"].notna()]
    two = usable[usable["judge"].isin(["j1", "j3"])].groupby("model")["rating"].mean()
    t = eff.table.set_index("model")
    assert np.allclose(t["before"], two.reindex(t.index))
    assert not np.allclose(t["before"], usable.groupby("model")["rating"].mean().reindex(t.index))
    words = eff.columns(res.scale_note)
    assert words["before"] == "its mean rating points over its ratings by the judges chosen, j1, j3"
    one = debias_effect(sim.ratings, res, sim.families, judges=["j2"]).columns("x")
    assert one["before"] == "its mean x over its ratings by the judge chosen, j2"
    every = debias_effect(sim.ratings, res, sim.families, judges=sorted(sim.families))
    assert every.columns("x")["before"] == "its mean x over its ratings by every judge"


def test_ratings_of_one_model_have_an_undefined_tau_and_no_scipy_warning() -> None:
    """The ratings of one model (every judge rating it): Kendall's τ over one model is
    undefined, said in words; scipy's SmallSampleWarning, printed with its file and line
    above the command's output, is not raised."""
    import warnings

    sim = simulate_ratings(seed=2, n_prompts=20)
    one = sim.ratings[sim.ratings["model"] == "j0"]
    res = fit_favoritism(sim.ratings, sim.families)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effect = debias_effect(one, res, sim.families)
    assert len(effect.table) == 1
    undefined = "undefined (fewer than two models, or all tied)"
    assert effect.taus == (
        f"{undefined} before the correction → {undefined} after (1 = the reference's order, "
        "0 = unrelated)"
    )


def test_a_correction_resting_on_few_prompts_says_so() -> None:
    """Model j0's answers on 3 of 40 prompts: γ_j0 (its 6 ratings) is subtracted from
    judge j0's ratings of its own model (the correction's row), and its finding warns of
    the 3 prompts while the correction said nothing. Its words are now the finding's
    warning, for that term alone; on 5 prompts (FEW_CLUSTERS) none, and a term left out
    (no standard error) is not said to be subtracted."""
    sim = simulate_ratings(n_prompts=40, dimensions=("a", "b"), seed=1)
    r = sim.ratings
    three = r[(r["model"] != "j0") | r["prompt_id"].isin(["p1", "p5", "p9"])]
    res = fit_favoritism(three, sim.families)
    assert res.term_prompts["self[j0]"] == 3 and res.term_n["self[j0]"] == 6
    d = debias(three, res, sim.families)
    assert (d.loc[(d["judge"] == "j0") & (d["model"] == "j0"), "correction"] != 0).all()
    (warning,) = res.few_prompts("self[j0]")
    assert warning.startswith("γ_j of j0: its 6 ratings lie on only 3 prompts")
    assert on_few_prompts(res) == f"; subtracted, resting on few prompts — {warning}"
    c = res.coefficients.copy()
    c.loc[c["term"] == "self[j0]", "se"] = np.nan  # not estimated: not subtracted
    assert on_few_prompts(res, c) == ""
    five = r[(r["model"] != "j0") | r["prompt_id"].isin(["p1", "p5", "p9", "p20", "p33"])]
    assert on_few_prompts(fit_favoritism(five, sim.families)) == ""
