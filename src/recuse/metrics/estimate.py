"""From grouped statistics to :class:`MetricResult` objects (one bootstrap for all)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import GroupedStatistic, GroupEstimate, cluster_bootstrap
from recuse.metrics.result import MetricResult, Skipped

__all__ = ["MetricSpec", "clusters_of", "run_one", "run_specs", "to_results"]

Components = Callable[[NDArray[np.float64]], dict[str, float]]


@dataclass(frozen=True)
class MetricSpec:
    """A metric ready to bootstrap: its statistic per judge and how to describe it."""

    metric: str
    stat: GroupedStatistic
    method: str
    components: Components | None = None


def clusters_of(pairs: pd.DataFrame) -> pd.Series:
    """Cluster label of every row: its prompt (``prompt_id``, never missing)."""
    return pairs["prompt_id"]


def run_specs(
    specs: Sequence[MetricSpec],
    clusters: pd.Series,
    *,
    level: float,
    n_boot: int,
    seed: int | None,
    min_n: int,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Bootstrap every spec together; usable groups become results, others :class:`Skipped`."""
    estimates = cluster_bootstrap(
        [s.stat for s in specs], clusters, n_boot=n_boot, level=level, seed=seed, min_n=min_n
    )
    return to_results(specs, estimates, level=level, n_boot=n_boot)


def to_results(
    specs: Sequence[MetricSpec],
    estimates: Sequence[Sequence[GroupEstimate]],
    *,
    level: float,
    n_boot: int,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Turn the bootstrap output of ``specs`` into results and skipped groups."""
    results: list[MetricResult] = []
    skipped: list[Skipped] = []
    boot = f"{level:.0%} percentile interval, cluster bootstrap over prompts ({n_boot} resamples)"
    for spec, groups in zip(specs, estimates, strict=True):
        for label, est in zip(spec.stat.labels, groups, strict=True):
            judge = None if label is None else str(label)
            if est.problem is not None:
                skipped.append(Skipped(spec.metric, judge, est.problem))
                continue
            components = spec.components(est.totals) if spec.components else {}
            results.append(
                MetricResult(
                    metric=spec.metric,
                    estimate=est.estimate,
                    ci_low=est.ci_low,
                    ci_high=est.ci_high,
                    level=level,
                    n=est.n,
                    n_clusters=est.n_clusters,
                    method=f"{spec.method}; {boot}",
                    judge=judge,
                    n_boot=est.n_boot,
                    n_boot_dropped=est.n_dropped,
                    counts=dict(est.counts),
                    components=components,
                )
            )
    return results, skipped


def run_one(
    spec: MetricSpec,
    clusters: pd.Series,
    *,
    level: float,
    n_boot: int,
    seed: int | None,
    min_n: int,
) -> MetricResult:
    """The one result of a single-group spec; a group too small raises :class:`EstimationError`."""
    results, skipped = run_specs(
        [spec], clusters, level=level, n_boot=n_boot, seed=seed, min_n=min_n
    )
    if skipped:
        s = skipped[0]
        who = f" for judge {s.judge!r}" if s.judge is not None else ""
        raise EstimationError(
            f"cannot estimate {s.metric}{who}: {s.reason} — add data, or lower min_n "
            "if you accept a rougher estimate"
        )
    return results[0]
