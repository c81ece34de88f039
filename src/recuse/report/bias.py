"""What a reader is told about one bias: its name, unit, no-bias value and verdict words.

A :class:`Bias` is frozen data declared once, in the words module of the analysis that
estimates it (:mod:`recuse.biases`, which that analysis in :mod:`recuse.analyses`
imports), so the words the report, the JSON and the CLI show are the estimator's and
cannot drift from the number; ``recuse gate`` reads them without the statistics. A
bias is *flagged* when the interval excludes ``null``; the sign of the estimate picks
the phrase.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from recuse.numbers import minus
from recuse.reference import ReferenceKind, reword

Direction = Literal["positive", "negative", "none"]
MeasureKind = Literal["bias", "quality"]
#: the values an estimate can take, ``(low, high)`` (:attr:`Bias.span`)
Span = tuple[float, float]
#: a rate, share or probability
RATE: Span = (0.0, 1.0)
#: a difference of two rates (or of two shares, or a rate and a predicted probability)
RATE_DIFFERENCE: Span = (-1.0, 1.0)
#: an agreement coefficient such as Cohen's κ: 1 perfect, −1 its least
COEFFICIENT: Span = (-1.0, 1.0)
#: a reliability coefficient such as Krippendorff's α: 1 perfect; its least value
#: depends on the data (no fixed floor)
RELIABILITY: Span = (-math.inf, 1.0)
#: a regression coefficient, a slope, a log-odds: any real number
UNBOUNDED: Span = (-math.inf, math.inf)


@dataclass(frozen=True)
class Bias:
    """One bias as a reader sees it.

    ``unit`` says what one unit of the estimate means (the quantity the estimator
    computes, not a paraphrase); ``null`` is the no-bias value; ``positive`` /
    ``negative`` are the verdicts when the interval lies above / below ``null`` and
    ``none`` when it contains it. ``order`` places the bias in the summary; ``short``
    heads its matrix column; ``pooled`` marks one estimate shared by a group of
    judges (e.g. a family's λ); ``headline`` False keeps its findings in the
    analysis's section, out of the one-screen summary. ``kind="quality"`` marks a
    quality score (agreement with the reference, calibration error), not a bias: its
    ``null`` is a reference point (chance agreement, perfect calibration) and its
    findings are never *flagged* (see :attr:`flags`). ``tested`` False: a test against
    ``null`` means nothing (an ECE or a Brier score is above 0 for any finite sample,
    so "0" is a floor, not a no-bias value): its findings carry no p-value.
    ``scale`` is the unit in a few words for a column header (e.g. "recall difference");
    :attr:`header` adds the no-bias value. ``material`` is the smallest distance from
    ``null`` worth acting on (same unit as the estimate; ``--material KEY=X`` overrides
    it): a flagged estimate that far or farther reads "material", a nearer one "small",
    and an interval wholly inside ``null ± material`` "negligible". None: no default
    (quality scores). ``span``: the values the estimate can take, ``(low, high)``, from
    what it is (:data:`RATE`, :data:`RATE_DIFFERENCE`, :data:`COEFFICIENT`,
    :data:`UNBOUNDED`; an end may be infinite): every bias states it, and a bound asked
    of it (``recuse gate``) is checked against it (:meth:`reach`).
    """

    key: str
    title: str
    unit: str
    positive: str
    negative: str
    none: str
    order: int
    null: float = 0.0
    short: str = ""
    pooled: bool = False
    headline: bool = True
    kind: MeasureKind = "bias"
    tested: bool = True
    material: float | None = None
    scale: str = ""  # the unit in a few words, for column headers (``unit`` says it fully)
    #: a number shown beside a headline as what it is, not adjusted for what moves it
    #: without any bias (e.g. self-preference's equal opportunity, high for a strong
    #: judge with no bias): never flagged, coloured or counted as a finding of its own
    unadjusted: bool = False
    #: what the labels it is compared with are (:mod:`recuse.reference`): its words are
    #: written for human labels and reworded by :meth:`for_reference`
    reference: ReferenceKind = "human"
    #: a share of pairs, whose estimate and interval are written as percentages
    #: (:func:`recuse.numbers.share_interval`: 28.5% [23.3%, 34.2%], 0.04% where 1 of
    #: 2,500 pairs), as ``recuse gate`` and ``recuse certify`` write it; else by the rule
    #: of :func:`recuse.numbers.estimate_digits`. The audit wrote a certified coverage
    #: 0.285 beside the gate's 28.5%, and one pair of 2,500 as 0.000 beside its 0.04%
    percent: bool = False
    #: where the estimate is in units of a whole scale with no fixed span (the ratings'
    #: γ and λ: rating ÷ the dimension's top score, any sign of rating allowed), the
    #: distance that is all of it: ``recuse gate --max KEY=X`` with X at or above it
    #: allows the whole scale, a bound written in another unit (5 for 5%), and is refused
    whole_scale: float | None = None
    span: Span = field(kw_only=True)

    def __post_init__(self) -> None:
        for name in ("key", "title", "unit", "positive", "negative", "none"):
            if not getattr(self, name).strip():
                raise ValueError(f"bias {self.key!r}: {name} is empty")
        if self.material is not None and not self.material > 0:
            raise ValueError(f"bias {self.key!r}: material must be positive")
        low, high = self.span
        if not low <= self.null <= high or not low < high:
            raise ValueError(f"bias {self.key!r}: null {self.null:g} outside span {self.span}")
        if self.material is not None and self.material > self.reach:
            raise ValueError(f"bias {self.key!r}: material beyond what the span allows")

    @property
    def reach(self) -> float:
        """The farthest an estimate can lie from ``null`` within :attr:`span` (0.5 for a
        rate around 0.5, 1 for a difference of rates around 0; ``inf`` when unbounded).

        >>> Bias(key="p", title="P", unit="u", positive="+", negative="-", none="0",
        ...      order=1, null=0.5, span=RATE).reach
        0.5
        """
        low, high = self.span
        return max(self.null - low, high - self.null)

    @property
    def span_text(self) -> str:
        """:attr:`span` as an interval: ``[0, 1]``, ``[−1, 1]``, ``(−∞, 1]``, ``(−∞, ∞)``."""
        low, high = self.span
        left = "(−∞" if math.isinf(low) else f"[{minus(f'{low:g}')}"
        right = "∞)" if math.isinf(high) else f"{minus(f'{high:g}')}]"
        return f"{left}, {right}"

    @property
    def span_json(self) -> dict[str, Any]:
        """:attr:`span` for JSON, which has no infinity: ``low`` and ``high`` (None where
        that end is unbounded) and :attr:`span_text`.

        >>> from recuse.report.bias import RELIABILITY
        >>> Bias(key="a", title="A", unit="u", positive="+", negative="-", none="0",
        ...      order=1, null=0.0, span=RELIABILITY).span_json
        {'low': None, 'high': 1.0, 'text': '(−∞, 1]'}
        """
        low, high = self.span
        return {
            "low": None if math.isinf(low) else low,
            "high": None if math.isinf(high) else high,
            "text": self.span_text,
        }

    @property
    def label(self) -> str:
        return self.short or self.title

    @property
    def null_name(self) -> str:
        """What ``null`` is: ``none`` (no bias), ``chance`` (a quality score's chance
        level, e.g. accuracy 0.5) or ``perfect`` (an untested score whose floor is the
        best value: an ECE or a Brier score of 0, where chance is above it)."""
        if self.kind != "quality":
            return "none"
        return "chance" if self.tested else "perfect"

    @property
    def null_text(self) -> str:
        """``no bias = 0.5``, ``chance = 0.5`` or ``perfect = 0``: the reference value in words."""
        name = "no bias" if self.null_name == "none" else self.null_name
        return f"{name} = {self.null:g}"

    @property
    def short_unit(self) -> str:
        """The unit in a few words (``scale``; else the first clause of ``unit``)."""
        return self.scale or self.unit.split(";")[0].split(":")[0]

    @property
    def header(self) -> str:
        """``recall difference · no bias = 0``: unit and no-bias value for a column header
        (:attr:`null_text`, the words of the terminal's summary table too)."""
        scale = self.short_unit
        if len(scale) > 40:
            scale = scale[:39].rstrip() + "…"
        return f"{scale} · {self.null_text}"

    @property
    def signed(self) -> bool:
        """Whether estimates print with a sign (bias differences around 0; not rates,
        not quality scores)."""
        return self.null == 0 and self.kind == "bias"

    @property
    def flags(self) -> bool:
        """Whether an interval excluding ``null`` flags a bias (False for quality scores
        and for :attr:`unadjusted` numbers)."""
        return self.kind == "bias" and not self.unadjusted

    def for_reference(self, kind: ReferenceKind) -> Bias:
        """This bias in the words of ``kind``'s labels (e.g. JudgeBench's correctness
        labels: "picks its own answer more often than it is the correct answer" for
        "... than the humans prefer it"); itself for human labels."""
        if kind == self.reference:
            return self
        if self.reference != "human":
            raise ValueError(f"bias {self.key!r} is already worded for {self.reference} labels")
        return replace(
            self,
            reference=kind,
            title=reword(self.title, kind),
            unit=reword(self.unit, kind),
            positive=reword(self.positive, kind),
            negative=reword(self.negative, kind),
            none=reword(self.none, kind),
            short=reword(self.short, kind),
            scale=reword(self.scale, kind),
        )

    def words(self, direction: Direction) -> str:
        return {"positive": self.positive, "negative": self.negative, "none": self.none}[direction]

    def to_dict(self) -> dict[str, Any]:
        return {
            "bias": self.key,
            "title": self.title,
            "short": self.label,
            "unit": self.unit,
            "null": self.null,
            "kind": self.kind,
            "material": self.material,
            "header": self.header,
            "unadjusted": self.unadjusted,
        }
