"""A plain BCa interval and its p-value agree about the no-bias value at every level.

At 200 resamples the p-value read by counting the replicates below 0 (``m / B``) sat up
to ``1 / B`` in level from the interval's own quantile (numpy's, linear between the
sorted replicates at ``i / (B − 1)``), and the BCa map widened that: the planted table
below read p = 0.060 beside a 95% interval [0.038, 1.53] that excludes 0. The p-value
now reads the level at which the interval's end lies on 0, so the interval at level
``1 − p``, recomputed from the same resamples, has its end on 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.metrics.bootstrap import GroupedStatistic, Resampling, ratio
from recuse.metrics.estimate import MetricSpec, run_specs
from recuse.metrics.result import MetricResult


def _difference(n: int, seed: int, *, level: float, boot_seed: int) -> MetricResult:
    """A mean difference of ``n`` prompts of 2 pairs (normal, mean 0.6, a prompt effect of
    sd 0.5; ``seed``), its plain 95%-style BCa interval at ``level`` from 200 resamples."""
    rng = np.random.default_rng(seed)
    clusters = np.repeat(np.arange(n), 2)
    y = rng.normal(0.6, 1.0, 2 * n) + np.repeat(rng.normal(0, 0.5, n), 2)
    stat = GroupedStatistic(
        name="d", values=np.column_stack([y, np.ones(2 * n)]), group=np.zeros(2 * n, dtype=int),
        labels=("j",), combine=ratio, required=((1, "pairs"),),
    )  # fmt: skip
    spec = MetricSpec("d", stat, "a difference", null=0.0)
    boot = Resampling(n_boot=200, level=level, seed=boot_seed)
    (r,), _ = run_specs([spec], pd.Series(clusters), boot=boot, min_n=1)
    return r


def test_the_planted_table_that_read_p_0060_beside_an_interval_excluding_0() -> None:
    r = _difference(10, 6, level=0.95, boot_seed=1)
    assert "BCa" in r.method and "expanded" not in r.method
    assert r.ci_low > 0.03  # the 95% interval excludes 0 ...
    assert r.p_value < 0.05  # ... and the p-value says so (by count: 0.0595)
    # the interval at level 1 − p, from the same resamples, has its low end on 0
    again = _difference(10, 6, level=1 - r.p_value, boot_seed=1)
    assert again.ci_low == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("n", [8, 12, 15])
def test_interval_and_p_value_agree_about_0_on_many_small_tables(n: int) -> None:
    """20 tables of ``n`` prompts, 2 resampling seeds each (by count, 2 of the 40 of 15
    prompts disagreed)."""
    for seed in range(20):
        for boot_seed in (1, 2):
            r = _difference(n, seed, level=0.95, boot_seed=boot_seed)
            excludes = not r.ci_low <= 0.0 <= r.ci_high
            assert excludes == (r.p_value < 0.05), (seed, boot_seed, r.ci_low, r.p_value)
