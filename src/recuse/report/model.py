"""What a report holds: findings, sections, skipped analyses, exclusions, provenance.

A :class:`Finding` is the unit of the one-screen summary: one judge, one bias, an
estimate with its confidence interval and sample size, and the method that made it.
Everything else in a report hangs off :class:`Section` objects, one per analysis.
The objects are plain frozen dataclasses; :mod:`recuse.report.export` turns them into
JSON and CSV, :mod:`recuse.report.html` into the HTML page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import pandas as pd

from recuse import numbers
from recuse.bootstrap_rules import Extrapolation
from recuse.choices import FigureFormat as FigureFormat
from recuse.data.inputs import Source
from recuse.interval_rules import IntervalRule
from recuse.metrics.estimate import excludes_null, flag_threshold, informative, zero_width
from recuse.metrics.result import MetricResult
from recuse.numbers import estimate_digits, estimate_parts, share_interval
from recuse.report.bias import Bias, Direction
from recuse.report.labels import FIXED_WORDS as FIXED_WORDS
from recuse.report.labels import all_judges_label as all_judges_label
from recuse.report.labels import is_all_judges_label as is_all_judges_label
from recuse.report.verdict import verdict

PMethod = Literal["bootstrap", "wald", ""]
#: how a finding's p-value was computed (:attr:`Finding.p_method`), in words
P_METHODS: dict[str, str] = {
    "bootstrap": "the bootstrap interval inverted (never below 2/(B+1), B kept resamples)",
    "wald": "a regression's Wald test on its robust standard error",
    "": "no p-value",
}
Materiality = Literal["material", "small", "negligible", ""]


def shared_wording(seen: Bias | None, bias: Bias) -> Bias:
    """The wording of one bias for a column or a section that holds findings of several
    datasets: its own when all share one kind of label, else the one written for human
    labels (the report's note says how to read it for the others)."""
    if seen is None or seen == bias:
        return bias
    return seen if seen.reference == "human" else bias if bias.reference == "human" else seen


@dataclass(frozen=True)
class Finding:
    """One bias of one judge: estimate, ``level`` confidence interval, n, method.

    ``significant`` is True when the interval excludes the bias's no-bias value
    (``bias.null``). ``n`` counts the units the estimate rests on (comparisons or
    ratings); ``clusters`` the independent units the bootstrap or the robust
    standard errors resampled (prompts), when known. Build one with
    :func:`recuse.analyses.base.to_finding`, which turns any estimate into a finding
    or, when it is not finite, into :class:`NotEstimated`.
    """

    judge: str
    bias: Bias
    estimate: float
    ci_low: float
    ci_high: float
    n: int
    level: float
    method: str
    dataset: str = ""
    detail: str = ""
    clusters: int | None = None
    section: str = ""
    headline: bool = True  # shown in the one-screen summary (else only in its section)
    std_error: float | None = None  # of the estimate, by the same method as the interval
    p_value: float | None = None  # two-sided, against bias.null, by the same method
    warnings: tuple[str, ...] = ()  # e.g. few clusters, an interval of zero width
    q_value: float | None = None  # Benjamini–Hochberg adjusted p, set across the summary
    material: float | None = None  # smallest effect worth acting on (bias default or --material)
    #: how ``p_value`` was computed (:data:`P_METHODS`): "bootstrap" (the bootstrap
    #: interval inverted, never below ``p_floor``), "wald" (a regression's robust Wald
    #: test), "" (no p-value, or not said)
    p_method: PMethod = ""
    #: the smallest p-value its method can give: 2/(B+1) for a bootstrap p-value from B
    #: kept resamples; None for a Wald test or without a p-value
    p_floor: float | None = None
    #: the interval has zero width because the value is fixed by construction (the
    #: metric says so: ``MetricSpec.constant`` without ``unseen``, e.g. a part of the
    #: calibrated self-preference on a rung none of the judge's own pairs is on, 0):
    #: then the zero width is real (:attr:`informative`)
    fixed: bool = False
    #: the estimate is the absolute value of a signed statistic (the metric says so:
    #: :attr:`recuse.metrics.result.MetricResult.absolute`): never below 0, its interval
    #: the absolute values over the signed one's, its p-value the signed one's; it reads
    #: without a sign (:attr:`signed`)
    absolute: bool = False
    #: which rule made the interval, for a bootstrap estimate
    #: (:data:`~recuse.interval_rules.IntervalRule`: "bca", "percentile", "expanded",
    #: "widened", "exact_bound"); None for any other estimate (a regression's Wald
    #: interval). The gate reads it to project an exact bound as 1/n
    interval_rule: IntervalRule | None = None
    #: for an "exact_bound" interval: the largest prompt's pairs over the mean prompt's
    #: (a ratio, at least 1), the factor the bound's share is multiplied by before it is
    #: capped at 1 (:func:`recuse.metrics.estimate.unseen_span`); None for every other rule
    heaviest_prompt: float | None = None
    #: which ends of an interval expanded for few prompts were extrapolated past the
    #: resamples, and how far (:attr:`recuse.metrics.result.MetricResult.extrapolated`;
    #: its warning is among ``warnings``): the tables' one note reads it
    #: (:func:`recuse.report.extrapolated.fold_extrapolated`). None where no end was
    extrapolated: Extrapolation | None = None
    #: what a reader may want to know of the number that is no reason to distrust it
    #: (:attr:`recuse.metrics.result.MetricResult.notes`: e.g. the pairs judged in one
    #: order only, below the one-slot warning's rule): shown muted in its section, never
    #: read by the summary, the flags or the gate
    notes: tuple[str, ...] = ()
    #: which of a judge's estimates of one bias on one dataset this is, where it has
    #: several that differ by it alone (certification's ``target agreement ≥ 85%``):
    #: the verdict says it after the bias's words (the three targets' verdicts read
    #: word for word alike, only ``detail`` naming the target); "" where it has one
    scope: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.bias, Bias):
            raise TypeError(f"finding {self.judge}: bias must be a Bias, got {self.bias!r}")
        for name in ("estimate", "ci_low", "ci_high"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"finding {self.judge}/{self.bias.key}: {name} is not finite")
        if not self.ci_low <= self.ci_high:
            raise ValueError(f"finding {self.judge}/{self.bias.key}: ci_low > ci_high")
        if not 0 < self.level < 1:
            raise ValueError("level must be in (0, 1)")
        if self.n < 1:
            raise ValueError("a finding needs n >= 1")

    @property
    def null(self) -> float:
        return self.bias.null

    @property
    def significant(self) -> bool:
        """Flagged (a quality score never is): a bias whose false-discovery-adjusted
        ``q_value`` is at most 1 − level when the audit adjusted it (Benjamini–Hochberg
        across the summary's tests), else whose interval excludes ``null`` — or, for an
        interval that is not :attr:`informative`, whose ``p_value`` is at most
        1 − level."""
        if not self.bias.flags:
            return False
        if self.q_value is not None:
            return self.q_value <= flag_threshold(self.level)
        return self.excludes_null

    @property
    def excludes_null(self) -> bool:
        """The reading before any false-discovery adjustment: the interval excludes
        ``null`` — or, for an interval that is not :attr:`informative` (zero width, or
        from fewer than 5 prompts: it excludes nothing on its own), the ``p_value``, at
        least the sign test's
        (:func:`recuse.metrics.estimate.sign_test_p`), is at most 1 − level. What
        :attr:`significant` is without a ``q_value``, and what :attr:`adjusted_away`, the
        verdict's note and the matrix row's ``holds_null`` compare the adjusted reading
        with."""
        return excludes_null(
            estimate=self.estimate,
            low=self.ci_low,
            high=self.ci_high,
            null=self.null,
            level=self.level,
            p_value=self.p_value,
            clusters=self.clusters,
            std_error=self.std_error,
            fixed=self.fixed,
        )

    @property
    def zero_width(self) -> bool:
        """The interval has no width (:func:`recuse.metrics.estimate.zero_width`)."""
        return zero_width(self.estimate, self.ci_low, self.ci_high)

    @property
    def informative(self) -> bool:
        """Whether the interval can rule an effect out: always for a value :attr:`fixed`
        by construction (more prompts would not change it); else False when it comes
        from fewer than ``FEW_CLUSTERS`` prompts (its warning says it is unreliable), or
        has zero width — the resamples
        never varied, so the interval says nothing about uncertainty: a judge always
        right on 6 prompts gives an EO difference of 0.00 [0.00, 0.00], which a real
        difference of 0.2 (recalls 0.8 and 1.0) gives whenever the weaker group's k pairs
        all happen to be right: probability 0.8^k, 0.51 for 3 pairs. Such an interval is
        never :attr:`materiality` "negligible" and detects nothing (:attr:`detectable` is
        None). A zero-width interval whose standard error is positive is not of that
        kind: its ends were clamped, not its resamples alike (a calibration error whose
        whole interval of the squared error lies below 0 reads 0.00 [0.00, 0.00])."""
        return informative(
            estimate=self.estimate,
            low=self.ci_low,
            high=self.ci_high,
            clusters=self.clusters,
            std_error=self.std_error,
            fixed=self.fixed,
        )

    @property
    def detectable(self) -> float | None:
        """The smallest bias (distance from ``null``) this estimate would detect with 80%
        power: (z_{1−α/2} + z_{0.80}) × standard error, α = 1 − level (two-sided, normal
        approximation); None without a standard error, for a zero-width interval that
        is not :attr:`informative` (its standard error, 0, measures nothing), or for a
        value :attr:`fixed` by construction: no bias of any size can be there to detect
        (a reward model's position preference, 0.5 [0.50, 0.50], read "±0.000
        detectable", as if the test would find the smallest position bias)."""
        if self.std_error is None or not math.isfinite(self.std_error):
            return None
        if self.fixed or (self.zero_width and not self.informative):
            return None
        from scipy.stats import norm

        return float((norm.ppf(1 - (1 - self.level) / 2) + norm.ppf(0.8)) * self.std_error)

    @property
    def shows_detectable(self) -> bool:
        """Whether the cell shows the "±X detectable" line: for a bias that flags whose
        interval shown (the raw one) includes ``null`` — no bias found by the unadjusted
        test that :attr:`detectable` is of — and a :attr:`detectable` to show. Never for a
        cell the false-discovery adjustment unflagged (:attr:`adjusted_away`): its raw
        interval excludes ``null``, so "no bias detected" would contradict it, and the
        size its adjusted test would detect is larger than the unadjusted test's
        ``detectable``; its :attr:`adjustment_note` says why it carries no flag."""
        return (
            self.bias.flags
            and not self.significant
            and not self.excludes_null
            and self.detectable is not None
        )

    @property
    def detectable_text(self) -> str:
        """:attr:`detectable` as the page writes it, by the rule of the estimates
        (:func:`recuse.numbers.estimate_digits`: 0.12, 0.034, 0.00042; it read
        ±0.00 below 0.005); "" without one."""
        d = self.detectable
        return "" if d is None else numbers.decimal(d, estimate_digits(d, d, d))

    @property
    def materiality(self) -> Materiality:
        """Whether the effect matters in practice, given :attr:`material` (distance from
        ``null``): "negligible" when the whole interval lies within ``null ± material``
        (flagged or not: an effect this small was ruled out beyond it); else, when
        flagged, "material" if the estimate is at least ``material`` from ``null`` and
        "small" if nearer; "" otherwise (unflagged and not ruled negligible, or no
        threshold). An interval that is not :attr:`informative` rules nothing out: never
        "negligible" — from fewer than ``FEW_CLUSTERS`` prompts (possible with a small
        ``min_n``: two prompts gave 0.50 [0.50, 0.50]), or of zero width without the value
        being :attr:`fixed` by construction (EO difference 0.00 [0.00, 0.00] from a judge
        always right on 6 prompts: the data could not tell).

        A zero-width interval that excludes ``null`` (a judge that picks the first answer
        on all 20 prompts: position 1.00 [1.00, 1.00]) reads like any significant
        estimate, by its distance from ``null``, here "material": every prompt on one
        side of ``null`` is the exact sign test's evidence, p = 2 · 2^−20 ≈ 2e-06
        (:func:`recuse.metrics.estimate.sign_test_p`, which the p-value never goes below:
        two prompts give 0.5, five 0.0625, so few prompts are not significant), and an
        exact bound on the magnitude too: with all 20 prompts leaning first, the 90%
        Clopper–Pearson interval of the share of prompts that do is [0.05^(1/20), 1] =
        [0.86, 1] — far from the half of no bias. The interval's warning (no variation) stays:
        read its ends as rough."""
        m = self.material
        if m is None or not self.bias.flags:
            return ""
        inside = self.null - m < self.ci_low and self.ci_high < self.null + m
        if self.informative and inside:
            return "negligible"
        if not self.significant or not self.headline:
            return ""
        return "material" if abs(self.estimate - self.null) >= m * (1 - 1e-9) else "small"

    @property
    def flagged(self) -> bool:
        """Shown as a bias (red, counted, listed among the flags): :attr:`significant`
        and not :attr:`materiality` "negligible". A significant estimate whose whole
        interval lies within ``null ± material`` is real but too small to act on
        (position 0.497 [0.494, 0.499] at n = 7,000): it keeps its verdict words and its
        "negligible" mark, neutral, and no gate or count treats it as a flag.

        Only a :attr:`headline` finding is flagged: the summary's tests are the
        false-discovery family, and its counts ("0 of 5 estimated biases flagged", "No
        bias flagged: gpt-4") are the report's. A section's number beside a headline
        (Saito's Eq. 6 beside the prefer-longer gap, the leaderboard's covariates) whose
        interval excludes ``null`` is :attr:`significant`, says its side and
        :data:`~recuse.report.verdict.BESIDE_NOTE`, never "material" or "small": it read
        "— material" in its section, ``flagged`` in report.json and was counted by
        ``repr(recuse.audit(...))`` (9 flagged on llmbar-mtbench, where the summary
        counts 3)."""
        return self.headline and self.significant and self.materiality != "negligible"

    @property
    def adjusted_away(self) -> bool:
        """The bias is flagged before adjustment (:attr:`excludes_null`) but the
        false-discovery-adjusted ``q_value`` does not flag it: a cell showing the interval
        must say why it carries no flag (:attr:`adjustment_note`), or it reads as a
        contradiction. Not a zero-width interval off ``null`` whose own p-value (the sign
        test's, 0.125 from 4 prompts) left it unflagged before any adjustment: the
        adjustment is not why."""
        return (
            self.bias.flags
            and self.q_value is not None
            and self.excludes_null
            and not self.significant
        )

    @property
    def adjustment_note(self) -> str:
        """``excludes no bias before adjustment; q = 0.197 > 0.1`` for a finding
        :attr:`adjusted_away` (its own ``q_value``, written by
        :func:`recuse.numbers.p_text`, against the flag threshold 1 − level); "" for any
        other. Shown in the cell itself: the terminal's summary table (a numbered note),
        the HTML matrix and the notebook's, and ``report.json``."""
        if not self.adjusted_away or self.q_value is None:
            return ""
        return (
            "excludes no bias before adjustment; q = "
            f"{numbers.p_text(self.q_value, beside=1 - self.level)} > "
            f"{1 - self.level:g}"
        )

    @property
    def direction(self) -> Direction:
        if not self.significant:
            return "none"
        return "positive" if self.estimate > self.null else "negative"

    @property
    def verdict(self) -> str:
        return verdict(self)

    @property
    def signed(self) -> bool:
        """Whether the estimate prints with a sign: a bias's difference around 0
        (:attr:`recuse.report.bias.Bias.signed`) that is not an :attr:`absolute` value."""
        return self.bias.signed and not self.absolute

    @property
    def text(self) -> str:
        """``+0.12 [0.03, 0.20]``: the estimate and its interval (``28.5% [23.3%,
        34.2%]`` for a share written as a percentage, :attr:`Bias.percent`). A value
        :attr:`fixed` by construction has no interval: ``0, fixed by construction, not a
        measurement`` (:data:`FIXED_WORDS`), where a part of the calibrated
        self-preference on a rung none of the judge's own pairs is on read "+0.000
        [0.000, 0.000]" like a measurement."""
        if self.fixed:
            return f"{self.estimate:g}, {FIXED_WORDS}"
        return " ".join(self.parts)

    @property
    def parts(self) -> tuple[str, str]:
        """:attr:`text` in two parts, the estimate and its interval (``"+0.12"``,
        ``"[0.03, 0.20]"``), for a table that shows them in two cells; a value
        :attr:`fixed` by construction ``"0 by construction"`` and, in place of an
        interval, ``"none: not a measurement"``."""
        if self.fixed:
            return f"{self.estimate:g} by construction", "none: not a measurement"
        if self.bias.percent:
            return share_interval(self.estimate, self.ci_low, self.ci_high)
        return estimate_parts(
            self.estimate, self.ci_low, self.ci_high, signed=self.signed, span=self.bias.span,
            null=self.null,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "bias": self.bias.key,
            "bias_title": self.bias.title,
            "unit": self.bias.unit,
            "dataset": self.dataset,
            "detail": self.detail,
            "section": self.section,
            "headline": self.headline,
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "level": self.level,
            # a value fixed by construction rests on no sample: n and clusters null (the
            # judge's own pairs as n read as the size of a measurement, where the page,
            # the verdict and print(result) give none)
            "n": None if self.fixed else self.n,
            "clusters": None if self.fixed else self.clusters,
            "method": self.method,
            "null": self.null,
            "significant": self.significant,
            "flagged": self.flagged,
            "direction": self.direction,
            "verdict": self.verdict,
            # a value fixed by construction is no measurement: no standard error, no test
            "std_error": None if self.fixed else self.std_error,
            "p_value": None if self.fixed else self.p_value,
            "p_method": "" if self.fixed else self.p_method,
            "p_floor": None if self.fixed else self.p_floor,
            "fixed_by_construction": self.fixed,
            "absolute_value": self.absolute,
            # no interval, so no rule made one (its ends are the value: fixed_by_construction)
            "interval_rule": None if self.fixed else self.interval_rule,
            "heaviest_prompt": self.heaviest_prompt,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "extrapolated": self.extrapolated.to_dict() if self.extrapolated else None,
            "q_value": self.q_value,
            "adjustment_note": self.adjustment_note,
            "material": self.material,
            "materiality": self.materiality,
            "detectable_with_80pct_power": self.detectable,
        }


