"""The calibrated family preference of a judge none of whose pairs hold its own answer.

On LLMBar's MT-Bench set LLaMA-2-70B-chat judges 200 pairs, none with its own model's
answer, 118 with a LLaMA-family answer (LLaMA-13B, Alpaca-13B, Vicuna-13B) against an
outsider's. Its competence model has no own term to fit (the own column is 0 on every
pair it judged), so it is the model without it; its family preference is checked here
against that model fitted independently: statsmodels' GLM for the label strengths and
for the judge's verdicts, the rows chosen with pandas from the raw table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special

import recuse.data
from recuse.errors import EstimationError
from recuse.metrics import pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import (
    CALIBRATED,
    FAMILY_CALIBRATED,
    calibrated_parts,
    calibrated_specs,
)
from recuse.metrics.estimate import clusters_of, run_specs
from recuse.metrics.familiarity_mediation import familiarity_mediation
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import judge_codes
from recuse.roster import Roster

LLAMA = "llama-2-70b-chat"


@pytest.fixture(scope="module")
def pairs(shared_data: Path) -> pd.DataFrame:
    return recuse.data.load("llmbar-mtbench", data_dir=shared_data)


def _independent(
    pairs: pd.DataFrame, judge: str, strata: dict[str, int] | None = None
) -> tuple[float, float, float, int]:
    """(family pick rate, predicted rate, Δ, family pairs) of ``judge`` from statsmodels:
    Bradley–Terry strengths on its labelled pairs (each item once), then
    ``logit P(picks a) = κ_c (s_a − s_b) + β·first + φ·family`` on each judged order
    (weight 1 / orders judged), with no own term (``strata``: category → κ column)."""
    roster = Roster.builtin()
    d = pairs[(pairs["judge"] == judge) & pairs["model_a"].notna() & pairs["model_b"].notna()]
    d = d[d["model_a"] != d["model_b"]]
    assert not ((d["model_a"] == judge) | (d["model_b"] == judge)).any()  # no own pairs
    lab = d[d["human"].notna()].drop_duplicates("item_id")
    models = sorted(set(lab["model_a"]) | set(lab["model_b"]))
    x_lab = pd.get_dummies(lab["model_a"]).reindex(columns=models, fill_value=0).astype(float)
    x_lab -= pd.get_dummies(lab["model_b"]).reindex(columns=models, fill_value=0).astype(float)
    bt = sm.GLM(lab["human"].to_numpy(float), x_lab.iloc[:, 1:].to_numpy(),
                family=sm.families.Binomial()).fit()  # fmt: skip
    s = dict(zip(models, np.r_[0.0, bt.params], strict=True))
    d = d[d["model_a"].isin(models) & d["model_b"].isin(models)]
    k = d["p_a_first"].notna().astype(float) + d["p_a_second"].notna().astype(float)
    d = d[k > 0].assign(k=k[k > 0])
    fam_j = roster.family(judge)

    def famish(m: pd.Series) -> np.ndarray:
        return np.array([roster.family(x) == fam_j and x != judge for x in m], float)

    d = d.assign(fam=famish(d["model_a"]) - famish(d["model_b"]))
    orders = []
    for col, first in (("p_a_first", 1.0), ("p_a_second", -1.0)):
        o = d[d[col].notna()]
        orders.append(pd.DataFrame({"y": o[col], "first": first, "w": 1.0 / o["k"],
                                    "fam": o["fam"], "category": o["category"],
                                    "gap": o["model_a"].map(s) - o["model_b"].map(s)}))  # fmt: skip
    o = pd.concat(orders, ignore_index=True)
    if strata is None:
        kappa = o[["gap"]].to_numpy()
    else:
        col = o["category"].map(strata).to_numpy()
        kappa = np.column_stack([np.where(col == c, o["gap"], 0.0) for c in sorted(set(col))])
    x = np.column_stack([kappa, o["first"], o["fam"]])
    fit = sm.GLM(o["y"].to_numpy(float), x, family=sm.families.Binomial(),
                 freq_weights=o["w"].to_numpy()).fit()  # fmt: skip
    theta = np.asarray(fit.params)
    p0 = special.expit(kappa @ theta[: kappa.shape[1]] + theta[kappa.shape[1]] * o["first"])
    on = o["fam"] != 0
    pos = o["fam"][on] > 0
    picks = np.where(pos, o["y"][on], 1 - o["y"][on])
    pred = np.where(pos, p0[on], 1 - p0[on])
    w = o["w"][on].to_numpy()
    rate, predicted = float(np.sum(w * picks) / w.sum()), float(np.sum(w * pred) / w.sum())
    return rate, predicted, rate - predicted, int((d["fam"] != 0).sum())


def _results(pairs: pd.DataFrame, *, stratum: str | None, one_step: bool) -> dict[str, Any]:
    codes, labels = judge_codes(pairs, None)
    specs, problems = calibrated_specs(
        pairs, codes, labels, side=favored_side(pairs, relation="self"),
        family_side=favored_side(pairs, relation="family", families=Roster.builtin()),
        stratum=stratum, one_step=one_step,
    )  # fmt: skip
    assert problems == {}
    results, skipped = run_specs(specs, clusters_of(pairs), boot=Resampling(n_boot=300), min_n=5)
    out: dict[str, Any] = {f"{r.metric}/{r.judge}": r for r in results}
    out.update({f"skip {s.metric}/{s.judge}": s.reason for s in skipped})
    return out


@pytest.mark.parametrize("one_step", [False, True])
def test_family_preference_without_own_pairs_is_the_model_without_the_own_term(
    pairs: pd.DataFrame, one_step: bool
) -> None:
    rate, predicted, delta, n = _independent(pairs, LLAMA)
    assert n == 118
    got = _results(pairs, stratum=None, one_step=one_step)
    r = got[f"{FAMILY_CALIBRATED}/{LLAMA}"]
    assert r.estimate == pytest.approx(delta, abs=1e-6)
    assert r.components["family_pick_rate"] == pytest.approx(rate, abs=1e-9)
    assert r.components["predicted_family_pick_rate"] == pytest.approx(predicted, abs=1e-6)
    assert r.n == n
    assert r.ci_low < r.estimate < r.ci_high
    # its self-preference stays refused, with the reason
    assert got[f"skip {CALIBRATED}/{LLAMA}"] == "no pairs holding the judge's own answer"


def test_the_audits_fit_with_a_discrimination_per_category(pairs: pd.DataFrame) -> None:
    """As ``recuse audit`` fits it (κ per category, one-step resamples where large): the
    recheck's −0.030 (picks 0.178 against 0.208 predicted), and the same from statsmodels
    with the category groups the model reports (its pooling is not what is tested)."""
    codes, labels = judge_codes(pairs, None)
    model = calibrated_parts(
        pairs, codes, labels, side=favored_side(pairs, relation="self"),
        family_side=favored_side(pairs, relation="family", families=Roster.builtin()),
        stratum="category",
    )[4]  # fmt: skip
    assert model.kgroup is not None and model.stratum is not None
    strata = {
        model.stratum_names[int(c)]: int(g)
        for c, g in zip(model.stratum, model.kgroup, strict=True)
    }
    rate, predicted, delta, _ = _independent(pairs, LLAMA, strata)
    res = pairwise_bias(pairs, Roster.builtin(), metrics=(CALIBRATED, FAMILY_CALIBRATED),
                        boot=Resampling(n_boot=200))  # fmt: skip
    (r,) = [x for x in res.results if x.metric == FAMILY_CALIBRATED and x.judge == LLAMA]
    assert r.estimate == pytest.approx(delta, abs=1e-6)
    assert (round(rate, 3), round(predicted, 3), round(r.estimate, 3)) == (0.178, 0.208, -0.030)
    (why,) = [s.reason for s in res.skipped if s.metric == CALIBRATED and s.judge == LLAMA]
    assert why == "no pairs holding the judge's own answer"
    # the judges with own pairs are fitted as before (their own term is still there)
    assert {x.judge for x in res.results if x.metric == CALIBRATED} == {"gpt-4", "gpt-3.5-turbo"}


def test_a_judge_with_neither_own_nor_family_pairs_stays_unfitted(pairs: pd.DataFrame) -> None:
    got = _results(pairs, stratum=None, one_step=False)
    assert got[f"skip {CALIBRATED}/palm-2"] == "no pairs holding the judge's own answer"
    assert got[f"skip {FAMILY_CALIBRATED}/palm-2"] == (
        "no pairs holding a family member's answer against an outsider's"
    )


def test_mediation_of_a_judge_without_own_pairs_says_so(pairs: pd.DataFrame) -> None:
    """Familiarity mediation splits the self-preference: a judge with family pairs but no
    own pairs is now fitted, and the mediation is refused for the missing own pairs."""
    rng = np.random.default_rng(0)
    t = pairs.assign(ppl_a=rng.uniform(2, 9, len(pairs)), ppl_b=rng.uniform(2, 9, len(pairs)))
    with pytest.raises(EstimationError, match="pairs holding the judge's own answer"):
        familiarity_mediation(t, judge=LLAMA, families=Roster.builtin(),
                              boot=Resampling(n_boot=50))  # fmt: skip


def test_one_cause_is_said_in_one_wording(pairs: pd.DataFrame) -> None:
    """PaLM-2 judges no pair holding its own answer, nor its family's against an
    outsider's: the EO, DP and calibrated estimates each skip it for that one cause, and
    said it two ways ("no pairs with the judge's own response" beside "no pairs holding
    the judge's own answer") in the audit's one list of skipped analyses."""
    d = pairs[pairs["judge"] == "palm-2"]
    held = d["model_a"].isin(["palm-2"]) | d["model_b"].isin(["palm-2"])
    assert len(d) and not held.any()  # by hand: never its own answer
    own = ("self_preference_eo", "self_preference_dp", CALIBRATED)
    family = ("family_preference_eo", "family_preference_dp", FAMILY_CALIBRATED)
    res = pairwise_bias(pairs, Roster.builtin(), metrics=own + family,
                        boot=Resampling(n_boot=50))  # fmt: skip
    why = {s.metric: s.reason for s in res.skipped if s.judge == "palm-2"}
    assert {why[m] for m in own} == {"no pairs holding the judge's own answer"}
    assert {why[m] for m in family} == {
        "no pairs holding a family member's answer against an outsider's"
    }
