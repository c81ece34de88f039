"""When an interval can rule an effect out, light to import: the least number of
prompts a cluster bootstrap is read from (:data:`FEW_CLUSTERS`), an interval of no
width (:func:`zero_width`), the rule that joins them (:func:`informative`) and the words
of a value that has no interval because it is fixed by construction (:data:`FIXED_WORDS`).

:mod:`recuse.metrics.estimate` computes with them and re-exports them; the gate
(:mod:`recuse.report.gate`) reads a report with them, without NumPy or pandas.
"""

from __future__ import annotations

import math
from typing import Literal

__all__ = [
    "EXACT_BOUND",
    "FEW_CLUSTERS",
    "FIXED_WORDS",
    "INTERVAL_RULES",
    "MOVED_WORDS",
    "IntervalRule",
    "informative",
    "zero_width",
]

#: what a value fixed by construction is, said where an interval would be: a metric's
#: printed line and method (:mod:`recuse.metrics`), the finding's text and verdict
#: (:attr:`recuse.report.model.Finding.text`), the tables that show it and the gate's line
FIXED_WORDS = "fixed by construction, not a measurement"

#: which rule made a bootstrap result's interval (:func:`recuse.metrics.estimate.to_results`),
#: the ``interval_rule`` of a finding in report.json: the resamples' own interval ("bca",
#: "percentile"), the BCa interval (the leaderboard's: the percentile one) expanded for
#: its number of prompts ("expanded":
#: Student's t on them, at any number, fading as it grows:
#: :func:`~recuse.metrics.bootstrap.expanded_interval`; a probe's effect that more than
#: half its prompts move: part of the way, :func:`~recuse.metrics.estimate.expansion_share`),
#: a position rate's widened
#: where few prompts change with the order ("widened":
#: :func:`~recuse.metrics.estimate.moved_span`; a probe's effect whose moves cancel on each
#: prompt: :func:`~recuse.metrics.estimate.moved_span`, the exact bound on the prompts
#: that move, which the gate projects as a bootstrap's; a probe's effect whose pairs moved
#: both ways: :func:`~recuse.metrics.estimate.padded_span`, the expanded BCa padded by up
#: to two more effective prompts' variance, weighted by the fewer way's share of the
#: moving variance and, past half the prompts moving, faded with the expansion), or the exact
#: Clopper–Pearson bound where
#: none does ("exact_bound": :func:`~recuse.metrics.estimate.unseen_span`, which the gate
#: projects as it shrinks, 1/n)
IntervalRule = Literal["bca", "percentile", "expanded", "widened", "exact_bound"]
INTERVAL_RULES: tuple[IntervalRule, ...] = (
    "bca", "percentile", "expanded", "widened", "exact_bound",
)  # fmt: skip

FEW_CLUSTERS = 5  # fewer prompts than this: the clustered interval is unreliable
#: the words of a result's ``method`` whose interval is the exact bound of prompts none of
#: which changed (:func:`recuse.metrics.estimate.unseen_method`): it shrinks as 1/n, which
#: the gate's projection reads (:mod:`recuse.report.gate`)
EXACT_BOUND = "exact bound (not a bootstrap)"
#: what a position rate's interval is, in a line of the terminal's notes (the result's
#: ``method`` says which one each has: :func:`recuse.metrics.estimate.moved_method`,
#: :func:`recuse.metrics.estimate.unseen_method`)
MOVED_WORDS = (
    "the BCa interval, widened where few pairs change with the order (Student's t on the "
    "prompts' effective number, within the exact Clopper–Pearson bound on the prompts that "
    f"change); where none changes, an {EXACT_BOUND}"
)


def _rounding(estimate: float) -> float:
    """The spread that is rounding at the size of ``estimate``, not variation:
    ``1e-12 · max(1, |estimate|)`` (identical replicates of 0.1 have a standard deviation
    of 1e-17)."""
    return 1e-12 * max(1.0, abs(estimate))


def zero_width(estimate: float, low: float, high: float) -> bool:
    """Whether the interval ``[low, high]`` of ``estimate`` has no width: at most
    ``1e-12 · max(1, |estimate|)`` (rounding), as when every resample gave the same value.

    >>> zero_width(0.5, 0.5, 0.5), zero_width(0.5, 0.49, 0.5)
    (True, False)
    """
    return high - low <= _rounding(estimate)


def informative(
    *,
    estimate: float,
    low: float,
    high: float,
    clusters: int | None,
    std_error: float | None,
    fixed: bool,
) -> bool:
    """Whether the interval ``[low, high]`` of ``estimate`` can rule an effect out: always
    where the value is ``fixed`` by construction (more prompts would not change it: from 3
    prompts it read "add prompts"); else not from fewer than :data:`FEW_CLUSTERS` prompts
    (``clusters``), and not of zero width (:func:`zero_width`) unless its standard
    error is positive (above rounding: identical replicates of 0.1 have a standard
    deviation of 1e-17), its ends clamped rather than its resamples alike. The rule of
    :attr:`recuse.report.model.Finding.informative` and of the gate's reading of a
    report (:func:`recuse.report.gate.rules_nothing_out`).

    >>> informative(estimate=0.0, low=0.0, high=0.0, clusters=6, std_error=0.0, fixed=False)
    False
    >>> informative(estimate=0.5, low=0.5, high=0.5, clusters=6, std_error=0.0, fixed=True)
    True
    >>> informative(estimate=0.0, low=0.0, high=0.0, clusters=3, std_error=0.0, fixed=True)
    True
    """
    if fixed:  # no interval to rule with: more prompts never change the value
        return True
    if clusters is not None and clusters < FEW_CLUSTERS:
        return False
    measured = std_error is not None and _rounding(estimate) < std_error < math.inf
    return fixed or measured or not zero_width(estimate, low, high)