def estimate_key(f: Finding) -> tuple[object, ...]:
    """What makes findings one estimate: each finding its own, except a pooled bias's
    rows of one estimate (:attr:`Bias.pooled`: a family's λ shown in each member judge's
    row), which share a key. The multiple-testing family counts one test per key
    (:mod:`recuse.report.multiplicity`) and the terminal's data line one headline
    estimate per key (:func:`recuse.report.summary_table.source_lines`), so the two
    count the same estimates."""
    if not f.bias.pooled:
        return ("finding", id(f))
    return (f.bias.key, f.dataset, f.detail, f.section, f.estimate, f.ci_low, f.ci_high,
            f.p_value)  # fmt: skip


@dataclass(frozen=True)
class Figure:
    """A rendered figure: the image bytes (base64 PNG or SVG text) plus words."""

    id: str
    title: str
    format: FigureFormat
    data: str  # base64 of the PNG, or the SVG document text
    alt: str
    caption: str = ""

    @property
    def data_uri(self) -> str:
        import base64

        if self.format == "png":
            return f"data:image/png;base64,{self.data}"
        encoded = base64.b64encode(self.data.encode("utf-8")).decode("ascii")
        return f"data:image/svg+xml;base64,{encoded}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "caption": self.caption, "format": self.format}


@dataclass(frozen=True)
class Table:
    """A tidy table of the report (written as CSV and into the JSON)."""

    name: str
    title: str
    frame: pd.DataFrame
    show: bool = True  # shown in the HTML (large tables are only written to CSV)
    #: columns of shares the page writes as percentages (:func:`recuse.numbers.
    #: share_percent`), as the findings and the gate write them; the CSV and JSON keep
    #: the shares
    percent: tuple[str, ...] = ()
    #: what a column holds, with its unit, for the columns whose name alone can be
    #: misread (a lower bound beside a null agreement, a string ``confidence``): written
    #: under the table on the page and as the table's ``columns`` in report.json, since
    #: its CSV has no room for them
    columns: Mapping[str, str] = field(default_factory=dict)
    #: a column of numbers read against a threshold in another column of the same row
    #: (``{"heldout_agreement": "target"}``): the page writes each such number with as
    #: many decimals as put it on its own side of its row's threshold
    #: (:func:`recuse.numbers.decimal_beside`), where rounding to nearest wrote a held-out
    #: agreement of 0.7996 as ``0.800`` beside a target 0.80 it misses
    beside: Mapping[str, str] = field(default_factory=dict)
    #: columns the page writes as the analysis wrote them, one text per row, by a rule
    #: of their own that the page's one precision per column would break (the
    #: favoritism coefficients: one precision for the table's estimates and intervals, as
    #: ``recuse favoritism`` writes them); the CSV and JSON keep the numbers
    texts: Mapping[str, Sequence[str]] = field(default_factory=dict)
    #: words under the table on the page about how it writes its numbers (where they read
    #: otherwise than the findings above it), as the terminal's caption says them
    note: str = ""

    def __post_init__(self) -> None:
        named = [*self.columns, *self.beside, *self.beside.values(), *self.texts]
        unknown = [c for c in dict.fromkeys(named) if c not in self.frame.columns]
        if unknown:
            raise ValueError(f"table {self.name}: defines columns it does not have: {unknown}")
        uneven = [c for c, t in self.texts.items() if len(t) != len(self.frame)]
        if uneven:
            raise ValueError(
                f"table {self.name}: texts of {uneven[0]!r} need one per row "
                f"({len(self.frame)}), got {len(self.texts[uneven[0]])}"
            )

    def records(self) -> list[dict[str, Any]]:
        return [_clean_record(r) for r in self.frame.to_dict(orient="records")]

    def to_dict(self) -> dict[str, Any]:
        """Its title, its rows and, where it has them, its columns' definitions."""
        out: dict[str, Any] = {"title": self.title, "rows": self.records()}
        if self.columns:
            out["columns"] = dict(self.columns)
        return out


