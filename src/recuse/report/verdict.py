"""Plain-language verdicts: a finding's bias words followed by its numbers.

A bias is *flagged* when its confidence interval excludes the no-bias value; the
sign of the estimate picks the phrase (:class:`~recuse.report.bias.Bias`, declared
in the analysis that estimates it). The interval and n always follow, e.g.
``favours its own answers: +0.12 [0.03, 0.20], n=340``. An interval that includes
the no-bias value reads "no detectable …", which says that the data could not tell,
not that the bias is absent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recuse import numbers
from recuse.numbers import estimate_text

if TYPE_CHECKING:
    from recuse.report.model import Finding


def interval_text(
    estimate: float,
    low: float,
    high: float,
    n: int,
    *,
    signed: bool = True,
    digits: int | None = None,
    span: tuple[float, float] | None = None,
) -> str:
    """``+0.12 [0.03, 0.20], n=7,340`` with one number format for all three (the count
    with thousands separators, as every table writes it); ``span``: as
    :func:`~recuse.numbers.estimate_text` reads it."""
    text = estimate_text(estimate, low, high, signed=signed, digits=digits, span=span)
    return f"{text}, n={numbers.count(n)}"


#: after the words of a number never flagged (:attr:`Bias.unadjusted`) whose interval
#: excludes the no-bias value: the side it lies on is said, as what it is
UNADJUSTED_NOTE = " (unadjusted, not a flag)"
#: after the words of a section's number beside a headline (not one of the summary's
#: tests, :attr:`Finding.flagged`) whose interval excludes the no-bias value
BESIDE_NOTE = " (not one of the summary's tests: not a flag)"
#: after "no detectable …" when the raw interval excludes the no-bias value but the
#: false-discovery-adjusted test across the summary does not flag it
NOT_AFTER_FDR = (
    " (its interval excludes no bias, but the test is not significant after the "
    "false-discovery adjustment across the summary's tests)"
)


def verdict(finding: Finding) -> str:
    """The summary sentence for one finding.

    The words follow :attr:`Finding.direction` (the flag), with two exceptions so that
    no sentence contradicts its interval: a bias that never flags (an unadjusted number
    such as equal opportunity) whose interval excludes the no-bias value says which side
    it lies on, followed by :data:`UNADJUSTED_NOTE`, instead of "no detectable …"; and
    an unflagged bias whose raw interval excludes it only because the false-discovery
    adjustment did not flag it says so (:data:`NOT_AFTER_FDR`). A significant number
    beside the headline, in its section only, says its side and :data:`BESIDE_NOTE`
    (it is never flagged: :attr:`Finding.flagged`).
    """
    bias, direction, note = finding.bias, finding.direction, ""
    above, below = finding.ci_low > finding.null, finding.ci_high < finding.null
    if bias.kind == "bias" and direction == "none" and (above or below):
        if not bias.flags:
            direction, note = ("positive" if above else "negative"), UNADJUSTED_NOTE
        elif finding.adjusted_away:
            note = NOT_AFTER_FDR
    elif direction != "none" and not finding.headline:
        note = BESIDE_NOTE
    numbers = interval_text(
        finding.estimate,
        finding.ci_low,
        finding.ci_high,
        finding.n,
        signed=finding.signed,
        digits=bias.decimals,
        span=bias.span,
    )
    return f"{bias.words(direction)}{note}: {numbers}{materiality_text(finding)}"


def materiality_text(finding: Finding) -> str:
    """`` — material (≥ 0.05 from no bias)``, `` — small (< 0.05 from no bias)`` or
    `` — negligible (interval within ±0.05 of no bias)``; empty when neither applies."""
    kind, m = finding.materiality, finding.material
    if not kind or m is None:
        return ""
    what = {  # m: the smallest effect worth acting on (Bias.material or --material)
        "material": f"≥ {m:g} from no bias",
        "small": f"< {m:g} from no bias",
        "negligible": f"interval within ±{m:g} of no bias",
    }[kind]
    return f" — {kind} ({what})"
