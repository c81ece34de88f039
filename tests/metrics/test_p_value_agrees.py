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


def _skewed(n: int, seed: int, *, level: float) -> MetricResult:
    """A mean difference of ``n`` prompts of 2 pairs, each ``Exp(1) − 1.7`` (skewed right,
    ``seed``): its plain BCa interval at ``level`` from 200 resamples, seed 1."""
    rng = np.random.default_rng(seed)
    y = rng.exponential(1.0, 2 * n) - 1.7
    stat = GroupedStatistic(
        name="d", values=np.column_stack([y, np.ones(2 * n)]), group=np.zeros(2 * n, dtype=int),
        labels=("j",), combine=ratio, required=((1, "pairs"),),
    )  # fmt: skip
    spec = MetricSpec("d", stat, "a difference", null=0.0)
    boot = Resampling(n_boot=200, level=level, seed=1)
    (r,), _ = run_specs([spec], pd.Series(np.repeat(np.arange(n), 2)), boot=boot, min_n=1)
    return r


def test_a_null_between_the_two_outermost_replicates_reads_the_interval_s_level() -> None:
    """0 lies between the two largest of 200 replicates (the skew puts ``z0`` and ``a``
    above 0): the 95% interval [−1.35, −0.026] excludes it, and p said 0.116 because the
    level was kept at ``B / (B + 1)`` before the BCa map, a level the interval does not
    keep (its high end reads numpy's quantile at any level up to 1)."""
    r = _skewed(10, 98, level=0.95)
    assert "BCa" in r.method and "expanded" not in r.method
    assert r.ci_high < -0.02  # the 95% interval excludes 0 ...
    assert r.p_value < 0.05  # ... and the p-value says so (kept at B / (B + 1): 0.116)
    again = _skewed(10, 98, level=1 - r.p_value)
    assert again.ci_high == pytest.approx(0.0, abs=1e-9)


def _inverted(col: np.ndarray, z0: float, accel: float, null: float) -> float:
    """The p-value of ``null`` found by bisection over the level of the BCa interval
    written out here: its ends numpy's quantiles of ``col`` at
    ``Φ(z0 + (z0 + z_q) / (1 − a (z0 + z_q)))``; ``1 − L*`` for ``L*`` the least level
    whose interval holds ``null``, never below ``2 / (B + 1)``."""
    from scipy.stats import norm

    def holds(level: float) -> bool:
        ends = []
        for q in ((1 - level) / 2, (1 + level) / 2):
            z = z0 + float(norm.ppf(q))
            ends.append(float(np.quantile(col, norm.cdf(z0 + z / (1 - accel * z)))))
        return ends[0] <= null <= ends[1]

    out, inside = 0.0, 1 - 1e-15
    if not holds(inside):
        return 2 / (col.size + 1)
    for _ in range(80):
        mid = (out + inside) / 2
        out, inside = (out, mid) if holds(mid) else (mid, inside)
    return max(2 / (col.size + 1), 1 - inside)


@pytest.mark.parametrize("z0, accel", [(0.1, 0.08), (-0.3, -0.05), (0.25, 0.0), (0.0, 0.1)])
def test_p_is_the_interval_inverted_by_bisection_near_the_outermost_replicates(
    z0: float, accel: float
) -> None:
    """Nulls between the two smallest and the two largest of 200 normal replicates, and
    within: p agrees to 1e-9 with the interval inverted by bisection over its level
    (``_inverted``). Keeping the level in ``[1/(B+1), B/(B+1)]`` read one p wherever the
    null lay between the two outermost: 0.081 between the two smallest with ``z0 = −0.3,
    a = −0.05``, where bisection reads 0.021–0.077 (a 95% interval excluding the null
    beside p 0.081), 0.049 between the two largest with ``z0 = 0.1, a = 0.08``
    (0.015–0.047)."""
    from recuse.metrics.bootstrap import GroupEstimate, p_value

    b = 200
    col = np.sort(np.random.default_rng(5).normal(0.0, 1.0, b))
    est = GroupEstimate(0.0, -2.0, 2.0, 40, 20, b, 0, np.zeros(0), z0=z0, accel=accel,
                        replicates=col)  # fmt: skip
    for i, f in [(0, 0.1), (0, 0.5), (0, 0.9), (b - 2, 0.1), (b - 2, 0.5), (b - 2, 0.9),
                 (1, 0.5), (5, 0.3), (60, 0.5), (150, 0.7), (b - 3, 0.5)]:  # fmt: skip
        null = float(col[i] + f * (col[i + 1] - col[i]))
        expected = _inverted(col, z0, accel, null)
        assert p_value(est, null) == pytest.approx(expected, abs=1e-9), (i, f)