@dataclass(frozen=True)
class NotEstimated:
    """An analysis, or one of its estimates, that was not made, and why (never a zero)."""

    analysis: str  # the analysis's title
    reason: str
    dataset: str = ""
    judge: str = ""  # one judge, or "" (not judge-specific, or every judge: ``all_judges``)
    headline: bool = True  # listed under the judge in the summary
    bias: Bias | None = None  # the bias it leaves unestimated, if any
    #: > 0: the same reason holds for every judge of the dataset, this many of them
    #: (``judge`` is then ""; shown as "all N judges", :attr:`judge_label`)
    all_judges: int = 0
    metric: str = ""  # the one estimate not made (``flip_rate``), or "": the analysis

    @property
    def said(self) -> str:
        """The reason as the report shows it: ``metric: reason`` for one estimate."""
        return f"{self.metric}: {self.reason}" if self.metric else self.reason

    @property
    def judge_label(self) -> str:
        """The judge as shown: the judge, "all N judges" (:func:`all_judges_label`) or ""."""
        return all_judges_label(self.all_judges) if self.all_judges else self.judge

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": self.analysis,
            "dataset": self.dataset,
            "judge": self.judge_label,
            "reason": self.said,
            "bias": self.bias.key if self.bias else "",
        }

    def concerns(self, judge: str, judges_of_dataset: set[str]) -> bool:
        """Whether this skip is about ``judge`` (named, or one of all the dataset's)."""
        if self.judge_label == judge:
            return True
        return bool(self.all_judges) and judge in judges_of_dataset


