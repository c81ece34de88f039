"""The familiarity mediation splits the calibrated headline itself: the same competence
model, with a discrimination κ_c per category where the headline has one (and the
family term where the audit fits one), not one κ pooled over the categories."""

from __future__ import annotations

import numpy as np
import pytest

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.metrics.familiarity_mediation import familiarity_mediation
from recuse.roster import Entry, Roster
from recuse.simulate.self_preference import simulate_category_confound

#: the judge is weak (κ = 0.5) in "hard", strong (κ = 4) elsewhere; most of its own
#: pairs are in "hard"
CONFOUND = {"hard": (0.5, 1.0), "easy1": (4.0, 0.1), "easy2": (4.0, 0.1), "easy3": (4.0, 0.1)}


def _with_perplexities(seed: int) -> object:
    sim = simulate_category_confound(CONFOUND, seed=seed)
    rng = np.random.default_rng(seed)
    t = sim.pairs.copy()
    t["ppl_a"] = np.exp(rng.normal(1.5, 0.3, len(t)))
    t["ppl_b"] = np.exp(rng.normal(1.5, 0.3, len(t)))
    return t


def test_the_mediation_total_is_the_headline_with_a_kappa_per_category() -> None:
    t = _with_perplexities(3)
    indirect, direct, _ = familiarity_mediation(t, judge="m0", boot=Resampling(n_boot=100))
    total = indirect.components["calibrated_self_preference"]
    headline = calibrated_self_preference(t, judge="m0", boot=Resampling(n_boot=100))
    pooled = calibrated_self_preference(t, judge="m0", boot=Resampling(n_boot=100), stratum=None)
    assert "per category" in headline.method and "per category" in direct.method
    assert total == pytest.approx(headline.estimate, abs=1e-9)
    assert indirect.estimate + direct.estimate == pytest.approx(headline.estimate, abs=1e-9)
    # one κ reads the confound as self-preference: the split was of another number
    assert abs(pooled.estimate - headline.estimate) > 0.03
    # stratum=None keeps the pooled model, as the headline's own option does
    one, _, _ = familiarity_mediation(t, judge="m0", boot=Resampling(n_boot=100), stratum=None)
    assert one.components["calibrated_self_preference"] == pytest.approx(pooled.estimate)


def test_the_mediation_total_is_the_headline_with_the_family_term() -> None:
    t = _with_perplexities(4)
    roster = Roster.builtin()
    for m in ("m0", "m1", "m2", "m3", "m4"):
        roster.add(Entry(m, "fam" if m in ("m0", "m1") else m))
    indirect, _, _ = familiarity_mediation(
        t, judge="m0", boot=Resampling(n_boot=100), families=roster
    )
    headline = calibrated_self_preference(
        t, judge="m0", boot=Resampling(n_boot=100), families=roster
    )
    assert indirect.components["calibrated_self_preference"] == pytest.approx(
        headline.estimate, abs=1e-9
    )
    assert "family term" in headline.method
