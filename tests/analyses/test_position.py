"""Position: the finding is the first-position rate, its no-bias value 0.5."""

from __future__ import annotations

import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.position import ANALYSIS, POSITION
from recuse.metrics.position import first_position_rate


def test_finding_is_the_first_position_rate(planted: Planted) -> None:
    (f,) = [f for f in planted.report.findings if f.bias is POSITION and f.judge == "claude-v1"]
    ref = first_position_rate(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert f.estimate == pytest.approx(ref.estimate) and f.null == 0.5
    assert f.direction == "positive" and f.section == ANALYSIS.id  # planted: +0.1 to first
    assert not f.text.startswith("+")  # a rate, printed without a sign


def test_the_finding_recovers_a_planted_first_position_rate() -> None:
    """Planted truth (simulate_pairs): a judge that decides by slot with probability
    2|position| has a first-position rate of exactly 0.5 + position. gpt-4 is planted at
    0.62 (prefers the first slot), claude-v1 at 0.40 (the second). Over three seeds the
    audit's finding is within 0.03 of the truth each time, 0.015 on average, and on the
    truth's side of 0.5; a sign error (1 − rate: 0.38, 0.60) or reading the flip rate
    (0.24, 0.20) would miss by more than 0.2."""
    from analyses.conftest import audit_only
    from recuse.roster import Roster
    from recuse.simulate import PlantedBias, simulate_pairs

    plants = {"gpt-4": PlantedBias(position=0.12), "claude-v1": PlantedBias(position=-0.10)}
    got: dict[str, list[float]] = {j: [] for j in plants}
    for seed in range(3):
        sim = simulate_pairs(judges=plants, n_prompts=150, seed=seed)
        report = audit_only(ANALYSIS.id, sim.pairs, Roster.builtin())
        found = {f.judge: f for f in report.findings if f.bias is POSITION}
        assert set(found) == set(plants)
        for judge, f in found.items():
            truth = sim.true_value("first_position_rate", judge)
            assert f.estimate == pytest.approx(truth, abs=0.03), (seed, judge)
            assert (f.ci_low > 0.5) == (truth > 0.5) and (f.ci_high < 0.5) == (truth < 0.5)
            got[judge].append(f.estimate)
    assert sum(got["gpt-4"]) / 3 == pytest.approx(0.62, abs=0.015)
    assert sum(got["claude-v1"]) / 3 == pytest.approx(0.40, abs=0.015)
