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
