"""Plain-language verdicts: the words the one-screen summary uses for each bias.

A bias is *flagged* when its confidence interval excludes the no-bias value; the
sign of the estimate picks the phrase. The interval and n always follow, e.g.
``favours its own answers: +0.12 [0.03, 0.20], n=340``. An interval that includes
the no-bias value reads "no detectable …", which says that the data could not tell,
not that the bias is absent. ``short`` names a bias in the summary matrix's heading.
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
    short: str = ""  # column heading of the summary matrix (default: ``title``)
    pooled: bool = False  # one estimate shared by a group of judges (e.g. a family's λ)

    @property
    def label(self) -> str:
        return self.short or self.title


_SPECS = (
    BiasSpec(
        "self_preference_eo",
        "Self-preference (equal opportunity)",
        "favours its own answers",
        "is harder on its own answers",
        "no detectable self-preference",
        "difference in the judge's recall of the better answer, own minus other",
        10,
        "Self-preference",
    ),
    BiasSpec(
        "self_preference_dp",
        "Self-preference (demographic parity)",
        "picks its own answer in most comparisons (quality not controlled)",
        "picks the other answer in most comparisons (quality not controlled)",
        "picks its own answer about half the time",
        "2 × P(judge picks its own answer) − 1; compare with the humans' value",
        11,
        "Self-preference (DP)",
    ),
    BiasSpec(
        "family_preference",
        "Family preference",
        "favours answers from its model family",
        "is harder on answers from its model family",
        "no detectable family preference",
        "difference in the judge's recall of the better answer, family minus other",
        20,
        "Family preference",
    ),
    BiasSpec(
        "family_preference_dp",
        "Family preference (demographic parity)",
        "picks its family's answer in most comparisons (quality not controlled)",
        "picks the non-family answer in most comparisons (quality not controlled)",
        "picks its family's answer about half the time",
        "2 × P(judge picks the family member's answer) − 1; compare with the humans' value",
        21,
        "Family preference (DP)",
    ),
    BiasSpec(
        "self_bias",
        "Self-bias (ratings, regression)",
        "rates its own answers higher than the reference warrants",
        "rates its own answers lower than the reference warrants",
        "no detectable self-bias in its ratings",
        "rating points, adjusted for the reference score",
        30,
        "Self-bias (ratings)",
    ),
    BiasSpec(
        "family_bias",
        "Family bias (ratings, regression)",
        "rates its family's answers higher than the reference warrants",
        "rates its family's answers lower than the reference warrants",
        "no detectable family bias in its ratings",
        "rating points, adjusted for the reference score",
        31,
        "Family bias (ratings)",
        pooled=True,
    ),
    BiasSpec(
        "verbosity",
        "Verbosity",
        "prefers longer answers more than humans do",
        "prefers shorter answers more than humans do",
        "no detectable length preference beyond the humans'",
        "probability of picking the longer answer, judge minus human",
        40,
        "Verbosity",
    ),
    BiasSpec(
        "position",
        "Position",
        "prefers the answer shown first",
        "prefers the answer shown second",
        "no detectable position preference",
        "share of the win given to the answer shown first; 0.5 = no preference",
        50,
        "Position",
    ),
    BiasSpec(
        "familiarity",
        "Familiarity (perplexity)",
        "prefers low-perplexity (familiar) answers more than humans do",
        "prefers high-perplexity answers more than humans do",
        "no detectable familiarity preference",
        "probability of picking the lower-perplexity answer, judge minus human",
        60,
        "Familiarity",
    ),
)

BIASES: dict[str, BiasSpec] = {s.key: s for s in _SPECS}

# The biases each analysis of the audit estimates (keyed by its title), the first
# being the one its headline finding reports (and a skip of the analysis leaves empty
# unless it names another).
ANALYSIS_BIASES: dict[str, tuple[str, ...]] = {
    "Self-preference": ("self_preference_eo", "self_preference_dp"),
    "Family preference": ("family_preference", "family_preference_dp"),
    "Verbosity": ("verbosity",),
    "Position": ("position",),
    "Familiarity (perplexity)": ("familiarity",),
    "Favoritism regression (ratings)": ("self_bias", "family_bias"),
}


def estimate_text(estimate: float, low: float, high: float, *, signed: bool = True) -> str:
    """``+0.12 [0.03, 0.20]``: the estimate and its interval in one number format.

    ``signed=False`` drops the '+' (for rates whose no-bias value is not 0).
    """
    digits = 2 if max(abs(estimate), abs(low), abs(high)) >= 0.1 else 3
    est = f"{estimate:+.{digits}f}" if signed else f"{estimate:.{digits}f}"
    lo = f"{low:.{digits}f}"
    hi = f"{high:.{digits}f}"
    return f"{est} [{lo}, {hi}]".replace("-", "\u2212")


def interval_text(estimate: float, low: float, high: float, n: int, *, signed: bool = True) -> str:
    """``+0.12 [0.03, 0.20], n=340`` with one number format for all three."""
    return f"{estimate_text(estimate, low, high, signed=signed)}, n={n}"


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
