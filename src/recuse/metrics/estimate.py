"""From grouped statistics to :class:`MetricResult` objects (one bootstrap for all).

Every result carries its standard error (the standard deviation of the kept
bootstrap replicates; times the expansion's factor where the interval is expanded for
few prompts, :func:`expanded_error`), its two-sided p-value against the metric's no-bias value
(``MetricSpec.null``; its interval, BCa or percentile, inverted:
:func:`recuse.metrics.bootstrap.p_value`)
and warnings a reader needs to trust the interval (:func:`interval_warnings`):

* fewer than :data:`FEW_CLUSTERS` prompts: a cluster bootstrap over so few is unreliable;
* an interval of zero width (:func:`zero_width`): the resamples never varied (e.g. a
  judge always right); it rules nothing out
  (:attr:`recuse.report.model.Finding.informative`), and its p-value is at least the
  exact sign test's (:func:`sign_test_p`). Where the metric says why its resamples
  cannot vary for this group (``MetricSpec.constant``: a judge whose verdict is the same
  in both orders, whose position rate is 0.5 on every pair; a part of an estimate
  that is 0 by construction), its words replace the warning, and the interval is the
  one the prompts bound (:func:`unseen_span`, ``MetricSpec.unseen``) or, for a value
  fixed by construction, the zero width is real (``MetricResult.fixed``); where the
  interval has width, such a metric's is widened for the few prompts that move it
  (:func:`moved_span`; a probe's effect: :func:`padded_span`), and its low-n warning
  counts the pairs that do;
* an interval that does not hold its estimate: the resamples lie far to one side of
  it, as for a strongly biased statistic (the calibration error of a near-calibrated
  judge, pushed above 0 by sampling noise, whose BCa interval collapses below it);
* fewer than :data:`LOW_N` pairs in the smallest group the metric conditions on.
  ``benchmarks/interval_coverage.py`` measured the BCa interval of the EO bias at
  90 %: about 0.81 coverage with 5 pairs in the smaller group, 0.87 with 7, 0.90
  from 10 on; under 10 the interval is likely too narrow, so it is marked.

A metric that is the absolute value of a signed statistic (``MetricSpec.folded``: Saito's
Eq. 5, the absolute value of Eq. 6) is resampled signed and folded after (:func:`fold`): a
bootstrap of ``|θ|`` lies above 0 in every resample, so its interval and p-value would
call an unbiased judge biased (Eq. 5's 90% interval excluded 0 for 95 of 100 simulated
judges with no verbosity bias).

A metric may add its own caveats about the estimate itself (``MetricSpec.warnings``,
computed from the group's totals like its components; e.g. the calibrated
self-preference says when its prediction extrapolates the judge's competence curve).
They follow the interval's warnings in ``MetricResult.warnings``. It may also add notes
(``MetricSpec.notes``, from the same totals): what a reader may want to know of the
number that is no reason to distrust it (``MetricResult.notes``; e.g. the pairs judged
in one order only, with the favoured answer in one slot, below the one-slot
warning's rule: too few, or too evenly split between the slots). No gate fails on a note.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import EstimationError, InputError
from recuse.interval_rules import EXACT_BOUND, FIXED_WORDS, IntervalRule
from recuse.interval_rules import FEW_CLUSTERS as FEW_CLUSTERS
from recuse.interval_rules import informative as informative
from recuse.interval_rules import zero_width as zero_width
from recuse.metrics.bootstrap import (
    INTERVAL_NAMES,
    Extrapolation,
    GroupedStatistic,
    GroupEstimate,
    Interval,
    Resampling,
    blended_quantile,
    cluster_bootstrap,
    counted,
    end_tails,
    expanded_interval,
    p_value,
)
from recuse.metrics.result import MetricResult, NullBound, Refit, Skipped
from recuse.numbers import general, percent

__all__ = [
    "EXPANDED_WORDS",
    "FEW_CLUSTERS",
    "LOW_N",
    "MetricSpec",
    "clipped_words",
    "clusters_of",
    "excludes_null",
    "expanded_error",
    "expanded_method",
    "extrapolated_words",
    "extrapolation",
    "flag_threshold",
    "fold",
    "informative",
    "interval_method",
    "interval_warnings",
    "run_one",
    "run_specs",
    "sign_test_p",
    "student_error",
    "the_fix",
    "to_results",
    "two_rate_test_p",
    "unlabelled_judges",
    "unusable_verdicts",
    "zero_width",
]

LOW_N = 10  # fewer pairs than this in a group the metric conditions on: marked

Components = Callable[[NDArray[np.float64]], dict[str, float]]
#: a metric's own caveats for one group, from its totals (empty when nothing to say);
#: its notes (``MetricSpec.notes``) have the same form
Warnings = Callable[[NDArray[np.float64]], tuple[str, ...]]


@dataclass(frozen=True)
class MetricSpec:
    """A metric ready to bootstrap: its statistic per judge, how to describe it, its
    no-bias value ``null`` (the p-value's null hypothesis) and, optionally, its own
    caveats per group from the group's totals (``warnings``; after the interval's) and
    its notes, from the same totals (``notes``: informational, no caveat)."""

    metric: str
    stat: GroupedStatistic
    method: str
    components: Components | None = None
    null: float = 0.0
    warnings: Warnings | None = None
    #: what a reader may want to know of a group's number that is no reason to distrust
    #: it, from its totals (the result's :attr:`~recuse.metrics.result.MetricResult.notes`)
    notes: Warnings | None = None
    #: the description of a required count (``stat.required``) to report as the
    #: result's ``n`` instead of all the group's rows (e.g. the judge's own pairs where
    #: the other rows only calibrate the estimate)
    n_count: str | None = None
    #: whether the metric compares the judge with the human (reference) labels: a judge
    #: with none is not estimated for "no human labels" (:func:`unlabelled_judges`)
    labelled: bool = False
    #: why the metric's value is fixed by construction for a group, from its totals (None:
    #: it is not): said in place of the zero-width warning, whose "add harder pairs"
    #: would not help (e.g. position for a judge whose verdict never depends on the order)
    constant: Callable[[NDArray[np.float64]], str | None] | None = None
    #: ``constant`` says why the resamples cannot vary, not that the value is fixed: the
    #: prompts bound its interval (:func:`unseen_span`; a judge whose verdict is the same
    #: in both orders); without it, a zero width with ``constant`` is ``fixed``
    unseen: bool = False
    #: how the statistic's model is refitted in every resample, where it has one (the
    #: result's :attr:`~recuse.metrics.result.MetricResult.refit`)
    refit: Refit | None = None
    #: the metric is the absolute value of ``stat``, a signed statistic whose no-bias
    #: value is ``null`` = 0: the result is folded (:func:`fold`) and says so
    #: (:attr:`~recuse.metrics.result.MetricResult.absolute`)
    folded: bool = False
    #: the no-bias value ``null`` is a bound of the metric
    #: (:data:`~recuse.metrics.result.NullBound`): "floor", its least value (the flip rate,
    #: an error: at least 0), or "ceiling", its greatest (position consistency: at most
    #: 1). Such a rate, share or error is no signed difference (it reads without a sign)
    #: and has no p-value: an estimate can lie on one side of its no-bias value only,
    #: which is no hypothesis a test rejects (a flip rate of 0.43 read p = 2/(B+1))
    bound: NullBound | None = None
    #: the estimate is a quality score, a chance-corrected agreement coefficient whose
    #: no-bias value ``null`` = 0 is chance (Cohen's kappa, Krippendorff's alpha), not a
    #: bias difference: it reads without a sign, as the audit prints it, and keeps its
    #: p-value (it can lie below chance) (:attr:`~recuse.metrics.result.MetricResult.score`)
    score: bool = False
    #: the BCa interval is expanded for the group's few prompts
    #: (:func:`~recuse.metrics.bootstrap.expanded_interval`, its p-value likewise): set
    #: where the plain BCa interval held planted truths less often than its level at 20–40
    #: prompts (``benchmarks/metric_coverage.py``: verbosity, the demographic-parity
    #: self- and family preference, agreement, the position rates; not the
    #: equal-opportunity ones, which held them 0.88–0.94 and read 0.96–0.97 expanded)
    expanded: bool = False
    #: the range of one pair's term (its greatest minus its least value), which the exact
    #: bound of an :attr:`unseen` rate scales by (:func:`unseen_span`): 1 for a rate of
    #: shares, 2 for a difference of two shares (a probe's effect, −1 to +1)
    span: float = 1.0
    #: what the prompts that could move an :attr:`unseen` rate hold, in words after "the
    #: share of prompts" (:func:`unseen_method`)
    movers: str = "whose verdict changes with the order"
    #: the values the metric can take: an end of the expanded interval extrapolated past
    #: the resamples (:func:`~recuse.metrics.bootstrap.tail_end`, 99% from 10 prompts or
    #: fewer) stays within it, as does a padded end (:func:`padded_span`). Every expanded
    #: metric is a share (0 to 1: set so) or a difference of two shares or a
    #: chance-corrected agreement (−1 to +1, the default)
    extent: tuple[float, float] = (-1.0, 1.0)
    #: an :attr:`unseen` rate's ends are widened where few prompts move it
    #: (:func:`moved_span`); False: only a zero width is replaced (by the exact bound:
    #: :func:`unseen_span` where nothing moved, :func:`moved_span` where the moves
    #: cancel on each prompt), and the interval is otherwise BCa (expanded where
    #: :attr:`expanded`)
    widens: bool = True
    #: an :attr:`unseen` rate not widened (a probe's effect, whose pairs can move both
    #: ways): from a group's totals, the share ``r`` (0 to ½) of its moving pairs' sum of
    #: squared moves that the way fewer of it moved carries (toward the treated answer or
    #: away; 0: one way only). Where some prompts move it, its BCa interval is expanded
    #: (a share :func:`expansion_share` of the way, all of it up to half the prompts), and
    #: padded by :func:`padding_weight` of ``r`` (:func:`padded_span`, rule "widened").
    #: None: neither
    padded: Callable[[NDArray[np.float64]], float] | None = None


def fold(estimate: float, low: float, high: float) -> tuple[float, float, float]:
    """``|θ|`` from a signed estimate ``θ`` and its interval ``[low, high]``: ``|estimate|``
    and the absolute values ``θ`` takes over the interval, ``[0, max(−low, high)]`` where
    it holds 0, else the ends' absolute values in order. It holds ``|θ|`` whenever the
    signed interval holds ``θ``, so its level is at least that one's; the p-value of
    ``|θ| = 0`` is that of ``θ = 0``, the same hypothesis.

    >>> fold(-0.2, -0.3, -0.1), fold(0.05, -0.1, 0.2)
    ((0.2, 0.1, 0.3), (0.05, 0.0, 0.2))
    """
    if low <= 0.0 <= high:
        return abs(estimate), 0.0, max(-low, high)
    return abs(estimate), min(abs(low), abs(high)), max(abs(low), abs(high))


def clusters_of(pairs: pd.DataFrame, *, missing_ok: bool = False) -> pd.Series:
    """Cluster label of every row: its prompt (``prompt_id``). A table without the
    column is an :class:`InputError` (the intervals resample prompts), where pandas
    raised ``KeyError: 'prompt_id'``; so is a row without a prompt id (a file's reader
    refuses one; a table passed from Python gave IndexError 'index -1 is out of bounds'
    or InvalidIndexError from inside a metric), unless ``missing_ok`` (a caller that
    gives such a row a cluster of its own)."""
    if "prompt_id" not in pairs.columns:
        raise InputError(
            "the table has no prompt_id column: the intervals resample prompts, so each row "
            "needs the prompt it answers",
            column="prompt_id",
            fix="add prompt_id (the same id for the rows of one prompt; one per row if each "
            "prompt has one pair), or read the table with recuse.data.load(NAME_OR_FILE)",
        )
    prompts = pairs["prompt_id"]
    missing = prompts.isna().to_numpy()
    if missing.any() and not missing_ok:
        raise InputError(
            f"{int(missing.sum()):,} of {len(prompts):,} rows have no prompt_id (the first "
            f"at index {prompts.index[np.flatnonzero(missing)[0]]!r}): the intervals "
            "resample prompts, so each row needs the prompt it answers",
            column="prompt_id",
            fix="fill prompt_id (the same id for the rows of one prompt; one per row if each "
            "prompt has one pair), or read the table with recuse.data.load(NAME_OR_FILE)",
        )
    return prompts


def items_of(pairs: pd.DataFrame) -> pd.Series:
    """Item of every row: its pair of answers (``item_id``), on each judge's row of it,
    which a human label or a judge's agreement with the others counts once. A table
    without the column is an :class:`InputError`, as :func:`clusters_of` says of
    ``prompt_id`` (the file reader needs it too), where pandas raised ``KeyError:
    'item_id'``."""
    if "item_id" not in pairs.columns:
        raise InputError(
            "the table has no item_id column: a pair judged by several judges is one "
            "row per judge, and its human label counts once per item",
            column="item_id",
            fix="add item_id (the same id on every judge's row of one pair; one per row if "
            "each pair has one row), or read the table with recuse.data.load(NAME_OR_FILE)",
        )
    return pairs["item_id"]


def run_specs(
    specs: Sequence[MetricSpec],
    clusters: pd.Series,
    *,
    boot: Resampling,
    min_n: int,
    unlabelled: Mapping[str, str] | None = None,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Bootstrap every spec together; usable groups become results, others :class:`Skipped`
    (``unlabelled``: :func:`unlabelled_judges`, as in :func:`to_results`)."""
    estimates = cluster_bootstrap([s.stat for s in specs], clusters, boot=boot, min_n=min_n)
    return to_results(specs, estimates, boot=boot, unlabelled=unlabelled)


