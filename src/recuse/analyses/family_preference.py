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
    calibrated_first,
    describe_dp,
)
from recuse.biases.family_preference import CALIBRATED as CALIBRATED
from recuse.biases.family_preference import DP as DP
from recuse.biases.family_preference import EO as EO
from recuse.biases.family_preference import HEADING
from recuse.data.inputs import Input
from recuse.metrics.summary import PairwiseBias
from recuse.roster import Roster


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
    heading=HEADING,
    intro=(
        "Self-preference with 'own' replaced by another model of the judge's family (per "
        "the roster), over pairs that do not contain the judge's own answer and whose other "
        "answer comes from outside the family. The headline is calibrated as self-preference "
        "is: the judge's rate of picking its family's answer minus the rate its competence "
        "predicts, from the same competence model, which has a family term beside its "
        "own-answer term (its own answers apart from its family's). Equal opportunity and "
        "demographic parity stay beside it, not adjusted for competence and never flagged."
    ),
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