@dataclass(frozen=True)
class Exclusion:
    """Rows left out of an analysis: how many of how many, and why."""

    dataset: str
    reason: str
    count: int
    total: int
    judge: str = ""
    analysis: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "judge": self.judge,
            "analysis": self.analysis,
            "reason": self.reason,
            "count": self.count,
            "total": self.total,
        }


@dataclass(frozen=True)
class Baseline:
    """A number about a dataset's reference labels, not about any judge: the humans' own
    preference for longer answers (:func:`recuse.metrics.verbosity.human_prefers_longer`),
    the baseline a judge's verbosity is read against. Never a :class:`Finding`: no
    judge's row of the summary holds it and ``recuse gate`` never reads it (it is in its
    section's ``baselines`` in report.json, not its ``findings``).

    ``result``: the estimate as its metric computed it (its definition, interval, n,
    no-preference value ``null`` and method); ``title`` names it and ``unit`` says what
    the number is, both from the module that computes it."""

    dataset: str
    title: str
    unit: str
    result: MetricResult
    #: how the labels of 0.5 were used, in words beside the number ("186 tied or evenly
    #: split human votes (labels of 0.5) left out: --human-ties drop"); "" where none
    ties: str = ""
    #: the table's other pairs the number leaves out, in words ("31 pairs whose two
    #: answers are of equal length (or a length unknown) left out"); "" where none
    left_out: str = ""

    @property
    def text(self) -> str:
        """``0.44 [0.42, 0.46]``: the share and its interval (never reading 0 or 1, nor
        the no-preference value at an end that excludes it)."""
        r = self.result
        return numbers.estimate_text(
            r.estimate, r.ci_low, r.ci_high, signed=False, span=(0.0, 1.0), null=r.null
        )

    @property
    def sentence(self) -> str:
        """``humans' preference for the longer answer: 0.44 [0.42, 0.46] (90% interval,
        2,267 pairs, no preference = 0.5)``: the number with its words, for the terminal
        and the page, and :attr:`ties` where there were any (mt-bench-human's 0.69 from
        693 pairs left 186 tied votes out, unsaid beside it, and read 0.65 from 879 with
        them counted ½), and :attr:`left_out` (its 31 pairs of equal length, said on the
        page's exclusions alone: 693 and 186 of 910)."""
        r = self.result
        ties = "".join(f"; {w}" for w in (self.ties, self.left_out) if w)
        return (
            f"{self.title}: {self.text} ({numbers.percent(r.level)} interval, "
            f"{numbers.count(r.n)} pairs, no preference = {numbers.general(r.null)}{ties})"
        )

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "dataset": self.dataset,
            "metric": r.metric,
            "title": self.title,
            "definition": r.definition,
            "unit": self.unit,
            "null": r.null,
            "estimate": r.estimate,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "level": r.level,
            "n": r.n,
            "n_clusters": r.n_clusters,
            "std_error": r.std_error,
            "p_value": r.p_value,
            "method": r.method,
            "warnings": list(r.warnings),
            "notes": list(r.notes),
            "counts": {k: int(v) for k, v in r.counts.items()},
        }


