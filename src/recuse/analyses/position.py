"""Position: does the judge prefer whichever answer is shown first?"""

from __future__ import annotations

from recuse.analyses.base import (
    Analysis,
    Context,
    add_pairwise_results,
    coef_figure,
    findings_of,
    needs_both_orders,
    needs_verdicts,
)
from recuse.biases.position import HEADING
from recuse.biases.position import POSITION as POSITION
from recuse.data.inputs import Input
from recuse.metrics.summary import PairwiseBias


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    add_pairwise_results(ctx, ANALYSIS, inp, shared)
    found = findings_of(ctx, ANALYSIS, inp.name, POSITION)
    if found:
        ctx.part(ANALYSIS).figures.append(
            coef_figure(found, inp.name, "first-position rate", ctx.options)
        )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Does the judge prefer whichever answer is shown first? First-position rate: the "
        "mean share of the win given to the first-shown answer over pairs judged in both "
        "orders; 0.5 = no preference. Consistency is the share of pairs with the same pick "
        "in both orders; flip rate the share whose winner reverses."
    ),
    requires="pairs with verdicts in both presentation orders (p_a_first and p_a_second)",
    needs=needs_verdicts,
    estimable=needs_both_orders,
    metrics={"first_position_rate": POSITION, "position_consistency": None, "flip_rate": None},
    build=_build,
)
