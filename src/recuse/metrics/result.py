"""Result objects of the pairwise bias metrics: an estimate with its interval and counts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from recuse import numbers
from recuse.bootstrap_rules import Extrapolation
from recuse.interval_rules import FIXED_WORDS, IntervalRule
from recuse.terminal import one_line

__all__ = [
    "BESIDE_HEADLINE",
    "COLUMNS",
    "CORE_FIELDS",
    "NOT_ADJUSTED",
    "NUMBER_COLUMNS",
    "REFIT_OTHER",
    "REFIT_WORDS",
    "MetricResult",
    "NullBound",
    "Refit",
    "Skipped",
    "beside_words",
    "results_frame",
]

# Columns every result has, in display order (``results_frame`` and the CLI use them).
CORE_FIELDS = (
    "metric",
    "judge",
    "estimate",
    "ci_low",
    "ci_high",
    "level",
    "n",
    "n_clusters",
    "n_boot",
    "n_boot_dropped",
    "method",
)


#: how a metric that refits a model in every resample refitted it (:attr:`MetricResult.
#: refit`): "exact" (a full refit) or "one-step" (one Newton step from the full-sample fit)
Refit = Literal["exact", "one-step"]

#: how a calibrated estimate's resamples were refitted (:attr:`MetricResult.refit`, set
#: by :func:`recuse.metrics.competence.calibrated_specs`), in the words a terminal table
#: and ``print(result)`` put beside its interval, since the two ways give slightly
#: different intervals
REFIT_WORDS: dict[Refit, str] = {
    "exact": "refitted exactly in every resample",
    "one-step": "one Newton step from the full-sample fit in every resample",
}

#: what an estimate not adjusted for the judge's competence is (the papers' equal
#: opportunity and demographic parity), in the words ``recuse metrics pairs`` and the
#: audit's unit put beside it
NOT_ADJUSTED = (
    "not adjusted for the judge's competence: high for a strong judge with no bias, low "
    "for a weak one"
)

#: per metric the audit shows beside another's headline: that headline, and whether
#: the metric is :data:`NOT_ADJUSTED` (``print(result)`` and ``recuse metrics pairs`` read
#: it; a test holds it equal to what the analyses say)
BESIDE_HEADLINE: dict[str, tuple[str, bool]] = {
    "self_preference_eo": ("self_preference_calibrated", True),
    "self_preference_dp": ("self_preference_calibrated", True),
    "family_preference_eo": ("family_preference_calibrated", True),
    "family_preference_dp": ("family_preference_calibrated", True),
    "verbosity_bias": ("verbosity_longer_gap", False),
}


def beside_words(metric: str) -> str:
    """What a metric's definition ends with where the audit shows it beside another's
    headline: which metric is the headline and, for one not adjusted for the judge's
    competence, what that means; "" for any other.

    >>> beside_words("verbosity_bias")
    " — the audit's headline is verbosity_longer_gap"
    """
    if metric not in BESIDE_HEADLINE:
        return ""
    headline, unadjusted = BESIDE_HEADLINE[metric]
    caveat = f"{NOT_ADJUSTED}; " if unadjusted else ""
    return f" — {caveat}the audit's headline is {headline}"


#: what ``print(result)`` adds to :data:`REFIT_WORDS`: the other way's interval differs
REFIT_OTHER = (
    "; the other way (exact refits or one Newton step: the table's judges and size "
    "decide, as `method` says) gives a slightly other interval"
)

#: which bound of a metric its no-bias value is (:attr:`MetricResult.bound`): "floor", its
#: least value (a flip rate or an error, 0 at no bias), or "ceiling", its greatest (the
#: position consistency, 1 at no bias)
NullBound = Literal["floor", "ceiling"]


def _clean(x: float) -> float | None:
    """JSON-friendly float: NaN becomes None."""
    return None if math.isnan(x) else float(x)


@dataclass(frozen=True)
class MetricResult:
    """One estimate with its cluster-bootstrap interval (BCa unless ``method`` says otherwise).

    ``n`` is the number of comparisons (pairs-table rows) that entered the estimate,
    ``n_clusters`` the number of prompts among them (the bootstrap resamples prompts).
    ``n_boot_dropped`` counts resamples in which the statistic was undefined (a
    denominator was zero); they are left out of the interval, never counted as 0.
    ``n_boot_unfit`` counts kept resamples whose fit has no finite estimate although
    the full sample's has (the calibrated self-preference's human labels, in which a
    model never lost: :meth:`recuse.metrics.competence.CompetenceModel.finite`); kept,
    as ``benchmarks/ford_resamples.py --by-share`` finds the interval's coverage the
    same whatever their share.
    ``counts`` holds the sizes of the groups the metric conditions on and
    ``components`` the point values of its parts (e.g. the two recalls of the
    Equal-Opportunity bias). ``std_error`` is the standard deviation of the kept
    bootstrap replicates (times the expansion's factor where the interval is expanded
    for few prompts: :func:`recuse.metrics.estimate.expanded_error`); ``p_value`` the
    two-sided p-value against the metric's no-bias value ``null``, the interval inverted
    (:func:`recuse.metrics.bootstrap.p_value`: the ``1 - p`` interval has the no-bias
    value at one end; never below ``2 / (n_boot + 1)``, the smallest the resamples
    resolve). Both feed the
    multiplicity correction and the detectable-effect line. ``warnings`` say when the
    interval says little (:func:`recuse.metrics.estimate.interval_warnings`: fewer
    than 5 prompts, zero width, fewer than 10 pairs in the smallest group), then any
    caveat the metric adds about the estimate itself (``MetricSpec.warnings``).
    ``notes`` say what a reader may want to know of the number that is no reason to
    distrust it (``MetricSpec.notes``: e.g. pairs judged in one order only with the
    favoured answer in one slot, below the one-slot warning's rule: too few, or too
    evenly split between the slots); no gate
    fails on one.
    ``refit`` says how a metric that refits a model in every resample refitted it
    (:data:`Refit`; the calibrated self- and family preference, where the table's size
    chooses, and the two give slightly different intervals), None for the others; set
    where the choice is made, and said in words in ``method`` (so not in
    :meth:`to_dict`).
    ``fixed`` is True when the interval has zero width because the metric's value is
    fixed by construction for this judge (``MetricSpec.constant``, whose reason is the
    warning in place of "no variation in the resamples"): then the zero width is real.
    A zero-width interval that is not ``fixed`` says nothing about uncertainty and
    rules nothing out (:attr:`recuse.report.model.Finding.informative`).
    ``absolute`` is True when the estimate is the absolute value of a signed statistic
    whose no-bias value ``null`` is 0 (``MetricSpec.folded``: Saito's Eq. 5, |Eq. 6|):
    never below 0, its interval the absolute values over the signed one's and its
    ``p_value`` the signed statistic's (the same hypothesis). ``bound`` says when the
    no-bias value is a bound of the metric (:data:`NullBound`): "floor" for a rate, share
    or error whose no-bias value 0 is also its least value (the flip rate, a
    calibration error), "ceiling" for one whose no-bias value is its greatest (the
    position consistency, 1); such a result is :attr:`unsigned`, no difference either,
    and has no ``p_value``: it can lie on one side of its no-bias value only, which is
    no hypothesis a test rejects. ``score`` is True for a quality score whose no-bias
    value 0 is chance (Cohen's kappa, Krippendorff's alpha), a coefficient rather than a
    bias difference, which keeps its p-value (it can lie below chance). None of these
    reads with a sign: :attr:`signed` says which numbers do.
    """

    metric: str
    estimate: float
    ci_low: float
    ci_high: float
    level: float
    n: int
    n_clusters: int
    method: str
    judge: str | None = None
    n_boot: int = 0
    n_boot_dropped: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    components: Mapping[str, float] = field(default_factory=dict)
    std_error: float = math.nan  # of the estimate, from the same resamples as the interval
    p_value: float = math.nan  # two-sided, against the metric's no-bias value
    warnings: tuple[str, ...] = ()  # what a reader must know to trust the numbers
    null: float = 0.0  # the metric's no-bias value (the p-value's null hypothesis)
    n_boot_unfit: int = 0  # kept resamples whose fit has no finite estimate
    refit: Refit | None = None  # how the resamples' model was refitted, if one was
    fixed: bool = False  # zero width because the value is fixed by construction
    absolute: bool = False  # the absolute value of a signed statistic (never below 0)
    bound: NullBound | None = None  # the no-bias value is the metric's floor or ceiling
    score: bool = False  # a chance-corrected agreement coefficient (0 = chance)
    #: which rule made the interval (:data:`~recuse.interval_rules.IntervalRule`; None:
    #: not a result of :func:`~recuse.metrics.estimate.to_results`)
    interval_rule: IntervalRule | None = None
    #: the largest prompt's pairs over the mean prompt's, which the exact bound of an
    #: ``"exact_bound"`` interval is multiplied by (:func:`recuse.metrics.estimate.unseen_span`);
    #: None for every other rule
    heaviest: float | None = None
    #: which ends of an interval expanded for few prompts were extrapolated past the
    #: resamples, the deepest tail they asked and the resamples that would read it
    #: (:class:`~recuse.bootstrap_rules.Extrapolation`; its warning is among
    #: ``warnings``); None where no end was
    extrapolated: Extrapolation | None = None
    #: what a reader may want to know of the number that is no reason to distrust it
    #: (``MetricSpec.notes``), informational: printed after the warnings as ``note:``
    notes: tuple[str, ...] = ()

    @property
    def unsigned(self) -> bool:
        """Whether the estimate is a rate, share or error whose no-bias value is one of
        its bounds (:attr:`bound`): no signed difference, and no p-value."""
        return self.bound is not None

    @property
    def signed(self) -> bool:
        """Whether the estimate is a signed difference whose no-bias value is 0, printed
        with its sign (``+0.182``): not an :attr:`absolute` value, not an
        :attr:`unsigned` rate, not a quality :attr:`score` (kappa, 0 = chance), nor a
        number whose no-bias value is not 0 (a rate around 0.5)."""
        return self.null == 0 and not (self.absolute or self.unsigned or self.score)

    #: what ``n`` counts where it is not all the group's rows (``MetricSpec.n_count``,
    #: e.g. the judge's own pairs of its calibrated self-preference); ``n_clusters`` is
    #: then the prompts of all its rows, which the interval resamples, and can exceed n
    n_of: str | None = None

    #: what ``n`` counts where :attr:`n_of` does not say (the class's ``n``)
    N_COUNTS = "pairs"

    @property
    def definition(self) -> str:
        """What the metric is: the first clause of :attr:`method` (the rest says how the
        verdicts were read and the interval made)."""
        return self.method.split("; ", 1)[0]

    def __str__(self) -> str:
        """The result as the audit writes it, for ``print``: the metric (and judge), the
        estimate and its interval (a sign on the estimate of a :attr:`signed` difference
        only; "−" on a negative interval end, :func:`recuse.numbers.estimate_text`) at its
        level, the no-bias value, n with what it counts and the prompts, the definition
        (with :func:`beside_words`, as ``recuse metrics pairs`` writes it), how a
        refitted model's resamples were refitted (:data:`REFIT_WORDS`: the calibrated
        self-preference's interval differs by it), then each warning and each note
        (:attr:`notes`), each on its line: text from the data (a judge's name, a
        warning quoting one) written :func:`recuse.terminal.one_line`, so that a name
        holding a newline or a terminal's escape starts no line of its own and moves no
        cursor. The ``repr`` stays the dataclass's, every field exact: what a
        test's failure, a log's ``%r`` and a debugger must show unambiguously; a notebook
        shows a short line with ``print(result)`` and a table with :func:`results_frame`.

        >>> r = MetricResult("flip_rate", 0.25, 0.14, 0.36, 0.9, 40, 12,
        ...                  "share of pairs whose verdict flips; BCa", bound="floor")
        >>> print(r)
        flip_rate: 0.25 [0.14, 0.36] (90% interval), no bias 0, n=40 pairs, 12 prompts resampled
          share of pairs whose verdict flips
        """
        who = f" for {self.judge}" if self.judge else ""
        shown = numbers.estimate_text(
            self.estimate, self.ci_low, self.ci_high, signed=self.signed, null=self.null
        )
        # a value fixed by construction: no interval and no n, which read "0 [0, 0] (90%
        # interval), n=67 pairs" as a measurement of the judge's own pairs
        measured = (
            f"{shown} ({numbers.percent(self.level)} interval), no bias "
            f"{numbers.general(self.null)}, n={numbers.count(self.n)} "
            f"{self.n_of or self.N_COUNTS}, {numbers.count(self.n_clusters)} prompts resampled"
            if not self.fixed
            else f"{numbers.general(self.estimate)}, {FIXED_WORDS} (no interval), no bias "
            f"{numbers.general(self.null)}"
        )
        lines = [
            f"{self.metric}{who}: {measured}",
            # GPT-3.5's equal opportunity, +0.21 [0.07, 0.34], printed without the
            # "not adjusted for the judge's competence" recuse metrics pairs gives it
            f"  {self.definition}{beside_words(self.metric)}",
            # GPT-4's calibrated self-preference printed [−0.11, 0.06] here and [−0.12,
            # 0.05] in the audit, with no word of why beside either number
            # (none for a fixed value: "interval: refitted exactly …" beside "no interval")
            *(
                [f"  interval: {REFIT_WORDS[self.refit]}{REFIT_OTHER}"]
                if self.refit and not self.fixed
                else []
            ),
            *(f"  warning: {w}" for w in self.warnings),
            *(f"  note: {w}" for w in self.notes),
        ]
        return "\n".join(map(one_line, lines))

    def covers(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval (ends included)."""
        return self.ci_low <= value <= self.ci_high

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: the core fields (with ``n_of``, what ``n`` counts where
        it is not all the group's rows, else null: a calibrated self-preference's n 67
        beside n_clusters 73 said nothing of why in the JSON, where the table's line
        said it), which rule made the interval and the exact bound's prompt factor
        (``interval_rule``, ``heaviest_prompt``: as a finding of report.json has them),
        which ends were extrapolated past the resamples (``extrapolated``:
        :meth:`~recuse.bootstrap_rules.Extrapolation.to_dict`, null where none), then
        ``counts`` and ``components``."""
        return {
            "metric": self.metric,
            "judge": self.judge,
            "estimate": _clean(self.estimate),
            # a value fixed by construction has no interval: its ends are null, not the
            # value twice (0 [0, 0] read as a measured interval beside "no interval")
            "ci_low": None if self.fixed else _clean(self.ci_low),
            "ci_high": None if self.fixed else _clean(self.ci_high),
            "level": self.level,
            # nor a sample: n, its prompts and what n counts null, as report.json's
            # finding has them (n 51, the judge's own pairs, read as a measurement's)
            "n": None if self.fixed else self.n,
            "n_clusters": None if self.fixed else self.n_clusters,
            "n_of": None if self.fixed else self.n_of,
            "n_boot": self.n_boot,
            "n_boot_dropped": self.n_boot_dropped,
            "n_boot_unfit": self.n_boot_unfit,
            "method": self.method,
            # nor a standard error or a test (report.json's finding nulls them too)
            "std_error": None if self.fixed else _clean(self.std_error),
            "p_value": None if self.fixed else _clean(self.p_value),
            "null": self.null,
            "null_bound": self.bound,
            "signed": self.signed,
            "absolute_value": self.absolute,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "fixed_by_construction": self.fixed,
            "interval_rule": None if self.fixed else self.interval_rule,
            "heaviest_prompt": self.heaviest,
            "extrapolated": self.extrapolated.to_dict() if self.extrapolated else None,
            "counts": {k: int(v) for k, v in self.counts.items()},
            "components": {k: _clean(v) for k, v in self.components.items()},
        }


@dataclass(frozen=True)
class Skipped:
    """A metric that could not be estimated for a judge, and why."""

    metric: str
    judge: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "judge": self.judge, "reason": self.reason}


#: what each column of a table of results holds (:func:`results_frame`, the audit's
#: estimates tables): the CSV's n_of, null_bound, n_boot_unfit or signed had no word
#: anywhere a reader of the file would look
COLUMNS: dict[str, str] = {
    "dataset": "the input the estimate is of",
    "metric": "the estimator's id (as recuse metrics names it)",
    "bias": "the key of the estimate's finding in report.json, the summary, --material "
    "and recuse gate; empty: no finding (an estimate shown beside one)",
    "definition": "what the metric is (the first clause of its method)",
    "judge": "the judge (or the panel, for an agreement among judges)",
    "estimate": "the value, in the unit its definition gives (a share is 0 to 1)",
    "ci_low": "the low end of its interval at level (cluster bootstrap over prompts); "
    "empty: no interval, the value is fixed by construction (fixed_by_construction)",
    "ci_high": "the high end (empty as ci_low)",
    "fixed_by_construction": "the value is fixed by construction for this judge, not a "
    "measurement: no interval, standard error, p-value or interval rule (the warnings "
    "say why)",
    "level": "the interval's confidence level as a share: 0.9 is a 90% interval",
    "n": "the pairs the estimate rests on (n_of says which, where not all the judge's); "
    "empty: a value fixed by construction, which rests on no sample",
    "n_clusters": "the prompts the interval resampled (all the judge's where n_of is "
    "given, so it can exceed n); empty where n is (fixed by construction)",
    "n_of": "what n counts, where it is not all the judge's pairs",
    "n_boot": "bootstrap resamples drawn",
    "n_boot_dropped": "of those, resamples in which the statistic was undefined (a zero "
    "denominator), left out of the interval",
    "n_boot_unfit": "kept resamples whose refitted model had no finite estimate",
    "std_error": "the standard deviation of the kept resamples, in the estimate's unit "
    "(a position rate whose interval is widened for few pairs changing with the order: "
    "at least the interval's half-width over the normal quantile; an interval expanded "
    "for few prompts G: times the expansion's factor sqrt(G/(G-1)) t_(G-1)/z)",
    "p_value": "two-sided, against null (the interval inverted, never below 2/(B+1)); "
    "empty: no test (null is the metric's floor or ceiling)",
    "null": "the no-bias value in the estimate's unit (0.5 for the first-position rate; "
    "a quality score's chance value)",
    "null_bound": "floor or ceiling: null is the lowest or highest value the metric can "
    "take (a flip rate's 0, a consistency's 1), so there is no test; empty: neither",
    "signed": "the estimate is a difference around 0, written with its sign",
    "absolute_value": "the estimate is the absolute value of a signed statistic (never "
    "below 0; its p-value is that statistic's)",
    "warnings": "what to know before trusting the interval (few prompts, low n)",
    "notes": "what to know of the number that is no reason to distrust it (e.g. pairs "
    "judged in one order only, too few or too evenly split between the slots for a "
    "warning)",
    "components": "the parts the estimate is made of, name=value (e.g. the two recalls "
    "of a recall difference)",
}

#: the columns of every estimates table that say what its numbers are: the metric's
#: definition (the first clause of its method: the agreement table's two kappas, 0.425
#: and 0.298 for one judge, and two alphas, 0.73 and 0.55, read apart by their names
#: only, the position table's flip rate beside its consistency), the no-bias
#: value, whether it is the metric's floor or ceiling (then no p-value), whether the
#: estimate is a signed difference and whether an absolute value (which row's p-value is
#: another's, the signed statistic's). The position table's flip rate read "null 0" with
#: nothing saying it is a rate, where a difference's row reads the same
NUMBER_COLUMNS = ("definition", "null", "null_bound", "signed", "absolute_value")

#: after the core columns in :func:`results_frame`: what is shown next to each number
FRAME_EXTRAS = (
    "n_of", "std_error", "p_value", "null", "null_bound", "signed", "absolute_value", "warnings",
    "notes", "fixed_by_construction", "interval_rule", "heaviest_prompt",
)  # fmt: skip


def results_frame(results: Iterable[MetricResult]) -> pd.DataFrame:
    """One row per result with the core columns, then what ``n`` counts where it is not
    all the group's rows (:attr:`MetricResult.n_of`, else empty), its standard error,
    p-value, the no-bias value the p-value tests, which bound of the metric that value is
    ("floor" or "ceiling": then there is no p-value; empty for neither:
    :attr:`MetricResult.bound`), whether the estimate is a signed difference and whether
    it is an absolute value (:attr:`MetricResult.signed`, ``absolute``), its
    warnings and its notes (each joined by "; ", empty when none), and which rule made
    its interval with the exact bound's prompt factor (``interval_rule``,
    ``heaviest_prompt``, as ``to_dict`` and report.json give them) — for tables and CSV
    files (``recuse metrics pairs --out x.csv``)."""
    rows = []
    for r in results:
        d = r.to_dict()
        rows.append(
            {k: d[k] for k in (*CORE_FIELDS, *FRAME_EXTRAS)}
            | {"warnings": "; ".join(r.warnings), "notes": "; ".join(r.notes)}
        )
    frame = pd.DataFrame(rows, columns=[*CORE_FIELDS, *FRAME_EXTRAS])
    # whole numbers beside a fixed value's empty n (not 51.0 in the CSV)
    return frame.astype({"n": "Int64", "n_clusters": "Int64"})