def interval_method(boot: Resampling, interval: Interval = "bca") -> str:
    """The interval's words for a result's ``method`` text.

    >>> interval_method(Resampling(), "percentile")
    '90% percentile interval, cluster bootstrap over prompts (2000 resamples)'
    """
    name = INTERVAL_NAMES[interval]
    return f"{percent(boot.level)} {name}, cluster bootstrap over prompts ({boot.n_boot} resamples)"


#: the method's words on its interval where the value is fixed by construction (a part of
#: the calibrated self-preference on a rung none of the judge's own pairs is on): there is
#: no interval, and the method read "90% percentile interval, cluster bootstrap over
#: prompts (2000 resamples)" beside the page's "none: not a measurement"
FIXED_METHOD = f"no interval: the value is {FIXED_WORDS}"

#: what :func:`~recuse.metrics.bootstrap.expanded_interval` does to a BCa interval, in words
EXPANDED_WORDS = (
    "expanded for the prompts' number G (Hesterberg's expanded interval: each tail's "
    "normal quantile replaced by √(G/(G−1))·t_{G−1})"
)


def clipped_words(
    clipped: tuple[bool, bool],
    extent: tuple[float, float],
    *,
    folded: bool = False,
    widened: tuple[bool, bool] = (False, False),
) -> str:
    """What the method adds where an interval's end lay past the values the metric takes
    (``extent``) and is that bound instead: ``clipped`` says which signed ends (low,
    high). Such an end was an expanded end extrapolated past the resamples, or one a
    padding (:func:`padded_span`) widened past the bound (``widened``: which ends were
    within the values until then); the words name the cause. The bound holds whatever
    the tail asked, so it is no extrapolated number (the result's ``extrapolated``
    record leaves it out). ``folded``: the interval shown is of ``|θ|``, whose high end
    a clipped end becomes.

    >>> clipped_words((False, True), (0.0, 1.0))
    'its high end is 1, the greatest value the metric takes (an end extrapolated past \
the resamples lay beyond it)'
    >>> clipped_words((False, True), (-1.0, 1.0), widened=(False, True))[-58:]
    'an end widened for the prompts that move it lay beyond it)'
    >>> clipped_words((True, True), (-1.0, 1.0), widened=(True, False))[-115:]
    '(the high end extrapolated past the resamples and the low end widened for the \
prompts that move it lay beyond them)'
    >>> clipped_words((True, True), (-1.0, 1.0))[:48]
    'its ends are −1 and 1, the least and greatest va'
    >>> clipped_words((True, False), (-1.0, 1.0), folded=True)[:47]
    'its high end is 1, the greatest value |θ| takes'
    """
    lo, hi = (f"{v:g}".replace("-", "−") for v in extent)
    if folded:  # |θ|'s high end: the farther bound's magnitude
        top = max(abs(extent[0]) if clipped[0] else 0.0, abs(extent[1]) if clipped[1] else 0.0)
        said = f"its high end is {top:g}, the greatest value |θ| takes"
    elif all(clipped):
        said = f"its ends are {lo} and {hi}, the least and greatest values the metric takes"
    elif clipped[0]:
        said = f"its low end is {lo}, the least value the metric takes"
    else:
        said = f"its high end is {hi}, the greatest value the metric takes"
    both = all(clipped) and not folded
    widened = (widened[0] and clipped[0], widened[1] and clipped[1])
    why = "extrapolated past the resamples"
    if both and widened[0] != widened[1]:  # one end extrapolated past, one widened past
        wide, far = ("low", "high") if widened[0] else ("high", "low")
        why = (
            f"the {far} end extrapolated past the resamples and the {wide} end widened for "
            "the prompts that move it"
        )
        return f"{said} ({why} lay beyond them)"
    if any(widened):
        why = "widened for the prompts that move it"
    if both:
        return f"{said} (the ends {why} lay beyond them)"
    return f"{said} (an end {why} lay beyond it)"


def extrapolated_words(side: str) -> str:
    """What the method adds where an expanded interval's ``side`` ("ends", "low end" or
    "high end": :attr:`~recuse.metrics.bootstrap.Extrapolation.side`) lay past the
    resamples' reach (:func:`~recuse.metrics.bootstrap.tail_end`; the result's warning
    and ``extrapolated`` say how far). "its ends" was said where one end was.

    >>> extrapolated_words("low end")
    "its low end past the resamples' reach extrapolated along a normal tail"
    """
    return f"its {side} past the resamples' reach extrapolated along a normal tail"


def expanded_method(*, boot: Resampling) -> str:
    """The words of :func:`~recuse.metrics.bootstrap.expanded_interval` for a result's
    ``method``: the BCa interval expanded for few prompts.

    >>> expanded_method(boot=Resampling())[:58]
    '90% BCa interval (bias-corrected, jackknife acceleration),'
    """
    name = INTERVAL_NAMES["bca"]
    return (
        f"{percent(boot.level)} {name}, {EXPANDED_WORDS}, cluster bootstrap over prompts "
        f"({boot.n_boot} resamples)"
    )


