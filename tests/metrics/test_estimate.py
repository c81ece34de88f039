"""A metric's own caveats (``MetricSpec.warnings``) reach its results, per group, from
that group's totals and after the interval's warnings."""

from __future__ import annotations

import numpy as np
import pandas as pd

from recuse.metrics.bootstrap import GroupedStatistic, Resampling, ratio
from recuse.metrics.estimate import MetricSpec, run_specs


def test_spec_warnings_see_each_groups_totals_after_the_interval_warnings() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=np.intp)
    clusters = pd.Series(["p1", "p2", "p3", "p1", "p1", "p2", "p3", "p2"])  # 3 prompts
    values = np.column_stack([y, np.ones_like(y)])
    stat = GroupedStatistic("r", values, group, ("g0", "g1"), ratio)
    seen: list[tuple[float, float]] = []

    def caveat(t: np.ndarray) -> tuple[str, ...]:
        seen.append((float(t[0]), float(t[1])))
        return (f"own caveat: {t[0]:.0f} of {t[1]:.0f}",) if t[0] > 2 else ()

    results, skipped = run_specs(
        [MetricSpec("r", stat, "m", warnings=caveat), MetricSpec("plain", stat, "m")],
        clusters,
        boot=Resampling(level=0.9, n_boot=50, seed=0),
        min_n=1,
    )
    assert not skipped
    assert seen == [(3.0, 4.0), (1.0, 4.0)]  # each group's totals, by hand
    by = {(r.metric, r.judge): r.warnings for r in results}
    assert by[("r", "g0")][-1] == "own caveat: 3 of 4"
    assert by[("r", "g0")][0].startswith("only 3 prompts")  # the interval's come first
    assert not [w for w in by[("r", "g1")] if w.startswith("own caveat")]
    assert by[("plain", "g0")] == by[("r", "g0")][:-1]  # a spec without one adds nothing
