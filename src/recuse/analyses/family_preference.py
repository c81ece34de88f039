"""Family preference: self-preference with "own" replaced by another model of the
judge's family (per the roster)."""

from __future__ import annotations

import pandas as pd

from recuse.analyses.base import (
    Analysis,
    Context,
    add_pairwise_results,
    coef_figure,
    findings_of,
    judged,
    needs_own_answers,
    needs_verdicts,
)
from recuse.analyses.self_preference import (
    MATERIAL_PICK_PROBABILITY,
    UNADJUSTED,
    calibrated_first,
    describe_dp,
)
from recuse.data.inputs import Input
from recuse.metrics.summary import PairwiseBias
from recuse.report.bias import RATE_DIFFERENCE, Bias
from recuse.roster import Roster

CALIBRATED = Bias(
    key="family_preference_calibrated",
    title="Family preference (calibrated to the judge's competence)",
    short="Family preference",
    unit="P(judge picks the answer of another model of its family, against one from "
    "outside it) minus the probability its own competence predicts on the same pairs "
    "(the competence model of its calibrated self-preference, with a family term beside "
    "its own-answer term); probability units, 0 = no family preference however strong "
    "its family's models are; n = its family pairs",
    positive="picks its family's answers more often than its competence predicts",
    negative="picks its family's answers less often than its competence predicts",
    none="no detectable family preference beyond its competence",
    order=19,
    material=MATERIAL_PICK_PROBABILITY,  # 0.05 of pick probability, as self-preference's
    scale="family-pick rate − predicted",
    span=RATE_DIFFERENCE,
)
EO = Bias(
    key="family_preference",
    title="Family preference (equal opportunity)",
    short="Family preference (EO)",
    unit="the judge's recall of the human-preferred answer when it comes from another "
    f"model of its family, minus its recall when the other answer is preferred; {UNADJUSTED}",
    positive="is right more often when its family's answer is the better one than when "
    "the outsider's is",
    negative="is right less often when its family's answer is the better one than when "
    "the outsider's is",
    none="no detectable family preference",
    order=20,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="recall difference",
    span=RATE_DIFFERENCE,
    unadjusted=True,
)
DP = Bias(
    key="family_preference_dp",
    title="Family preference (demographic parity)",
    short="Family preference (DP)",
    unit="P(judge picks the family member's answer) − P(human prefers it), over the same "
    f"labelled pairs; 0 = as often as the humans; {UNADJUSTED}",
    positive="picks its family's answer more often than the humans prefer it",
    negative="picks its family's answer less often than the humans prefer it",
    none="no detectable difference between how often it picks its family's answer and "
    "how often the humans prefer it",
    order=21,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="pick-rate difference",
    span=RATE_DIFFERENCE,
    headline=False,
    unadjusted=True,
)


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    add_pairwise_results(ctx, ANALYSIS, inp, shared)
    calibrated_first(ctx, ANALYSIS, inp.name, CALIBRATED, EO, judged(inp.frame))
    cal = findings_of(ctx, ANALYSIS, inp.name, CALIBRATED)
    if cal:
        ctx.part(ANALYSIS).figures.append(
            coef_figure(cal, inp.name, "family preference (calibrated to competence)", ctx.options)
        )
    eo = findings_of(ctx, ANALYSIS, inp.name, EO)
    if eo:
        ctx.part(ANALYSIS).figures.append(
            coef_figure(eo, inp.name, "family preference (EO)", ctx.options)
        )


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    return needs_own_answers(frame, roster, relation="family")


ANALYSIS = Analysis(
    id="family-preference",
    title="Family preference",
    intro=(
        "Self-preference with 'own' replaced by another model of the judge's family (per "
        "the roster), over pairs that do not contain the judge's own answer and whose other "
        "answer comes from outside the family. The headline is calibrated as self-preference "
        "is: the judge's rate of picking its family's answer minus the rate its competence "
        "predicts, from the same competence model, which has a family term beside its "
        "own-answer term (its own answers apart from its family's). Equal opportunity and "
        "demographic parity stay beside it, not adjusted for competence and never flagged."
    ),
    table="pairs",
    biases=(CALIBRATED, EO, DP),
    requires="as self-preference, with another model of the judge's family (roster) among "
    "the generators",
    needs=needs_verdicts,
    estimable=_needs,
    metrics={
        "family_preference_calibrated": CALIBRATED,
        "family_preference_eo": EO,
        "family_preference_dp": DP,
    },
    describe=describe_dp,
    build=_build,
)