def flag_threshold(level: float) -> float:
    """The largest false-discovery-adjusted (or raw) p-value flagged at ``level``:
    ``1 − level``, widened by a billionth of itself for rounding. In floating point
    ``1 − 0.9`` is 0.09999999999999998, below the q = 16 · 2/320 = 0.1 of a lone bias at
    the bootstrap's floor with just enough resamples (319 among 16 tests), which was
    left unflagged, with nothing said (:func:`recuse.report.multiplicity.
    resolution_limit` counts 319 as enough).

    >>> 16 * 2 / 320 <= 1 - 0.9, 16 * 2 / 320 <= flag_threshold(0.9)
    (False, True)
    """
    return (1 - level) * (1 + 1e-9)


def excludes_null(
    *,
    estimate: float,
    low: float,
    high: float,
    null: float,
    level: float,
    p_value: float | None,
    clusters: int | None,
    std_error: float | None,
    fixed: bool,
) -> bool:
    """Whether an estimate reads as a bias before any false-discovery adjustment: its
    interval ``[low, high]`` excludes ``null`` — except an interval that is not
    :func:`informative` (of zero width, every resample alike, or from fewer than
    :data:`FEW_CLUSTERS` prompts: it excludes nothing on its own), which reads as a bias
    only where its ``p_value`` (at least the sign test's, :func:`sign_test_p`: 0.25 from
    3 prompts all on one side) is at most
    :func:`flag_threshold` of ``level`` (without a p-value, the interval decides). The rule of
    :attr:`recuse.report.model.Finding.excludes_null` (the flag of a finding whose test is
    not adjusted) and of the power a plan simulates (:func:`recuse.simulate.power.plan`).

    >>> excludes_null(estimate=1.0, low=1.0, high=1.0, null=0.5, level=0.9, p_value=0.25,
    ...               clusters=3, std_error=0.0, fixed=False)
    False
    >>> excludes_null(estimate=0.2, low=0.1, high=0.3, null=0.0, level=0.9, p_value=0.01,
    ...               clusters=30, std_error=0.05, fixed=False)
    True
    """
    rules = informative(
        estimate=estimate, low=low, high=high, clusters=clusters, std_error=std_error, fixed=fixed
    )
    if not rules and p_value is not None:
        return p_value <= flag_threshold(level)
    return not low <= null <= high


def sign_test_p(n_clusters: int) -> float:
    """The exact two-sided p-value of ``n_clusters`` prompts that all fall on the same side
    of the no-bias value: ``min(1, 2 · 2^−n)``, the sign test's.

    A zero-width bootstrap interval means every resample of the prompts gave the same
    value: for a statistic averaged over prompts, every prompt's value is that one. If
    there were no bias, each prompt's value would fall above or below the no-bias value
    with probability at most 1/2, independently across prompts (the units the bootstrap
    treats as independent), so all ``n`` on one given side has probability at most
    ``2^−n`` and on either side ``2 · 2^−n``. The bootstrap p-value of such an interval is
    its floor ``2/(B+1)`` whatever ``n`` (0.0005 from two prompts); :func:`to_results`
    keeps the larger of the two. Five prompts give 0.0625 (not significant at 95%),
    six 0.031, twenty 1.9e-06.

    >>> sign_test_p(1), sign_test_p(5), sign_test_p(6)
    (1.0, 0.0625, 0.03125)
    """
    return min(1.0, 2.0 * 0.5 ** max(n_clusters, 0))


def two_rate_test_p(first: float, second: float) -> float:
    """The exact two-sided p-value bound of a difference of two rates whose every
    prompt lies at one end: all ``first`` prompts of one rate at 1 and all ``second``
    of the other at 0 (or the reverse), as a zero-width interval of a difference of
    recalls means (a judge always right on one side, always wrong on the other). With
    no bias the two rates share one value ``r`` (unknown), so that has probability at
    most ``r^a (1 − r)^b``, largest at ``r = a / (a + b)``::

        p = min(1, 2 · (a / k)^a · (b / k)^b),  k = a + b

    (a prompt holding pairs of both rates counts half to each: its chance of both ends
    at once is at most ``min(r, 1 − r) ≤ √(r (1 − r))``). It equals the sign test's
    ``2 · 2^−k`` (:func:`sign_test_p`) only when ``a = b`` and is larger otherwise: 9
    prompts on one side and 3 on the other give 0.0024 where the sign test gives 0.0005.

    >>> two_rate_test_p(3, 3) == sign_test_p(6), round(two_rate_test_p(9, 3), 5)
    (True, 0.00235)
    """
    k = first + second
    if k <= 0:
        return 1.0
    term = 1.0
    for x in (first, second):
        if x > 0:
            term *= (x / k) ** x
    return min(1.0, 2.0 * term)


def interval_warnings(
    est: GroupEstimate,
    *,
    constant: str | None = None,
    exact: bool = False,
    moving: int | None = None,
) -> tuple[str, ...]:
    """What a reader must know before trusting the interval of ``est`` (see the module
    docstring for the thresholds); empty when nothing. ``constant``: why the value is
    fixed by construction, said instead of the zero-width warning. ``exact``: the
    interval is :func:`unseen_span`'s, an exact bound at any number of prompts, not a
    bootstrap's: neither "unreliable" for fewer than :data:`FEW_CLUSTERS` prompts nor
    "likely too narrow" at low n is said. ``moving``: the pairs whose verdict changes
    with the order, on :attr:`~recuse.metrics.bootstrap.GroupEstimate.moving` prompts
    (a position rate, :func:`moved_span`): what the interval rests on, so the low-n
    warning counts them where they are fewer than :data:`LOW_N` (4 of 40 pairs flip: it
    counted the 40 and said nothing)."""
    out = []
    if est.n_clusters < FEW_CLUSTERS and not exact:
        out.append(
            f"only {counted(est.n_clusters, 'prompts')}: the interval is unreliable "
            f"(a cluster bootstrap needs {FEW_CLUSTERS} or more) — add prompts"
        )
    if zero_width(est.estimate, est.ci_low, est.ci_high):
        out.append(
            constant
            or "no variation in the resamples: the interval says nothing about uncertainty "
            "(e.g. the judge is always right — add harder pairs — or its verdict is the same "
            "on every pair: one side, or a tie where it flips with the order)"
        )
    tol = 1e-12 * max(1.0, abs(est.estimate))
    if not est.ci_low - tol <= est.estimate <= est.ci_high + tol:
        out.append(
            "the interval does not hold the estimate: the resamples lie far to one side of "
            "it, so the statistic is biased at this n (as a calibration error near 0 is, "
            "pushed up by sampling noise) — read the interval as rough"
        )
    sizes = dict(est.counts) or {"pairs": est.n}
    desc, smallest = min(sizes.items(), key=lambda kv: kv[1])
    if moving is not None and 0 < moving < min(smallest, LOW_N) and not exact:
        out.append(
            f"low n: only {counted(moving, 'pairs')} of {smallest:,} "
            f"{'changes its' if moving == 1 else 'change their'} verdict with the order, "
            f"on {counted(est.moving, 'prompts')} (under {LOW_N}): the "
            "interval rests on them, so it is widened for so few (Student's t on the "
            "prompts' effective number, up to the exact bound) — read it as rough"
        )
    elif smallest < LOW_N and not exact:
        out.append(
            f"low n: only {counted(smallest, desc)} (under {LOW_N}); the interval is "
            "likely too narrow — read it as rough"
        )
    return tuple(out)


def unusable_verdicts(
    pairs: pd.DataFrame, codes: NDArray[np.intp], labels: Sequence[str]
) -> dict[str, str]:
    """For each judge of ``labels`` without a single usable verdict, why: ``"no verdicts"``
    (no rows) or ``"all 12 verdicts of judge X are unparsed"`` (``p_a`` missing on every
    row). Judges with a usable verdict are not in the result."""
    out: dict[str, str] = {}
    usable = np.isfinite(pairs["p_a"].to_numpy(float))
    for g, label in enumerate(labels):
        mine = codes == g
        n = int(mine.sum())
        if n == 0:
            out[str(label)] = f"judge {label!r} has no verdicts in this table"
        elif not usable[mine].any():
            what = "its verdict is" if n == 1 else f"all {n} verdicts of judge {label!r} are"
            out[str(label)] = f"{what} unparsed or missing (no usable p_a) — nothing to measure"
    return out


def unlabelled_judges(
    pairs: pd.DataFrame, codes: NDArray[np.intp], labels: Sequence[str]
) -> dict[str, str]:
    """For each judge of ``labels`` none of whose rows has a human (reference) label, why
    a metric comparing it with the labels is not estimated: ``"no human labels (none of
    its 12 pairs has one) …"``. Judges with a labelled row are not in the result."""
    out: dict[str, str] = {}
    human = pairs["human"] if "human" in pairs.columns else pd.Series(np.nan, index=pairs.index)
    has = np.isfinite(pd.to_numeric(human, errors="coerce").to_numpy(float))
    for g, label in enumerate(labels):
        mine = codes == g
        n = int(mine.sum())
        if n and not has[mine].any():
            of = "its only pair has none" if n == 1 else f"none of its {n:,} pairs has one"
            out[str(label)] = (
                f"no human labels ({of}; this compares the judge with them) — add a human column"
            )
    return out


