"""Plain-language verdicts: the words the one-screen summary uses for each bias.

A bias is *flagged* when its confidence interval excludes the no-bias value; the
sign of the estimate picks the phrase. The interval and n always follow, e.g.
``favours its own answers: +0.12 [0.03, 0.20], n=340``. An interval that includes
the no-bias value reads "no detectable …", which says that the data could not tell,
not that the bias is absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recuse.report.model import Finding


@dataclass(frozen=True)
class BiasSpec:
    key: str
    title: str
    positive: str  # verdict when the interval lies above the no-bias value
    negative: str  # ... below it
    none: str  # ... when it contains it
    scale: str  # what one unit of the estimate means
    order: int  # position in the summary


_SPECS = (
    BiasSpec(
        "self_preference_eo",
        "Self-preference (equal opportunity)",
        "favours its own answers",
        "is harder on its own answers",
        "no detectable self-preference",
        "difference in the judge's recall of the better answer, own minus other",
        10,
    ),
    BiasSpec(
        "self_preference_dp",
        "Self-preference (demographic parity)",
        "picks its own answer in most comparisons (quality not controlled)",
        "picks the other answer in most comparisons (quality not controlled)",
        "picks its own answer about half the time",
        "2 × P(judge picks its own answer) − 1; compare with the humans' value",
        11,
    ),
    BiasSpec(
        "family_preference",
        "Family preference",
        "favours answers from its model family",
        "is harder on answers from its model family",
        "no detectable family preference",
        "difference in the judge's recall of the better answer, family minus other",
        20,
    ),
    BiasSpec(
        "family_preference_dp",
        "Family preference (demographic parity)",
        "picks its family's answer in most comparisons (quality not controlled)",
        "picks the non-family answer in most comparisons (quality not controlled)",
        "picks its family's answer about half the time",
        "2 × P(judge picks the family member's answer) − 1; compare with the humans' value",
        21,
    ),
    BiasSpec(
        "self_bias",
        "Self-bias (ratings, regression)",
        "rates its own answers higher than the reference warrants",
        "rates its own answers lower than the reference warrants",
        "no detectable self-bias in its ratings",
        "rating points, adjusted for the reference score",
        30,
    ),
    BiasSpec(
        "family_bias",
        "Family bias (ratings, regression)",
        "rates its family's answers higher than the reference warrants",
        "rates its family's answers lower than the reference warrants",
        "no detectable family bias in its ratings",
        "rating points, adjusted for the reference score",
        31,
    ),
    BiasSpec(
        "verbosity",
        "Verbosity",
        "prefers longer answers more than humans do",
        "prefers shorter answers more than humans do",
        "no detectable length preference beyond the humans'",
        "probability of picking the longer answer, judge minus human",
        40,
    ),
    BiasSpec(
        "position",
        "Position",
        "prefers the answer shown first",
        "prefers the answer shown second",
        "no detectable position preference",
        "share of the win given to the answer shown first; 0.5 = no preference",
        50,
    ),
    BiasSpec(
        "familiarity",
        "Familiarity (perplexity)",
        "prefers low-perplexity (familiar) answers more than humans do",
        "prefers high-perplexity answers more than humans do",
        "no detectable familiarity preference",
        "probability of picking the lower-perplexity answer, judge minus human",
        60,
    ),
)

BIASES: dict[str, BiasSpec] = {s.key: s for s in _SPECS}


def interval_text(estimate: float, low: float, high: float, n: int, *, signed: bool = True) -> str:
    """``+0.12 [0.03, 0.20], n=340`` with one number format for all three.

    ``signed=False`` drops the '+' (for rates whose no-bias value is not 0).
    """
    digits = 2 if max(abs(estimate), abs(low), abs(high)) >= 0.1 else 3
    est = f"{estimate:+.{digits}f}" if signed else f"{estimate:.{digits}f}"
    lo = f"{low:.{digits}f}"
    hi = f"{high:.{digits}f}"
    text = f"{est} [{lo}, {hi}], n={n}"
    return text.replace("-", "\u2212")


def verdict(finding: Finding) -> str:
    """The summary sentence for one finding."""
    spec = finding.spec
    words = {"positive": spec.positive, "negative": spec.negative, "none": spec.none}[
        finding.direction
    ]
    numbers = interval_text(
        finding.estimate, finding.ci_low, finding.ci_high, finding.n, signed=finding.null == 0
    )
    return f"{words}: {numbers}"