@dataclass(frozen=True)
class Section:
    """One analysis: what it measures, its findings, figures, tables and notes."""

    id: str
    title: str
    intro: str
    findings: tuple[Finding, ...] = ()
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float | None = None
    #: sentences for the first screen and the terminal: each tool's own number
    headlines: tuple[str, ...] = ()
    #: numbers about the data's labels, no judge's (:class:`Baseline`): in report.json
    #: only where there are some (every other section's keys as they were)
    baselines: tuple[Baseline, ...] = ()

    @property
    def biases(self) -> tuple[Bias, ...]:
        """The biases of the section's findings, each once, in summary order."""
        found: dict[str, Bias] = {}
        for f in self.findings:
            found[f.bias.key] = shared_wording(found.get(f.bias.key), f.bias)
        return tuple(sorted(found.values(), key=lambda b: b.order))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "intro": self.intro,
            "biases": [b.to_dict() for b in self.biases],
            "findings": [f.to_dict() for f in self.findings],
            "figures": [f.to_dict() for f in self.figures],
            "tables": [t.name for t in self.tables],
            "notes": list(self.notes),
            "headlines": list(self.headlines),
            "seconds": self.seconds,
        } | ({"baselines": [b.to_dict() for b in self.baselines]} if self.baselines else {})


@dataclass(frozen=True)
class Provenance:
    """Where the numbers came from and how they were made."""

    sources: tuple[Source, ...]
    recuse_version: str
    recuse_commit: str | None
    options: dict[str, Any]
    seed: int
    created: str
    python: str
    packages: dict[str, str] = field(default_factory=dict)
    #: where each option's value came from, keyed by its flag without dashes, ``_`` for
    #: ``-`` (``n_boot``, ``map``): ``"cli"``, ``"config:<path>"``, ``"default"``,
    #: ``"api"`` or ``"cli + config:<path>"`` (:func:`recuse.options.setting_sources`)
    option_sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": [s.to_dict() for s in self.sources],
            "recuse_version": self.recuse_version,
            "recuse_commit": self.recuse_commit,
            "options": dict(self.options),
            "seed": self.seed,
            "created": self.created,
            "python": self.python,
            "packages": dict(self.packages),
            "option_sources": dict(self.option_sources),
        }