def to_results(
    specs: Sequence[MetricSpec],
    estimates: Sequence[Sequence[GroupEstimate]],
    *,
    boot: Resampling,
    unusable: Mapping[str, str] | None = None,
    interval: Interval = "bca",
    unlabelled: Mapping[str, str] | None = None,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Turn the bootstrap output of ``specs`` into results and skipped groups.

    ``unusable`` (:func:`unusable_verdicts`) gives the reason for a judge without a
    usable verdict: it replaces the metric's own reason (which would name the first
    group it lacks, not the cause); likewise ``unlabelled`` (:func:`unlabelled_judges`)
    for a judge without a human label, in the metrics that need them
    (``MetricSpec.labelled``), where the metric's own reason would name the pairs where
    the human prefers one side. ``interval`` (or the statistic's own) names the
    method in the text. A result's warnings are the interval's
    (:func:`interval_warnings`), then the spec's own (``MetricSpec.warnings``), its notes
    the spec's (``MetricSpec.notes``); its
    ``n_boot_unfit`` counts the kept resamples whose fit has no finite estimate
    (:attr:`~recuse.metrics.bootstrap.GroupedStatistic.unfit`).

    A zero-width interval (:func:`zero_width`) whose spec says why the resamples cannot
    vary for the group (``MetricSpec.constant``) is replaced by the one the prompts
    bound (:func:`unseen_span`) where ``MetricSpec.unseen``, else is ``fixed``; a zero
    width at the no-bias value of an unseen rate not widened (a probe's effect) whose pairs
    move but cancel on each prompt is the exact bound on the share of prompts that move
    (:func:`moved_span`'s exact bound, rule "widened"); where such a rate's interval has
    width and some prompts move it (``MetricSpec.padded``), it is the BCa interval
    expanded (a share :func:`expansion_share` of the way past half the prompts moving),
    and padded as its pairs moved both ways (:func:`padding_weight`, :func:`padded_span`,
    rule "widened"); one
    that is neither and excludes the no-bias value gets at
    least the sign test's p-value
    (:func:`sign_test_p`): the bootstrap's floor ``2/(B+1)`` would call two prompts on one
    side significant. So does any interval from fewer than :data:`FEW_CLUSTERS` prompts
    that excludes it: a probe's effect on 2 prompts, −0.021 [−0.027, −0.015], read
    p = 0.001 and was flagged, where the gate calls it inconclusive.
    """
    results: list[MetricResult] = []
    skipped: list[Skipped] = []
    for spec, groups in zip(specs, estimates, strict=True):
        for label, est in zip(spec.stat.labels, groups, strict=True):
            judge = None if label is None else str(label)
            if est.problem is not None:
                reason = (unusable or {}).get(str(judge)) or est.problem
                if spec.labelled and str(judge) not in (unusable or {}):
                    reason = (unlabelled or {}).get(str(judge), reason)
                skipped.append(Skipped(spec.metric, judge, reason))
                continue
            components = spec.components(est.totals) if spec.components else {}
            constant = spec.constant(est.totals) if spec.constant else None
            flat = zero_width(est.estimate, est.ci_low, est.ci_high)
            kind = spec.stat.interval or interval
            unseen = flat and constant is not None and spec.unseen
            # widened where at most half the prompts change with the order: the few that
            # do carry the variance (where most do, the rare ones are those that do not,
            # which the exact bound on the changing ones cannot bound: it read [0, 1])
            # (and where the resamples cannot vary though some pairs change: prompts whose
            # own first-position rate is 0.5, a flip each way, read 0.50 [0.50, 0.50],
            # narrower than the exact bound of none changing)
            widen = spec.unseen and spec.widens and 0 <= est.moving <= est.n_clusters / 2
            balanced = widen and flat and est.moving > 0
            widen = widen and (not flat or balanced)
            # an unseen rate not widened (a probe's effect) whose resamples cannot vary
            # though some pairs move: their moves cancel on each prompt holding one (+1
            # and −1 on one prompt read 0 [0, 0]); the exact bound on the share of such
            # prompts, as a balanced position rate's (moved_span). Only at the no-bias
            # value: where every prompt moves it by the same amount (the edit wins one of
            # two pairs on each), the resamples cannot vary either, and nothing cancels
            cancel = spec.unseen and not spec.widens and flat and est.moving > 0
            cancel = cancel and zero_width(spec.null, *sorted((est.estimate, spec.null)))
            # a probe's effect some prompts move: expanded (all the way up to half of them
            # moving, then less, to none where all do: expansion_share); padded as its
            # pairs moved both ways (toward the treated answer and away): by the share of
            # the moving variance the fewer way carries (padding_weight), so one small
            # back-move pads little, and by the expansion's share (padded_span)
            few_move = spec.padded is not None and kind == "bca" and est.std_error > 0
            few_move = few_move and not (flat or widen or unseen or cancel)
            # τ from the prompts counted by the size of their net moves (moved_number): one
            # moved 1e-6 at the last of 3 prompts dropped τ from 2/3 to 0 when counted as 1
            few_move = few_move and 0 < est.moving
            share = expansion_share(moved_of(est), est.n_clusters) if few_move else 1.0
            few_move = few_move and share > 0
            weight = 0.0
            if few_move and spec.padded is not None and math.isfinite(est.effective):
                weight = padding_weight(spec.padded(est.totals)) * share
            k = padded_factor(est.effective, weight=weight)
            pad = few_move and k > 1.0
            # a BCa interval from few prompts is expanded (Student's t for them; the
            # moved_span and unseen_span intervals carry their own small-sample rule)
            expand = spec.expanded or few_move
            expand = expand and kind == "bca" and not (widen or unseen or cancel)
            low, high = est.ci_low, est.ci_high
            far: Extrapolation | None = None
            clipped = (False, False)
            padded_past = (False, False)  # ends within the values until padded past them
            if expand:
                low, high = expanded_interval(est, boot.level, share=share)
                # ends past the resamples' reach (99% from 10 prompts or fewer): extrapolated
                far = extrapolation(est, boot.level, share=share)
                if far is not None:
                    # within the metric's values: an end extrapolated past them (accuracy
                    # at 99% from 5 prompts read 1.17) is the metric's bound, which holds
                    # whatever the tail; no extrapolated number, so the record and the
                    # warning drop it and the method says what it is (clipped_words)
                    clipped = (low < spec.extent[0], high > spec.extent[1])
                    low, high = max(low, spec.extent[0]), min(high, spec.extent[1])
                if any(clipped):
                    far = extrapolation(est, boot.level, clipped=clipped, share=share)
                if far is not None and spec.folded:  # the ends of |θ| it names
                    far = extrapolation(
                        est, boot.level, folded=(low, high), clipped=clipped, share=share
                    )
            # a null that is the metric's floor or ceiling is no hypothesis: no p-value
            p = math.nan if spec.bound else p_value(est, spec.null, expanded=expand)
            if few_move and not spec.bound:
                # the level at whose padded end null falls, read through the same ends
                # (padded_p_value): excludes null exactly when p < 1 − level. Unpadded
                # too (k = 1): the resamples' count (p_value) read p 0.060 beside a 95%
                # interval [0.019, 0.50] of 3 of 6 prompts winning a pair, its low end
                # extrapolated past 200 resamples
                p = padded_p_value(est, spec.null, factor=k, share=share)
            few = est.n_clusters < FEW_CLUSTERS  # as unreliable an interval as a flat one
            beyond = not low <= spec.null <= high
            if (flat or few) and constant is None and beyond and not spec.bound:
                # a difference of two rates: every prompt at its rate's end has a larger
                # chance than the sign test's when the two sides are unequal
                exact = two_rate_test_p(*est.sides) if est.sides else sign_test_p(est.n_clusters)
                p = max(p, exact)
            value = est.estimate
            std_error = est.std_error
            if expand:
                # the standard error the expanded interval implies: the resamples' spread
                # times the expansion's factor, or "±0.27 detectable" and the gate's
                # projection (z · se) describe the narrower interval it replaced
                std_error = expanded_error(
                    std_error, clusters=est.n_clusters, level=boot.level, share=share
                )
            if pad:
                low, high = padded_span(value, low, high, effective=est.effective, weight=weight)
                # the padding stretches the ends past the resamples: within the values the
                # metric can take (an effect moved +1 on 3 of 6 prompts read [−0.01, 1.01])
                cut = (low < spec.extent[0], high > spec.extent[1])
                low, high = max(low, spec.extent[0]), min(high, spec.extent[1])
                if any(cut):
                    # an end cut is the bound, whatever it was before: no extrapolated
                    # number, so the record follows the end reported (5 prompts at 99%
                    # read [−0.15, 1] with its high end "extrapolated") and the method
                    # says the bound (clipped_words, widened: the padding passed it)
                    padded_past = (cut[0] and not clipped[0], cut[1] and not clipped[1])
                    clipped = (clipped[0] or cut[0], clipped[1] or cut[1])
                    if far is not None:
                        far = extrapolation(
                            est, boot.level, clipped=clipped, share=share,
                            folded=(low, high) if spec.folded else None,
                        )  # fmt: skip
                std_error = std_error * k  # the expanded error, padded: z · se is the half-width
            if widen:
                # few pairs change with the order: the bootstrap's ends widened by t, up to
                # the exact bound on the prompts that change (moved_span)
                low, high, t_p = moved_span(
                    value, low, high, null=spec.null, level=boot.level, bound=spec.bound,
                    effective=est.effective, moving=est.moving, clusters=est.n_clusters,
                    heaviest=est.heaviest,
                )  # fmt: skip
                p = p if math.isnan(p) else max(p, t_p)
                # the standard error the widened interval implies, where it is wider than
                # the resamples' spread: "±0.040 detectable" beside 0.52 [0.44, 0.57] (1
                # pair of 30 changing) claimed a power the interval does not have
                std_error = widened_error(std_error, low, high, level=boot.level)
                words = moved_method(boot=boot, interval=kind)
            else:
                words = expanded_method(boot=boot) if expand else interval_method(boot, kind)
                if few_move and share < 1:  # partly expanded (more than half move)
                    words = partly_expanded_method(boot=boot, share=share, moving=est.moving,
                                                   clusters=est.n_clusters,
                                                   moved=moved_of(est))  # fmt: skip
                if pad:  # the expanded ends, padded
                    words = padded_method(boot=boot, clusters=est.n_clusters, moving=est.moving,
                                          effective=est.effective, weight=weight,
                                          share=share, moved=moved_of(est))  # fmt: skip
                if any(clipped):  # which ends are the metric's bounds (before the rest)
                    words += "; " + clipped_words(
                        clipped, spec.extent, folded=spec.folded, widened=padded_past
                    )
                if far:  # the method names the interval it is: which ends extrapolated
                    words += f"; {extrapolated_words(far.side)}"
            if cancel:
                # the bootstrap's ends on the estimate (flat) and no t step (effective 1):
                # moved_span's exact bound on the moving prompts stands at both ends
                low, high, _ = moved_span(
                    value, min(low, value), max(high, value), null=spec.null,
                    level=boot.level, bound=spec.bound, effective=1.0, moving=est.moving,
                    clusters=est.n_clusters, heaviest=est.heaviest, span=spec.span,
                )  # fmt: skip
                p = p if math.isnan(p) else 1.0  # the bound holds the no-bias value
                # the standard error the bound's width implies (the resamples' is 0), as
                # a balanced position rate's: what the gate's projection reads
                std_error = widened_error(std_error, low, high, level=boot.level)
                words = cancelled_method(
                    boot.level, est.n_clusters, moving=est.moving, movers=spec.movers
                )
            if unseen:
                # the resamples cannot vary: the data bound what could (unseen_span)
                low, high = unseen_span(
                    value, est.n_clusters, boot.level, bound=spec.bound, heaviest=est.heaviest,
                    span=spec.span,
                )  # fmt: skip
                # no standard error: the resamples' 0 measures nothing, and one read off
                # the bound's width would claim a power it lacks (the bound shrinks as 1/n:
                # "±0.13 detectable" from 12 prompts, detected 67% of the time, not 80%)
                std_error = math.nan
                words = unseen_method(boot.level, est.n_clusters, movers=spec.movers)
            fixed = flat and constant is not None and not unseen
            if fixed:  # no interval to name: "90% percentile interval" beside "none"
                words = FIXED_METHOD
            rule: IntervalRule = (
                "exact_bound"
                if unseen
                else "widened"
                if widen or cancel or pad
                else "expanded"
                if expand
                else kind
            )
            if spec.folded:
                value, low, high = fold(value, low, high)
            results.append(
                MetricResult(
                    metric=spec.metric,
                    estimate=value,
                    ci_low=low,
                    ci_high=high,
                    level=boot.level,
                    n=est.counts.get(spec.n_count, est.n) if spec.n_count else est.n,
                    n_clusters=est.n_clusters,
                    method=f"{spec.method}; {words}",
                    judge=judge,
                    n_boot=est.n_boot,
                    n_boot_dropped=est.n_dropped,
                    counts=dict(est.counts),
                    components=components,
                    std_error=std_error,
                    p_value=p,
                    null=spec.null,
                    warnings=interval_warnings(
                        est,
                        constant=(
                            BALANCED
                            if balanced
                            else cancelled_warning(est.moving, est.n_clusters, spec.movers)
                            if cancel
                            else constant
                        ),
                        exact=unseen or cancel,
                        moving=moving_pairs(spec, est) if widen else None,
                    )
                    + ((far.warning(),) if far else ())
                    + (spec.warnings(est.totals) if spec.warnings else ()),
                    notes=spec.notes(est.totals) if spec.notes else (),
                    n_boot_unfit=est.n_unfit,
                    refit=spec.refit,
                    fixed=fixed,
                    absolute=spec.folded,
                    bound=spec.bound,
                    score=spec.score,
                    n_of=spec.n_count,
                    # no interval, so no rule made one ("percentile" beside "no interval")
                    interval_rule=None if fixed else rule,
                    heaviest=est.heaviest if unseen else None,
                    extrapolated=far,
                )
            )
    return results, skipped


def extrapolation(
    est: GroupEstimate,
    level: float,
    *,
    folded: tuple[float, float] | None = None,
    clipped: tuple[bool, bool] = (False, False),
    share: float = 1.0,
) -> Extrapolation | None:
    """Which ends of ``est``'s expanded interval at ``level``
    (:func:`~recuse.metrics.bootstrap.expanded_interval`) were extrapolated past the
    resamples (each end as :func:`~recuse.metrics.bootstrap.tail_end` says), and the
    deepest tail they asked (:func:`~recuse.metrics.bootstrap.end_tails`); None where
    neither was. ``folded``: the signed interval ``(low, high)`` of a result shown as
    ``|θ|`` (:func:`fold`), whose ends the record then names: where it holds 0 the folded
    interval is ``[0, max(−low, high)]``, its low end no resample's and its high end the
    farther signed end; below 0 the two ends swap. ``share``: of the interval expanded
    that share of the way (:func:`~recuse.metrics.bootstrap.blended_quantile`).
    ``clipped``: which signed ends (low, high) were extrapolated past the metric's values
    and cut to its bound (``MetricSpec.extent``): such an end is the bound, no
    extrapolated number, and the record leaves it out (None where no other end is).

    >>> e = GroupEstimate(-0.5, -0.6, -0.4, 15, 5, 2000, 0, np.zeros(1),
    ...                   replicates=np.linspace(-0.7, -0.3, 2000))
    >>> extrapolation(e, 0.99).side, extrapolation(e, 0.9) is None
    ('ends', True)
    >>> extrapolation(e, 0.99, folded=(-0.9, 0.1)).side  # |θ| in [0, 0.9]
    'high end'
    >>> extrapolation(e, 0.99, clipped=(True, False)).side  # the low end at −1
    'high end'
    >>> extrapolation(e, 0.99, clipped=(True, True)) is None
    True
    """
    low_tail, high_tail = end_tails(est, level, share=share)
    low_tail = math.nan if clipped[0] else low_tail
    high_tail = math.nan if clipped[1] else high_tail
    if folded is not None:
        low, high = folded
        if low <= 0 <= high:
            low_tail, high_tail = math.nan, low_tail if -low >= high else high_tail
        elif high < 0:
            low_tail, high_tail = high_tail, low_tail
    tails = [x for x in (low_tail, high_tail) if not math.isnan(x)]
    if not tails:
        return None
    return Extrapolation(
        low=not math.isnan(low_tail), high=not math.isnan(high_tail), tail=min(tails),
        resamples=est.n_boot, clusters=est.n_clusters, level=level,
    )  # fmt: skip


def unseen_span(
    value: float,
    clusters: int,
    level: float,
    *,
    bound: NullBound | None = None,
    heaviest: float = 1.0,
    moving: int = 0,
    span: float = 1.0,
) -> tuple[float, float]:
    """The interval of a share whose pairs could all have come out otherwise, where none
    of ``clusters`` prompts did (a judge whose verdict is the same in both orders on
    every pair: ``MetricSpec.constant``). The resamples cannot vary, so the bootstrap's
    interval has no width; the share ``d`` of prompts on which the verdict changes with
    the order is bounded instead: seeing none of ``n`` has probability ``(1 − d)^n``,
    so ``d ≤ u = 1 − (1 − level)^(1/n)`` at ``level`` (the exact one-sided
    Clopper–Pearson bound for 0 of ``n``). Those prompts hold a share of the pairs at
    most ``s = min(1, u · heaviest)`` (``heaviest``: the largest prompt's pairs over the
    mean prompt's, :attr:`~recuse.metrics.bootstrap.GroupEstimate.heaviest`; 1 for
    prompts of one size — where the order changes the verdict on the larger prompts
    only, ``u`` alone missed 0.14 of the time at 90%, 1 pair or 2 per prompt), which
    moves a rate of them at most ``s`` (a flip rate, ``bound="floor"``:
    ``[value, value + s]``; a consistency, ``"ceiling"``: ``[value − s, value]``) and a
    first-position rate, each pair's ``(p_a_first − p_a_second) / 2``, at most ``s / 2``
    either way. A reward model,
    which cannot see the order, reads so too: the data cannot tell it from a judge that
    can, on a few prompts (12 consistent pairs have chance 0.9¹² ≈ 0.28 for a judge that
    flips one in ten).

    ``moving``: where ``m`` of the prompts did change, ``u`` is the exact one-sided
    Clopper–Pearson bound for ``m`` of ``n``, ``B⁻¹(level; m + 1, n − m)`` (1 where all
    did), about ``value`` as above — the bound :func:`moved_span` keeps a widened
    interval within.

    ``span``: the range of one pair's term (``MetricSpec.span``), which every move above
    is times: a probe's effect, a difference of two shares from −1 to +1 (span 2), moves
    at most ``s`` either way (``value ± s``).

    >>> [round(x, 4) for x in unseen_span(0.5, 12, 0.9)]
    [0.4127, 0.5873]
    >>> [round(x, 4) for x in unseen_span(0.0, 350, 0.9, bound="floor")]
    [0.0, 0.0066]
    >>> [round(x, 4) for x in unseen_span(0.0, 12, 0.9, bound="floor", heaviest=1.5)]
    [0.0, 0.2619]
    >>> [round(x, 4) for x in unseen_span(0.0, 12, 0.9, span=2.0)]
    [-0.1746, 0.1746]
    """
    if moving == 0:
        u = -math.expm1(math.log(1 - level) / clusters)
    elif moving < clusters:
        from scipy.stats import beta

        u = float(beta.ppf(level, moving + 1, clusters - moving))
    else:
        u = 1.0
    u = min(1.0, u * heaviest) * span
    if bound == "floor":
        return value, value + u
    if bound == "ceiling":
        return value - u, value
    return value - u / 2, value + u / 2


def unseen_method(
    level: float, clusters: int, *, movers: str = "whose verdict changes with the order"
) -> str:
    """The words of :func:`unseen_span`'s interval for a result's ``method``.

    >>> unseen_method(0.9, 12)[:60]
    '90% exact bound (not a bootstrap): one-sided Clopper–Pearson'
    """
    return (
        f"{percent(level)} {EXACT_BOUND}: one-sided Clopper–Pearson on the "
        f"share of prompts {movers}, 0 of {clusters:,}, times "
        "the largest prompt's pairs over the mean's"
    )


def moved_method(*, boot: Resampling, interval: Interval = "bca") -> str:
    """The words of :func:`moved_span`'s interval for a result's ``method``.

    >>> moved_method(boot=Resampling())[:58]
    '90% BCa interval (bias-corrected, jackknife acceleration),'
    """
    return (
        f"{interval_method(boot, interval)}, each end widened by Student's t over the normal "
        "quantile on the prompts' effective number (Satterthwaite) and kept within the "
        "exact one-sided Clopper–Pearson bound on the share of prompts whose verdict "
        "changes with the order"
    )


def cancelled_method(level: float, clusters: int, *, moving: int, movers: str) -> str:
    """The words of a cancelled probe effect's interval (:func:`moved_span`'s exact
    bound) for a result's ``method``.

    >>> cancelled_method(0.9, 20, moving=2, movers="holding a moved pair")[:64]
    '90% exact bound: the resamples cannot vary (the moves cancel on '
    """
    return (
        f"{percent(level)} exact bound: the resamples cannot vary (the moves cancel on each "
        f"prompt), so one-sided Clopper–Pearson on the share of prompts {movers}, "
        f"{moving:,} of {clusters:,}, times the largest prompt's pairs over the mean's"
    )


def cancelled_warning(moving: int, clusters: int, movers: str) -> str:
    """Said in place of the zero-width warning of a cancelled probe effect's interval.

    >>> cancelled_warning(2, 20, "holding a moved pair")[:62]
    'no variation in the resamples, though the share of prompts hol'
    """
    return (
        f"no variation in the resamples, though the share of prompts {movers} is "
        f"{moving:,} of {clusters:,}: on each of them the moves cancel (as much one way as "
        "the other), so the interval is the exact one-sided Clopper–Pearson bound on that "
        "share — more prompts narrow it"
    )


def widened_error(std_error: float, low: float, high: float, *, level: float) -> float:
    """The standard error of a position rate whose interval :func:`moved_span` widened:
    the resamples' standard deviation, or the interval's half-width over the normal
    quantile where that is larger, ``max(se, (high − low) / (2 z))`` with ``z =
    z((1 + level) / 2)`` — what the "±X detectable" line ((z + z_0.8) · se) and the
    gate's projection (z · se) read, so neither claims a power or a half-width the
    interval shown does not have (NaN stays NaN).

    >>> round(widened_error(0.0159, 0.4382, 0.5667, level=0.9), 4)
    0.0391
    >>> widened_error(0.05, 0.45, 0.55, level=0.9)
    0.05
    """
    if math.isnan(std_error):
        return std_error
    return max(std_error, (high - low) / (2 * NormalDist().inv_cdf((1 + level) / 2)))


def expanded_error(std_error: float, *, clusters: int, level: float, share: float = 1.0) -> float:
    """The standard error of an estimate whose BCa interval
    :func:`~recuse.metrics.bootstrap.expanded_interval` expanded for its ``clusters``
    prompts ``G``: the resamples' standard deviation times the expansion's factor,
    ``se · √(G / (G − 1)) · t_{G−1}(q) / z(q)`` with ``q = (1 + level) / 2`` (1 where
    ``G < 2``) — what the "±X detectable" line ((z + z_0.8) · se) and the gate's
    projection (z · se) read, so neither describes the narrower interval the expansion
    replaced (1.06 times narrower at 20 prompts, 90%).

    The factor, not the shown interval's half-width over z (:func:`widened_error`, the
    moved position rates'): the expansion is exactly that factor on the normal quantile
    of each end, so ``z · se · factor`` is the expanded interval's half-width wherever the
    plain interval's is ``z · se``, and the estimate's standard error keeps its relation
    to the interval that the plain BCa results have; the half-width of an expanded BCa
    interval also carries its skew and, from few prompts, the replicates' range (from 2
    prompts at 90% both ends are the extreme replicates). NaN stays NaN. ``share``: the
    quantile only that share of the way to the expanded one (:func:`expansion_share`,
    :func:`~recuse.metrics.bootstrap.blended_quantile`), as the interval is.

    >>> round(expanded_error(0.1, clusters=20, level=0.9), 4)  # √(20/19)·1.7291/1.6449
    0.1079
    >>> expanded_error(0.1, clusters=1, level=0.9)
    0.1
    """
    if math.isnan(std_error) or clusters < 2:
        return std_error
    q = (1 + level) / 2
    return std_error * blended_quantile(q, clusters, share=share) / NormalDist().inv_cdf(q)


def student_error(std_error: float, *, df: float | None, level: float) -> float:
    """The standard error of a Wald estimate whose interval is Student's,
    ``estimate ± t_df(q) · se`` (the favoritism regression's cluster-robust γ and λ, on
    the prompts holding the term's ratings less one; the calibration error's root, at
    Satterthwaite's ν), as the report carries it:
    ``se · t_df(q) / z(q)`` with ``q = (1 + level) / 2`` (``se`` itself where ``df`` is
    None or NaN, as a fit's ``df`` column reads a normal interval) — so that
    the gate's projection (z · se) reads the interval shown, and the "±X detectable"
    line ((z + z_0.8) · se) its half-width plus ``z_0.8`` times the same scaled error
    (at 5 df and 90%, 3.05 · se where Student's own 80% quantile would say 2.94: a
    little larger, never the normal's 2.49 that described a 1.23 times narrower
    interval). As :func:`expanded_error` for an expanded bootstrap interval, one rule
    for every reader of the report. NaN stays NaN.

    >>> round(student_error(0.01, df=5, level=0.9), 5)  # 0.01 · 2.01505 / 1.64485
    0.01225
    >>> student_error(0.01, df=None, level=0.9), student_error(0.01, df=math.nan, level=0.9)
    (0.01, 0.01)
    """
    if df is None or math.isnan(df) or math.isnan(std_error):
        return std_error
    from scipy.stats import t

    q = (1 + level) / 2
    return std_error * float(t.ppf(q, df)) / NormalDist().inv_cdf(q)


#: said in place of the zero-width warning of a position rate whose resamples cannot vary
#: though some pairs change with the order (:func:`to_results`)
BALANCED = (
    "no variation in the resamples, though some pairs change their verdict with the order: "
    "on each prompt holding such pairs they balance (as many to the first slot as to the "
    "second), so the interval is the exact bound on the share of prompts that change"
)


def moving_pairs(spec: MetricSpec, est: GroupEstimate) -> int | None:
    """The pairs that move a :attr:`~recuse.metrics.bootstrap.GroupedStatistic.sparse`
    rate (the last of its totals: the pairs whose verdict changes with the order), or
    None for any other statistic."""
    if not spec.stat.sparse or est.moving < 0:
        return None
    return round(float(est.totals[-1]))


def moved_span(
    value: float,
    low: float,
    high: float,
    *,
    null: float,
    level: float,
    bound: NullBound | None,
    effective: float,
    moving: int,
    clusters: int,
    heaviest: float,
    span: float = 1.0,
) -> tuple[float, float, float]:
    """The interval of a position rate that only the pairs whose verdict changes with the
    order move, on ``moving`` of ``clusters`` prompts, from the bootstrap's ``[low, high]``
    of ``value``; and the p-value of its ``null`` by the same rule (1 where none).

    With few such pairs the rate's variance rests on few prompts, and the bootstrap
    interval is too narrow (its 90% interval of the first-position rate held a planted
    truth 0.79–0.85 of the time with 5 of 30–40 pairs flipping), as a Wald interval of a
    count of 5 is. Each end is widened:

    * by Student's t over the normal quantile, ``f = t_{ν−1}(q) / z(q)`` with ``q = (1 +
      level) / 2`` and ``ν`` the prompts' effective number
      (:func:`~recuse.metrics.bootstrap.sparse_counts`; ``ν ≤ 1``: ``f`` infinite), about
      the estimate: ``value ∓ f · (value − low | high − value)``;
    * but not past the exact bound of the moving prompts: their share ``d`` is at most
      ``u = B⁻¹(level; m + 1, n − m)`` (the one-sided Clopper–Pearson bound for ``m`` of
      ``n``), and they hold at most a share ``s = min(1, u · heaviest)`` of the pairs,
      which moves a rate at most ``s`` from its no-bias value (``bound="floor"``:
      ``[null, null + s]``; ``"ceiling"``: ``[null − s, null]``; else ``null ± s/2``:
      :func:`unseen_span` with ``moving``);
    * and never inside the bootstrap's ends:
      ``low' = min(low, max(value − f (value − low), e_low))``, likewise ``high'``; an
      end the bootstrap put on the estimate (``low = value``: nothing for ``f`` to
      scale, as where the resamples cannot vary) is the exact bound's, ``min(low,
      e_low)``, and the p-value 1 where it is the end toward ``null``.

    :func:`to_results` widens where at most half the prompts change (``m ≤ n/2``): where
    most do, the rare prompts are those that do not, whose variance the t factor would
    call unknown (7 of 8 prompts at 1, one at 0.5: ν ≈ 1) and the exact bound, centred
    on the no-bias value, cannot bound (it read [0, 1] for a consistency of 1 in 60);
    there the BCa interval stands (expanded for few prompts,
    :func:`~recuse.metrics.bootstrap.expanded_interval`). With ``m = 0`` the exact bound is
    :func:`unseen_span`'s, so one pair that changes reads no narrower than none (``ν`` is
    about 1 then, the t end infinite); with many, ``ν`` is large and ``f`` near 1 (1.009
    at ν = 100). Planted truths
    (``benchmarks/metric_coverage.py``): 0.89–0.96 with 5 of 20–40 pairs flipping (0.97
    where 7 flips fall on 40 prompts of 3 pairs: wide), 0.917 with about 25 of 300 (the
    BCa's 0.892). The p-value of ``null`` is the t test's on the bootstrap's
    scale, ``2 · T_{ν−1}(−|value − null| / (h / z))`` with ``h`` the bootstrap's
    half-width toward ``null``: the interval excludes ``null`` exactly when it is under
    ``1 − level``.

    >>> [round(x, 4) for x in moved_span(0.55, 0.52, 0.58, null=0.5, level=0.9,
    ...     bound=None, effective=1e9, moving=30, clusters=100, heaviest=1.0)]
    [0.52, 0.58, 0.0061]
    >>> [round(x, 4) for x in moved_span(0.5167, 0.5, 0.5333, null=0.5, level=0.9,
    ...     bound=None, effective=1.0, moving=1, clusters=30, heaviest=1.0)]
    [0.4382, 0.5618, 1.0]

    ``span``: the range of the rate, as :func:`unseen_span`'s (2 for a probe's effect,
    −1 to +1). A probe's effect is not widened, but where its moves cancel on each
    prompt (one pair +1, another −1; the resamples cannot vary, ``low = value = high``)
    this gives the exact bound on the ``moving`` prompts, as for a position rate whose
    flips balance: two of 20 prompts, ``u = B⁻¹(0.9; 3, 18) = 0.2448``:

    >>> [round(x, 4) for x in moved_span(0.0, 0.0, 0.0, null=0.0, level=0.9, bound=None,
    ...     effective=1.0, moving=2, clusters=20, heaviest=1.0, span=2.0)]
    [-0.2448, 0.2448, 1.0]
    """
    from scipy.stats import t

    q = (1 + level) / 2
    z = NormalDist().inv_cdf(q)
    f = float(t.ppf(q, effective - 1)) / z if effective > 1 else math.inf
    e_low, e_high = unseen_span(
        null, clusters, level, bound=bound, heaviest=heaviest, moving=moving, span=span
    )
    # an end on the estimate leaves t no width to scale: the exact bound stands there
    t_low = value - f * (value - low) if value > low else -math.inf
    t_high = value + f * (high - value) if high > value else math.inf
    new_low, new_high = min(low, max(t_low, e_low)), max(high, min(t_high, e_high))
    half = value - low if null < value else high - value
    if effective <= 1 or null == value or half <= 0:
        p = 1.0  # no t test: the end toward null is the exact bound's, which holds it
    else:
        p = float(2 * t.sf(abs(value - null) / (half / z), effective - 1))
    return new_low, new_high, p


#: how fast a probe's padding grows with the share ``r`` of its moving variance that the
#: way fewer pairs moved carries (:func:`padding_weight`: full from ``r = 1/c``)
BACK_WEIGHT = 8.0


def padding_weight(back_share: float) -> float:
    """How much of :func:`padded_factor`'s two pseudo-prompts a probe's effect gets, from
    the share ``r`` (0 to ½) of its moving pairs' sum of squared moves that the way fewer
    of it moved carries (``r = min(S₊, S₋) / (S₊ + S₋)``, ``S₊`` the squared moves
    toward the treated answer, ``S₋`` away)::

        w = min(1, c · r),   c = BACK_WEIGHT (8)

    0 for an effect moved one way only (expanded, not padded: section ``probes``), 1
    from an eighth of the moving variance on the fewer way (one full-size move back
    among up to 7 the other way: the evidence of two-way moves the rule before padded
    for). One back-move of size ``δ`` beside moves of squared size ``S`` the other way
    weighs ``c δ² / (S + δ²)``: a share moved 0.05 back beside four moves of 1 pads by
    ``w ≈ 0.005``, not the whole (the rule before padded any back-move fully, so one
    small pair widened a one-way interval 1.17–1.55 times). ``c`` = 8 keeps the
    coverage of the full padding (150 tables a cell, the same tables both ways:
    ``probes-twoway`` 0.911 pooled, the rule before 0.909; ``probe_heldout.py`` 0.894 /
    0.893, small moves 0.893 / 0.897); ``c`` = 4 read 0.905, 0.886 and 0.877, ``c`` = 2
    0.899, 0.878 and 0.863.

    >>> padding_weight(0.0), padding_weight(0.05), padding_weight(0.3)
    (0.0, 0.4, 1.0)
    """
    if not back_share > 0:
        return 0.0
    return min(1.0, BACK_WEIGHT * back_share)


def expansion_share(moving: float, clusters: int) -> float:
    """The share ``τ`` of the way a probe's BCa interval is expanded (and its padding
    weighted) where ``m*`` of its ``G`` prompts move it::

        τ = min(1, 2 (1 − m* / G))

    ``m*`` the moving prompts counted by the size of their net moves
    (:func:`~recuse.metrics.bootstrap.moved_number`, :func:`moved_of`: ``m`` where they
    move it alike, fewer where some move it less). 1 up to half the prompts (the rule
    before: expanded and padded there, the plain BCa above), falling by ``2 / G`` a
    prompt of full size to 0 where all move alike (the plain BCa ends), so the prompt
    past half no longer drops the expansion and the padding at once; counted by size, a
    prompt moved 1e-6 changes ``τ`` by about nothing (counted as one, the third of 3
    prompts moved 1e-6 dropped ``τ`` from 2/3 to 0: 2.2 times narrower).

    >>> expansion_share(10, 20), round(expansion_share(11, 20), 12), expansion_share(20, 20)
    (1.0, 0.9, 0.0)
    >>> round(expansion_share(2.5, 3), 4)
    0.3333
    """
    if clusters <= 0:
        return 0.0
    return max(0.0, min(1.0, 2.0 * (1.0 - moving / clusters)))


def moved_of(est: GroupEstimate) -> float:
    """The prompts that move ``est`` counted by the size of their net moves
    (:attr:`~recuse.metrics.bootstrap.GroupEstimate.moved`), or the count of moving
    prompts where that was not measured (NaN)."""
    return float(est.moving) if math.isnan(est.moved) else est.moved


def padded_factor(effective: float, *, weight: float = 1.0) -> float:
    """How much :func:`padded_span` widens an interval: the standard error with ``2 w``
    more prompts' worth of variance over the resamples' own, each an average one of the
    ``ν`` effective prompts (:func:`~recuse.metrics.bootstrap.sparse_counts`), so
    ``k = √(1 + 2 w / ν)`` (``w``: ``weight``, :func:`padding_weight` times
    :func:`expansion_share`; 1 where ``ν`` is infinite or not a number: nothing moved).

    >>> round(padded_factor(4.0), 4), padded_factor(math.inf)  # √(1 + 2/4)
    (1.2247, 1.0)
    >>> round(padded_factor(4.0, weight=0.25), 4)  # √(1 + 0.5/4)
    1.0607
    """
    if not math.isfinite(effective) or effective <= 0 or not weight > 0:
        return 1.0
    return math.sqrt(1.0 + 2.0 * weight / effective)


def padded_span(
    value: float, low: float, high: float, *, effective: float, weight: float = 1.0
) -> tuple[float, float]:
    """The interval of a probe's effect whose pairs moved both ways (toward the treated
    answer and away), from its expanded BCa interval ``[low,
    high]`` (:func:`~recuse.metrics.bootstrap.expanded_interval`) of ``value``: each
    end's distance from the estimate times :func:`padded_factor`'s ``k``::

        low' = value − k (value − low),  high' = value + k (high − value)
        k = √(1 + 2 w / ν)

    for ``ν`` the prompts' effective number (Satterthwaite's, ``(Σ r_p²)² / Σ r_p⁴``
    over the prompts' residuals ``r_p``: about the number that move it) and ``w`` the
    ``weight``: :func:`padding_weight` (how much of the moving variance came the fewer
    way) times :func:`expansion_share` (1 up to half the prompts moving). Such an effect
    is a difference of two sparse counts: its variance rests on the few prompts that
    move, and where by chance those moved mostly one way, their resamples understate how
    far it could lie (as a Wald interval of a small count does). The resamples' variance
    ``se²`` is about ``ν`` effective prompts' ``se²/ν`` each; ``k²`` adds two more at
    full weight, one for each way the pairs moved (the add-two-pseudo-observations idea
    of Agresti–Coull): ``se'² = se² (ν + 2w) / ν``. The scale is the data's own (the
    moving prompts' terms, through ``se``), so small probability moves get a small
    padding. An effect moved one way only is not padded (``w`` = 0), only expanded: it
    held 0.927 / 0.893 in ``benchmarks/metric_coverage.py``'s section ``probes``, and
    any padding on its one or two moving prompts (``ν`` ≈ 2) lifted the first to 0.98.
    The weight makes the interval move with the data: before it (``w`` = 1 wherever a
    pair moved back) one small back-move widened a one-way interval 1.17–1.55 times.

    Planted truths of the full padding (``w`` = 1 wherever pairs moved both ways; 300
    tables a cell, 2026-12-01): section ``probes-twoway`` (pairs
    moved both ways on a quarter to half of 10, 20 and 40 prompts) 0.887–0.940, 0.904
    pooled (the plain BCa 0.861; the first padding, a pseudo-prompt a fixed ``s/8`` =
    0.25 from the estimate, 0.894); ``benchmarks/probe_heldout.py``'s 12 held-out designs
    0.863–0.930, 0.894 pooled (plain 0.853, ``s/8`` 0.877), its small probability moves
    0.873 / 0.910 at 0.012 / 0.008 wide (``s/8``: 0.983 / 0.990 at 3–5 times the width);
    section ``probes`` 0.927 / 0.893 at 0.153 / 0.197 wide (``s/8``: the same coverage at
    0.159 / 0.202). The 2 in ``2 / ν`` was picked on both files together (250 tables a
    cell): 1.5 read 0.900 / 0.884 pooled, 3 read 0.916 / 0.901 (at most 0.932 a cell).

    >>> [round(x, 4) for x in padded_span(0.1, 0.06, 0.14, effective=4.0)]
    [0.051, 0.149]
    """
    k = padded_factor(effective, weight=weight)
    return value - k * (value - low), value + k * (high - value)


def padded_p_value(est: GroupEstimate, null: float, *, factor: float, share: float = 1.0) -> float:
    """The two-sided p-value of ``null`` beside :func:`padded_span`'s interval of ``est``
    (padding factor ``k`` = ``factor``, the expansion's ``share``): one minus the level
    ``L*`` at whose padded end ``null`` falls, found by bisection on the level through the same
    :func:`~recuse.metrics.bootstrap.expanded_interval` the interval is read from::

        low'(L) = θ̂ − k (θ̂ − low(L)),  high'(L) = θ̂ + k (high(L) − θ̂)
        p = max(2 / (B + 1), 1 − L*)   where the end on null's side meets null at L*

    so the padded interval at ``level`` excludes ``null`` exactly when ``p < 1 − level``
    (to a level of 1e-9). Inverting :func:`~recuse.metrics.bootstrap.p_value` instead,
    which counts the resamples beyond a point while the ends interpolate between them,
    gave 12 of 3,600 padded tables an interval excluding 0 beside p 0.1001–0.1037.
    ``p`` is 1 where ``null`` is the estimate or lies inside the padded ends at every
    level; the floor ``2/(B+1)`` where it lies outside them at every level the bisection
    reaches (``1 − 1e-12``). NaN without replicates.

    >>> e = GroupEstimate(0.1, 0.0, 0.2, 40, 20, 999, 0, np.zeros(0),
    ...                   replicates=np.linspace(0.0, 0.2, 999))
    >>> p = padded_p_value(e, 0.0, factor=1.2); round(p, 3)  # 2 T_19(−1.383 / √(20/19))
    0.194
    >>> lo = 0.1 - 1.2 * (0.1 - expanded_interval(e, 1 - p)[0]); abs(round(lo, 9))
    0.0
    """
    b = est.replicates.size
    if not b:
        return math.nan
    if null == est.estimate:
        return 1.0
    below = null < est.estimate

    def outside(level: float) -> bool:
        low, high = expanded_interval(est, level, share=share)
        if below:
            return null < est.estimate - factor * (est.estimate - low)
        return null > est.estimate + factor * (high - est.estimate)

    inside, out = 1.0 - 1e-12, 0.0  # levels: null inside the ends at one, outside at other
    if outside(inside):
        return 2.0 / (b + 1)
    if not outside(out):
        return 1.0
    while inside - out > 1e-10:
        mid = (inside + out) / 2
        if outside(mid):
            out = mid
        else:
            inside = mid
    return max(2.0 / (b + 1), 1.0 - inside)


def padded_method(
    *,
    boot: Resampling,
    clusters: int,
    moving: int,
    effective: float,
    weight: float = 1.0,
    share: float = 1.0,
    moved: float | None = None,
) -> str:
    """The words of :func:`padded_span`'s interval for a result's ``method``.

    >>> padded_method(boot=Resampling(), clusters=20, moving=4, effective=3.5)[-59:]
    "variance over the 3.5 effective ones' (√(1 + 2 / ν), ν 3.5)"
    >>> padded_method(boot=Resampling(), clusters=900, moving=300, effective=123.4)[-59:]
    "variance over the 123 effective ones' (√(1 + 2 / ν), ν 123)"
    >>> padded_method(boot=Resampling(), clusters=20, moving=4, effective=3.5,
    ...               weight=0.25)[-87:]
    "0.5 more prompts' variance over the 3.5 effective ones' (√(1 + 2 w / ν), w 0.25, ν 3.5)"
    """
    # ν to one decimal under 10, whole from 10 on (":.2g" wrote 123.4 as "1.2e+02")
    nu = general(round(effective, 1) if effective < 10 else round(effective))
    start = expanded_method(boot=boot)
    if share < 1:
        start = partly_expanded_method(
            boot=boot, share=share, moving=moving, clusters=clusters, moved=moved
        )
    if weight == 1.0:
        return (
            f"{start}, each end widened for the few prompts that move it "
            f"both ways ({moving:,} of {clusters:,}): the standard error with two more prompts' "
            f"variance over the {nu} effective ones' (√(1 + 2 / ν), ν {nu})"
        )
    w = general(round(weight, 2) if weight >= 0.01 else float(f"{weight:.1g}"))
    more = general(round(2 * weight, 2) if weight >= 0.005 else float(f"{2 * weight:.1g}"))
    return (
        f"{start}, each end widened for the prompts that move it both ways ({moving:,} of "
        f"{clusters:,}), weighted by how much of the moving variance the fewer way carries "
        f"and by the expansion's share: the standard error with {more} more prompts' "
        f"variance over the {nu} effective ones' (√(1 + 2 w / ν), w {w}, ν {nu})"
    )


def partly_expanded_method(
    *, boot: Resampling, share: float, moving: int, clusters: int, moved: float | None = None
) -> str:
    """The words of an interval expanded a ``share`` of the way (:func:`expansion_share`:
    more than half the prompts move it; ``moved``: ``m*``, the moving prompts counted by
    the size of their net moves, where it differs from ``moving``).

    >>> partly_expanded_method(boot=Resampling(), share=0.9, moving=11, clusters=20)[-65:]
    'expanded 0.9 of the way (11 of 20 prompts move it: 2 (1 − m / G))'
    >>> partly_expanded_method(boot=Resampling(), share=0.4, moving=3, clusters=3,
    ...                        moved=2.4)[-71:]
    '3 of 3 prompts move it, 2.4 by the size of their moves: 2 (1 − m* / G))'
    """
    name = INTERVAL_NAMES["bca"]
    counted = f"{moving:,} of {clusters:,} prompts move it: 2 (1 − m / G)"
    if moved is not None and not math.isclose(moved, moving, abs_tol=0.005):
        counted = (
            f"{moving:,} of {clusters:,} prompts move it, {general(round(moved, 2))} by the "
            "size of their moves: 2 (1 − m* / G)"
        )
    return (
        f"{percent(boot.level)} {name}, cluster bootstrap over prompts ({boot.n_boot} "
        f"resamples), {EXPANDED_WORDS}, each quantile moved only part of the way there as "
        f"more than half the prompts move it: expanded {general(round(share, 2))} of the way "
        f"({counted})"
    )


def run_one(
    spec: MetricSpec,
    clusters: pd.Series,
    *,
    boot: Resampling,
    min_n: int,
) -> MetricResult:
    """The one result of a single-group spec; a group too small raises :class:`EstimationError`."""
    results, skipped = run_specs([spec], clusters, boot=boot, min_n=min_n)
    if skipped:
        s = skipped[0]
        who = f" for judge {s.judge!r}" if s.judge is not None else ""
        raise EstimationError(f"cannot estimate {s.metric}{who}: {s.reason} — {the_fix(s.reason)}")
    return results[0]


def the_fix(reason: str) -> str:
    """What to do about an estimate not made for ``reason``: a group below ``min_n``
    ("only 3 pairs ... (need at least 5)") may lower it; none at all, or one prompt, needs
    data.

    >>> the_fix("only 3 pairs (need at least 5)"), the_fix("no pairs judged in both orders")
    ('add data, or lower min_n if you accept a rougher estimate', 'add data')
    """
    if reason.startswith("only ") and "(need at least" in reason:
        return "add data, or lower min_n if you accept a rougher estimate"
    return "add data"
