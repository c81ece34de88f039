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

if TYPE_CHECKING:
    from recuse.report.model import Finding


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
    (it is never flagged: :attr:`Finding.flagged`). A value :attr:`Finding.fixed` by
    construction has no reading: its bias's title, its value and that it is not a
    measurement (:data:`~recuse.report.model.FIXED_WORDS`), with no n: no pairs measured
    it (a ladder part on which none of the judge's own pairs is read "n=67", its own
    pairs' count, as if the part's sample; the page's n cell says "none: not a
    measurement" too). Which of the judge's several estimates of the bias it is
    (:attr:`Finding.scope`) follows the bias's words: ``certified coverage (a quality
    score, not a bias), target agreement ≥ 85%: 0.0% [0.0%, 1.5%], n=200``.
    """
    scope = f", {finding.scope}" if finding.scope else ""
    if finding.fixed:  # no reading of a value that is not measured (Finding.text says so)
        return f"{finding.bias.title}{scope}: {finding.text}"
    bias, direction, note = finding.bias, finding.direction, ""
    above, below = finding.ci_low > finding.null, finding.ci_high < finding.null
    if bias.kind == "bias" and direction == "none" and (above or below):
        if not bias.flags:
            direction, note = ("positive" if above else "negative"), UNADJUSTED_NOTE
        elif finding.adjusted_away:
            note = NOT_AFTER_FDR
    elif direction != "none" and not finding.headline:
        note = BESIDE_NOTE
    shown = f"{finding.text}, n={numbers.count(finding.n)}"  # as the finding's cells write it
    return f"{bias.words(direction)}{scope}{note}: {shown}{materiality_text(finding)}"


def materiality_text(finding: Finding) -> str:
    """`` — material (estimate ≥ 0.05 from no bias)``, `` — small (estimate < 0.05 from
    no bias)`` or `` — negligible (interval within ±0.05 of no bias)``; empty when neither
    applies.
    Where the sentence's rounded numbers read on the threshold or past it, those numbers
    follow with the decimals that put them on their side (:func:`_on_its_side`)."""
    kind, m = finding.materiality, finding.material
    if not kind or m is None:
        return ""
    what = {  # m: the smallest effect worth acting on (Bias.material or --material)
        "material": f"estimate ≥ {m:g} from no bias",
        "small": f"estimate < {m:g} from no bias",
        "negligible": f"interval within ±{m:g} of no bias",
    }[kind]
    return f" — {kind} ({what}{_on_its_side(finding, m)}{_reaches(finding, m)})"


def _reaches(finding: Finding, m: float) -> str:
    """``; its interval reaches 0.035 from it`` for a "material" finding whose interval's
    near end lies within ``m`` of no bias: the estimate is that far, the interval not
    (o1-mini's position 0.56 [0.53, 0.58] on judgebench read "material (≥ 0.05 from no
    bias)" where `recuse gate --max position=0.05` says INCONCLUSIVE); "" otherwise."""
    if finding.materiality != "material" or finding.bias.percent:
        return ""
    above = finding.estimate > finding.null
    near = finding.ci_low - finding.null if above else finding.null - finding.ci_high
    return f"; its interval reaches {near:.2g} from it" if near < m * (1 - 1e-9) else ""


def _on_its_side(finding: Finding, m: float) -> str:
    """``; estimate +0.0496`` for a "small" finding whose estimate the sentence writes
    ``+0.050``, ``m`` or more from no bias (and ``; low end −0.04996`` for a "negligible"
    one's end written on ``null ± m``), as :func:`recuse.numbers.decimal_beside` writes
    each; "" where the written numbers read on their side. Not "material": its estimate
    is ``m`` or more from no bias (up to float noise) and rounding never writes it nearer.
    """
    est_text, interval = finding.parts
    if finding.bias.percent or finding.materiality not in ("small", "negligible"):
        return ""
    low_text, high_text = interval[1:-1].split(", ")
    edges = (finding.null - m, finding.null + m)
    if finding.materiality == "small":
        named = [("estimate", finding.estimate, est_text, finding.signed)]
    else:
        named = [("low end", finding.ci_low, low_text, False)]
        named.append(("high end", finding.ci_high, high_text, False))
    out = []
    for name, value, text, signed in named:
        if "<" in text or ">" in text:  # a bound past the most decimals: beyond any digit
            continue
        digits = len(text.rpartition(".")[2])
        written = numbers.decimal_beside(value, edges, digits, signed=signed)
        if written != text:
            out.append(f"{name} {written}")
    return "".join(f"; {o}" for o in out)