@dataclass(frozen=True)
class SummaryRow:
    """One judge in the summary: its headline findings (flagged first) and the
    estimates that could not be made for it. :attr:`flagged` holds the findings that
    are :attr:`Finding.flagged` (significant and not negligible)."""

    judge: str
    findings: tuple[Finding, ...]
    not_estimated: tuple[NotEstimated, ...]

    @property
    def flagged(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.flagged)

    @property
    def nothing_estimated(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "flagged": [f.bias.title for f in self.flagged],
            "findings": [f.to_dict() for f in self.findings],
            "not_estimated": [
                {k: v for k, v in m.to_dict().items() if k != "judge"} for m in self.not_estimated
            ],
            "nothing_estimated": self.nothing_estimated,
        }


@dataclass(frozen=True)
class MatrixCell:
    """One judge × bias cell: an estimate per dataset, and why any is missing."""

    estimates: tuple[Finding, ...] = ()
    not_estimated: tuple[NotEstimated, ...] = ()

    @property
    def hit(self) -> bool:
        """Some estimate of the cell is flagged (significant and not negligible)."""
        return any(f.flagged for f in self.estimates)

    def to_dict(self) -> dict[str, Any]:
        keep = ("dataset", "detail", "estimate", "ci_low", "ci_high", "n", "significant", "flagged")
        more = ("direction", "verdict", "materiality", "material", "warnings", "extrapolated",
                "adjustment_note")  # fmt: skip
        return {
            "estimates": [
                {k: f.to_dict()[k] for k in (*keep, *more)} | {"text": f.text}
                for f in self.estimates
            ],
            "not_estimated": [
                {"dataset": m.dataset, "analysis": m.analysis, "reason": m.said}
                for m in self.not_estimated
            ],
        }


