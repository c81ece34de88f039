"""Verbosity: the number shown is Saito's Eq. 6 (a recall difference), as the unit says —
not the prefer-longer gap the old label described (they differ on the planted data)."""

from __future__ import annotations

import numpy as np
import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.verbosity import ANALYSIS, VERBOSITY
from recuse.metrics.verbosity import verbosity_bias


def test_finding_is_eq6_and_not_the_prefer_longer_gap(planted: Planted) -> None:
    (f,) = [f for f in planted.report.findings if f.bias is VERBOSITY and f.judge == "claude-v1"]
    ref = verbosity_bias(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert f.estimate == pytest.approx(ref.estimate)
    assert "Eq. 6" in VERBOSITY.unit and "recall" in VERBOSITY.unit
    # the quantity the old label named: P(judge picks longer) - P(human picks longer)
    rows = planted.pairs[(planted.pairs["judge"] == "claude-v1") & planted.pairs["p_a"].notna()]
    rows = rows[rows["human"].isin([0.0, 1.0])]
    la = rows["response_a"].str.split().str.len().to_numpy(float)
    lb = rows["response_b"].str.split().str.len().to_numpy(float)
    keep = la != lb
    longer_a = (la > lb)[keep]
    judge = np.where(
        longer_a, rows["p_a"].to_numpy(float)[keep], 1 - rows["p_a"].to_numpy(float)[keep]
    )
    human = np.where(
        longer_a, rows["human"].to_numpy(float)[keep], 1 - rows["human"].to_numpy(float)[keep]
    )
    gap = float(judge.mean() - human.mean())
    assert abs(gap - f.estimate) > 0.02  # two different numbers: the label must name the right one


def test_deviation_is_table_only(planted: Planted) -> None:
    assert ANALYSIS.metrics["verbosity_deviation"] is None
    (section,) = [s for s in planted.report.sections if s.id == ANALYSIS.id]
    (table,) = [t for t in section.tables if t.name == "verbosity-sim-pairs"]
    assert set(table.frame["metric"]) == {"verbosity_bias", "verbosity_deviation"}
