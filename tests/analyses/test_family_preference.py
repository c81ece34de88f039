"""Family preference: the finding is family_preference EO from the shared bootstrap."""

from __future__ import annotations

import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.family_preference import ANALYSIS, EO
from recuse.metrics.self_preference import family_preference


def test_finding_equals_the_estimator(planted: Planted) -> None:
    found = [f for f in planted.report.findings if f.bias.key == EO.key]
    assert found
    for f in found:
        ref = family_preference(planted.pairs, planted.roster, judge=f.judge, kind="eo", **BOOT)  # type: ignore[arg-type]
        assert f.estimate == pytest.approx(ref.estimate) and f.n == ref.n
        assert f.section == ANALYSIS.id


def test_findings_recover_planted_family_preference() -> None:
    """Planted truth (simulate_pairs, two families of two models): the judge agrees with
    the human 0.7 of the time, ± family_preference/2 when a family member's answer (not
    its own) faces an outsider's and the human prefers it / the outsider's. Hence EO =
    family_preference, DP = family_preference/2, and the calibrated family term the
    same shift as DP's (the labels do not depend on the models). gpt-4 is planted at
    +0.3, claude-v1 at −0.2. Over three seeds (1,800 pairs each) the mean finding is
    within 0.08 of EO's truth and 0.04 of DP's and the calibrated one (about 3.5
    standard errors of the mean); a sign error, or DP's number given as EO's, would
    miss by 0.1 or more."""
    from analyses.conftest import audit_only
    from recuse.analyses.family_preference import CALIBRATED, DP
    from recuse.roster import Roster
    from recuse.simulate import PlantedBias, simulate_pairs

    plants = {"gpt-4": PlantedBias(family_preference=0.3),
              "claude-v1": PlantedBias(family_preference=-0.2)}  # fmt: skip
    truth = {EO.key: "family_preference_eo", DP.key: "family_preference_dp",
             CALIBRATED.key: "family_preference_calibrated"}  # fmt: skip
    tolerance = {EO.key: 0.08, DP.key: 0.04, CALIBRATED.key: 0.04}
    got: dict[tuple[str, str], list[float]] = {}
    for seed in range(3):
        sim = simulate_pairs(judges=plants, models=("gpt-4", "gpt-3.5-turbo", "claude-v1",
                             "claude-2"), n_prompts=600, seed=seed)  # fmt: skip
        report = audit_only(ANALYSIS.id, sim.pairs, Roster.builtin())
        for f in report.findings:
            got.setdefault((f.judge, f.bias.key), []).append(f.estimate)
    assert set(got) == {(j, k) for j in plants for k in truth}
    for (judge, key), estimates in got.items():
        value = sim.true_value(truth[key], judge)
        assert sum(estimates) / 3 == pytest.approx(value, abs=tolerance[key]), (judge, key)