@dataclass(frozen=True)
class MatrixRow:
    judge: str
    cells: Mapping[str, MatrixCell]  # bias key -> cell; missing: no data of that kind
    estimated: int
    flagged: int
    nothing_estimated: bool
    #: every headline *bias* interval holds its no-bias value or is negligible (quality
    #: scores left out): an unflagged row that does not was flagged away by the FDR
    holds_null: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "estimated": self.estimated,
            "flagged": self.flagged,
            "nothing_estimated": self.nothing_estimated,
            "holds_null": self.holds_null,
            "cells": {k: c.to_dict() for k, c in self.cells.items()},
        }


@dataclass(frozen=True)
class MatrixColumn:
    bias: Bias
    datasets: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return self.bias.to_dict() | {"datasets": list(self.datasets)}


@dataclass(frozen=True)
class EstimatedNowhere:
    """An analysis no judge got an estimate or a column for, with its reasons."""

    analysis: str
    reasons: tuple[tuple[str, tuple[str, ...]], ...]  # (reason, datasets)

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": self.analysis,
            "reasons": [{"reason": r, "datasets": list(ds)} for r, ds in self.reasons],
        }


@dataclass(frozen=True)
class Matrix:
    """The summary as a judge × bias matrix, the head of the HTML page."""

    columns: tuple[MatrixColumn, ...]
    rows: tuple[MatrixRow, ...]
    not_estimated_anywhere: tuple[EstimatedNowhere, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "biases": [c.to_dict() for c in self.columns],
            "rows": [r.to_dict() for r in self.rows],
            "not_estimated_anywhere": [u.to_dict() for u in self.not_estimated_anywhere],
        }


@dataclass(frozen=True)
class FlaggedVerdict:
    """One flagged estimate's verdict sentence; a pooled estimate names all its judges."""

    judges: tuple[str, ...]
    finding: Finding

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        return {
            "judges": list(self.judges),
            "bias": f.bias.key,
            "bias_title": f.bias.title,
            "dataset": f.dataset,
            "detail": f.detail,
            "direction": f.direction,
            "verdict": f.verdict,
            "pooled": f.bias.pooled,
            "materiality": f.materiality,
            "material": f.material,
            "warnings": list(f.warnings),
            "extrapolated": f.extrapolated.to_dict() if f.extrapolated else None,
        }


