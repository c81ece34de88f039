"""Verbosity: the number shown is Saito's Eq. 6 (a recall difference), as the unit says —
not the prefer-longer gap the old label described (they differ on the planted data)."""

from __future__ import annotations

import numpy as np
import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.verbosity import ANALYSIS, LONGER_GAP, VERBOSITY
from recuse.metrics.verbosity import prefer_longer_gap, verbosity_bias


def test_finding_is_eq6_and_not_the_prefer_longer_gap(planted: Planted) -> None:
    (f,) = [f for f in planted.report.findings if f.bias is VERBOSITY and f.judge == "claude-v1"]
    ref = verbosity_bias(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert f.estimate == pytest.approx(ref.estimate)
    assert "Eq. 6" in VERBOSITY.unit and "recall" in VERBOSITY.unit
    # the quantity the old label named, by hand: P(judge picks longer) - P(human does)
    rows = planted.pairs[(planted.pairs["judge"] == "claude-v1") & planted.pairs["p_a"].notna()]
    rows = rows[rows["human"].isin([0.0, 1.0])]
    la = rows["response_a"].str.split().str.len().to_numpy(float)
    lb = rows["response_b"].str.split().str.len().to_numpy(float)
    keep = la != lb
    longer_a = (la > lb)[keep]
    p, h = rows["p_a"].to_numpy(float)[keep], rows["human"].to_numpy(float)[keep]
    gap = float(np.where(longer_a, p, 1 - p).mean() - np.where(longer_a, h, 1 - h).mean())
    assert abs(gap - f.estimate) > 0.02  # two different numbers: each needs its own name
    (g,) = [g for g in planted.report.findings if g.bias is LONGER_GAP and g.judge == "claude-v1"]
    assert g.estimate == pytest.approx(gap)
    ref = prefer_longer_gap(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert (g.estimate, g.ci_low, g.ci_high) == pytest.approx(
        (ref.estimate, ref.ci_low, ref.ci_high)
    )
    assert g.headline and not f.headline and "P(judge picks the longer answer)" in LONGER_GAP.unit


def test_deviation_is_table_only(planted: Planted) -> None:
    assert ANALYSIS.metrics["verbosity_deviation"] is None
    (section,) = [s for s in planted.report.sections if s.id == ANALYSIS.id]
    (table,) = [t for t in section.tables if t.name == "verbosity-sim-pairs"]
    assert set(table.frame["metric"]) == {
        "verbosity_bias",
        "verbosity_deviation",
        "verbosity_longer_gap",
    }
