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