@dataclass(frozen=True)
class AuditReport:
    """A whole audit: summary findings come from the sections.

    ``analyses`` lists each analysis the audit ran (its title and the keys of its
    headline biases; none for an analysis that only fills its section), so the
    summary can say which were estimated for no judge at all (without it, a skip's
    own bias decides).
    """

    title: str
    sections: tuple[Section, ...]
    skipped: tuple[NotEstimated, ...]
    exclusions: tuple[Exclusion, ...]
    provenance: Provenance
    level: float
    notes: tuple[str, ...] = ()
    timings: tuple[tuple[str, float], ...] = ()  # (analysis, seconds), in run order
    analyses: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.sections for f in s.findings]

    @property
    def headlines(self) -> list[str]:
        """Each tool's own number, one sentence each, for the first screen and terminal."""
        return [h for s in self.sections for h in s.headlines]

    @property
    def judges(self) -> list[str]:
        return sorted({f.judge for f in self.findings if f.headline})

    @property
    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]

    @property
    def baselines(self) -> list[Baseline]:
        """Every section's numbers about the data's labels (no judge's: never in the
        summary nor the gate)."""
        return [b for s in self.sections for b in s.baselines]

    def summary(self) -> tuple[SummaryRow, ...]:
        """Per judge: its headline findings (flagged first) and what could not be estimated.

        Computed once per report (the page, the JSON and the matrix share it).
        """
        return self._summary

    @cached_property
    def _summary(self) -> tuple[SummaryRow, ...]:
        by_dataset = {s.name: set(s.judges) for s in self.provenance.sources}
        skipped_judges = {
            j
            for k in self.skipped
            if k.headline
            for j in (by_dataset.get(k.dataset, set()) if k.all_judges else {k.judge})
            if j
        }
        out = []
        for judge in sorted(set(self.judges) | skipped_judges):
            fs = [f for f in self.findings if f.judge == judge and f.headline]
            fs.sort(key=lambda f: (not f.flagged, f.bias.order, f.dataset, f.detail))
            missing = tuple(
                k
                for k in self.skipped
                if k.headline and k.concerns(judge, by_dataset.get(k.dataset, set()))
            )
            out.append(SummaryRow(judge, tuple(fs), missing))
        return tuple(out)

    def matrix(self) -> Matrix:
        """The summary as a judge × bias matrix.

        Columns: every bias with a headline finding or a judge's not-estimated entry,
        in summary order. Rows: one per judge of :meth:`summary`, whose cells hold its
        estimates (one per dataset) and not-estimated reasons; a bias missing from a
        row's cells had no data of its kind for that judge. ``not_estimated_anywhere``:
        analyses no judge got an estimate or a column for, with their reasons.
        """
        rows = []
        biases: dict[str, Bias] = {}
        for row in self.summary():
            found: dict[str, list[Finding]] = {}
            missing: dict[str, list[NotEstimated]] = {}
            for f in row.findings:
                found.setdefault(f.bias.key, []).append(f)
                biases[f.bias.key] = shared_wording(biases.get(f.bias.key), f.bias)
            for m in row.not_estimated:
                if m.bias is not None:
                    missing.setdefault(m.bias.key, []).append(m)
                    biases[m.bias.key] = shared_wording(biases.get(m.bias.key), m.bias)
            keys = sorted(set(found) | set(missing), key=lambda b: biases[b].order)
            cells = {
                b: MatrixCell(
                    tuple(sorted(found.get(b, []), key=lambda f: (f.dataset, f.detail))),
                    tuple(missing.get(b, [])),
                )
                for b in keys
            }
            rows.append(
                MatrixRow(
                    judge=row.judge,
                    cells=cells,
                    estimated=len(row.findings),
                    flagged=len(row.flagged),
                    nothing_estimated=row.nothing_estimated,
                    holds_null=all(
                        not f.excludes_null or f.materiality == "negligible"
                        for f in row.findings
                        if f.bias.kind != "quality"
                    ),
                )
            )
        columns = tuple(
            MatrixColumn(
                biases[b],
                tuple(sorted({f.dataset for r in rows for f in _estimates(r, b)})),
            )
            for b in sorted(biases, key=lambda b: biases[b].order)
        )
        of_analysis = dict(self.analyses)
        anywhere: dict[str, dict[str, list[str]]] = {}
        for k in self.skipped:
            its = of_analysis.get(k.analysis, (k.bias.key,) if k.bias else ())
            if not k.headline or not its or set(its) & set(biases):
                continue
            where = anywhere.setdefault(k.analysis, {}).setdefault(k.said, [])
            if k.dataset not in where:
                where.append(k.dataset)
        return Matrix(
            columns,
            tuple(rows),
            tuple(
                EstimatedNowhere(a, tuple((r, tuple(ds)) for r, ds in reasons.items()))
                for a, reasons in anywhere.items()
            ),
        )

    def flagged_verdicts(self) -> list[FlaggedVerdict]:
        """The flagged findings' verdict sentences, one per estimate, in judge order.

        An estimate shared by several judges (a pooled bias such as the regression's
        family bias λ, the same for every judge of a family) is one sentence naming
        all of them.
        """
        groups: dict[tuple[Any, ...], list[str]] = {}
        first: dict[tuple[Any, ...], Finding] = {}
        for row in self.summary():
            for f in row.flagged:
                owner = "" if f.bias.pooled else row.judge
                numbers = (f.estimate, f.ci_low, f.ci_high, f.n)
                key = (f.bias.key, f.dataset, f.detail, *numbers, f.verdict, owner)
                groups.setdefault(key, []).append(row.judge)
                first.setdefault(key, f)
        return [FlaggedVerdict(tuple(js), first[k]) for k, js in groups.items()]


def _estimates(row: MatrixRow, bias: str) -> tuple[Finding, ...]:
    cell = row.cells.get(bias)
    return cell.estimates if cell else ()


def _clean_record(record: dict[Any, Any]) -> dict[str, Any]:
    """JSON-safe values: NaN/inf -> None, numpy scalars -> Python."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if hasattr(value, "item") and not isinstance(value, str | bytes):
            try:
                value = value.item()
            except (ValueError, AttributeError):
                pass
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        elif value is pd.NaT or (not isinstance(value, str | list | dict) and pd.isna(value)):
            value = None
        out[str(key)] = value
    return out
