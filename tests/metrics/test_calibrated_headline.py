"""One headline per judge: the calibrated self-preference's parts, its family term, n,
and the unadjusted numbers beside it (issue #34)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special

from recuse.analyses.self_preference import EO
from recuse.metrics import competence, pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import CALIBRATED_RUNGS, label_strengths
from recuse.metrics.self_preference import self_preference
from recuse.report.model import Finding
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    simulate_self_preference,
    theta_for_own_rate,
)

FAMILIES = {"m0": "f", "m1": "f", "m2": "g", "m3": "h", "m4": "i"}
NAMES = ["self_preference_calibrated", "family_preference_calibrated", *CALIBRATED_RUNGS]


def _table(
    own_rate: float, *, tau: float = 0.0, n_prompts: int = 40, seed: int = 1
) -> pd.DataFrame:
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    sim = simulate_self_preference(
        {"m0": AuthorJudge(2.0, 0.5, tau)}, strengths, n_prompts=n_prompts, seed=seed
    )
    return sim.pairs


def _plant_family(pairs: pd.DataFrame, phi: float, seed: int) -> pd.DataFrame:
    """Judge m0 switches a pick of an outsider's answer to m1's (its family) with
    probability ``phi`` in each order."""
    out = pairs.copy()
    rng = np.random.default_rng(seed)
    for col, _ in (("p_a_first", 1), ("p_a_second", 2)):
        p = out[col].to_numpy(float).copy()
        fam_a = (out["model_a"] == "m1") & (out["model_b"] != "m0")
        fam_b = (out["model_b"] == "m1") & (out["model_a"] != "m0")
        u = rng.random(len(p)) < phi
        p[(fam_a & (p < 0.5) & u).to_numpy()] = 1.0
        p[(fam_b & (p > 0.5) & u).to_numpy()] = 0.0
        out[col] = p
    out["p_a"] = out[["p_a_first", "p_a_second"]].mean(axis=1)
    return out


def _results(pairs: pd.DataFrame) -> dict[str, object]:
    res = pairwise_bias(
        pairs, FAMILIES, judges=["m0"], metrics=NAMES, boot=Resampling(n_boot=100, seed=0)
    )
    return {r.metric: r for r in res.results}


def test_rungs_add_up_to_the_headline_and_n_is_the_own_pairs() -> None:
    pairs = _table(0.7, tau=0.3)
    r = _results(pairs)
    head = r["self_preference_calibrated"]
    parts = sum(r[k].estimate for k in CALIBRATED_RUNGS)  # type: ignore[attr-defined]
    assert abs(parts - head.estimate) < 1e-12  # type: ignore[attr-defined]
    shares = sum(r[k].components.get("rung_share", 0.0) for k in CALIBRATED_RUNGS)  # type: ignore[attr-defined]
    assert abs(shares - 1.0) < 1e-12
    # n: the judge's own pairs (4 opponents x 40 prompts), the competence pairs beside it
    own = int(((pairs["model_a"] == "m0") | (pairs["model_b"] == "m0")).sum())
    assert head.n == own == 160  # type: ignore[attr-defined]
    assert head.counts["pairs without its own answer (its competence is learnt on them)"] == 240  # type: ignore[attr-defined]


def test_an_empty_rung_says_it_is_zero_by_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rung none of the judge's own pairs is on (no human ties: LLMBar's MT-Bench set)
    reads 0 [0, 0]; its warning said "no variation in the resamples ... add harder
    pairs", which would not help. It now says why, and only there."""
    pairs = _table(0.7, tau=0.3)
    pairs = pairs[pairs["human"].isin([0.0, 1.0])]
    for most in (competence.MAX_PATTERNS, 1):  # exact refits, then one-step resamples
        monkeypatch.setattr(competence, "MAX_PATTERNS", most)
        r = _results(pairs)
        head = r["self_preference_calibrated"]
        assert ("one Newton step" in head.method) == (most == 1)  # type: ignore[attr-defined]
        empty = r["calibrated_rung_human_neither"]
        assert (empty.estimate, empty.ci_low, empty.ci_high) == (0.0, 0.0, 0.0)  # type: ignore[attr-defined]
        assert empty.warnings == (  # type: ignore[attr-defined]
            "none of its own pairs is on this rung: the part is 0 by construction, not a "
            "measurement",
        )
        for k in ("calibrated_rung_human_prefers_own", "calibrated_rung_human_prefers_other"):
            assert not any("by construction" in w for w in r[k].warnings), k  # type: ignore[attr-defined]


def test_family_term_matches_statsmodels() -> None:
    """The family headline = family picks − predictions of a GLM with g, first, own and
    family terms fitted by statsmodels on the strengths from the labels."""
    pairs = _plant_family(_table(0.6), 0.3, seed=3)
    fam = _results(pairs)["family_preference_calibrated"]
    s = label_strengths(pairs)
    rows = []
    for col, first in (("p_a_first", 1.0), ("p_a_second", -1.0)):
        t = pairs[["model_a", "model_b", col]].rename(columns={col: "y"})
        t["first"] = first
        rows.append(t)
    t = pd.concat(rows, ignore_index=True)
    g = t["model_a"].map(s).to_numpy() - t["model_b"].map(s).to_numpy()
    own = np.where(t["model_a"] == "m0", 1.0, np.where(t["model_b"] == "m0", -1.0, 0.0))
    fa = (t["model_a"] == "m1") & (t["model_b"] != "m0")
    fb = (t["model_b"] == "m1") & (t["model_a"] != "m0")
    famc = np.where(fa, 1.0, np.where(fb, -1.0, 0.0))
    x = np.column_stack([g, t["first"], own, famc])
    y = t["y"].to_numpy(float)
    fit = sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=np.full(len(y), 0.5)).fit()
    kappa, beta = fit.params[0], fit.params[1]
    p0 = special.expit(kappa * g + beta * t["first"].to_numpy())
    m = famc != 0
    picks = np.where(famc > 0, y, 1 - y)[m].sum()
    pred = np.where(famc > 0, p0, 1 - p0)[m].sum()
    assert abs(fam.estimate - (picks - pred) / m.sum()) < 1e-8  # type: ignore[attr-defined]
    assert fam.estimate > 0.05  # type: ignore[attr-defined]


def test_family_headline_near_zero_without_family_preference() -> None:
    est = [_results(_table(0.86, seed=s, n_prompts=60))["family_preference_calibrated"].estimate
           for s in range(4)]  # type: ignore[attr-defined]  # fmt: skip
    assert abs(float(np.mean(est))) < 0.03


def test_eo_reads_low_for_the_weakest_author_without_self_preference() -> None:
    """Both sides of EO's caveat, in a planted simulation: no self term at all, EO well
    below 0 for the weakest author and above 0 for the strongest; the calibrated
    estimate near 0 for both."""
    weak = _table(0.14, n_prompts=400, seed=5)
    strong = _table(0.86, n_prompts=400, seed=5)
    eo_weak = self_preference(weak, judge="m0", boot=Resampling(n_boot=10)).estimate
    eo_strong = self_preference(strong, judge="m0", boot=Resampling(n_boot=10)).estimate
    assert eo_weak < -0.08 and eo_strong > 0.08
    for t in (weak, strong):
        cal = _results(t)["self_preference_calibrated"]
        assert abs(cal.estimate) < 0.03  # type: ignore[attr-defined]


def test_unadjusted_numbers_are_never_flagged() -> None:
    f = Finding(judge="gpt-4", bias=EO, estimate=0.48, ci_low=0.24, ci_high=0.71, n=51,
                level=0.9, method="m", dataset="d")  # fmt: skip
    assert not f.significant and f.materiality == "" and f.direction == "none"
    assert "not adjusted for the judge's competence" in EO.unit
    assert "weak" in EO.unit
