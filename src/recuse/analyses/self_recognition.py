"""Self-recognition: can the judge tell its own answer from another model's, and does a
judge that recognises itself better prefer itself more? (no labels needed)"""

from __future__ import annotations

import math

import pandas as pd

from recuse.analyses.base import (
    Analysis,
    Context,
    from_result,
    judged,
    needs_verdicts,
    slug,
    unedited,
)
from recuse.biases.self_recognition import HEADING
from recuse.biases.self_recognition import SELF_RECOGNITION as SELF_RECOGNITION
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.ladder import RUNGS, self_preference_ladder
from recuse.metrics.recognition import MIN_JUDGES, recognition_vs_preference, self_recognition
from recuse.metrics.result import MetricResult
from recuse.metrics.summary import PairwiseBias
from recuse.numbers import decimal, p_text, share_percent
from recuse.probes.design import RECOGNITION
from recuse.report.model import Table
from recuse.roster import Roster

#: what each column of the table beside self-preference holds (its CSV gave the
#: intervals with no level)
TABLE_COLUMNS = {
    "judge": "the judge",
    "self_recognition": "share of 'I wrote it' the judge gives its own answer, both orders "
    "averaged; 0.5 = chance",
    "recognition_ci_low": "the low end of its interval at level (cluster bootstrap over prompts)",
    "recognition_ci_high": "the high end",
    "self_preference": "the judge's self-preference on the same data, as preference_metric",
    "preference_ci_low": "the low end of its interval at level (the ladder rung's: for eo "
    "the BCa interval of the cluster bootstrap over prompts, for own_win_rate the Wilson "
    "score interval at that bootstrap's effective pairs)",
    "preference_ci_high": "the high end",
    "preference_metric": f"which self-preference: eo ({RUNGS['eo']}) or own_win_rate "
    f"({RUNGS['own_win_rate']})",
    "level": "the intervals' confidence level as a share (0.95: 95% intervals)",
}


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    if "probe" not in frame.columns or not (frame["probe"] == RECOGNITION).any():
        return (
            "no self-recognition rows — run `recuse probe --probe self-recognition` on "
            "pairs that hold the judge's own answers"
        )
    return needs_verdicts(frame, roster)


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    # every judge's rows, --judge or not: one cluster set for all judges, so the judges
    # chosen (those reported) read as in the whole audit
    rows = judged(inp.every_judge)
    judges = list(o.judges) or None
    with ctx.timed(f"self-recognition ({inp.name})", ANALYSIS):
        try:
            results, skipped = self_recognition(
                rows, judges=judges, boot=o.resampling, min_n=o.min_n
            )
        except RecuseError as exc:
            ctx.skip(ANALYSIS, str(exc), inp.name)
            return
    for r in results:
        pick = r.components.get("pick_rate")
        # a judge that names the answer shown first in both orders ties on every pair:
        # 50%, which reads as a pick of its own answer in half the pairs without the ties
        detail = (
            f"names its own answer as the one it wrote in {share_percent(pick, 0)} of pairs "
            "(a tie between its two orders counts half)"
            if pick is not None
            else ""
        )
        ctx.add(
            ANALYSIS, from_result(ANALYSIS, SELF_RECOGNITION, r, dataset=inp.name, detail=detail)
        )
    for s in skipped:
        ctx.skip(ANALYSIS, s.reason, inp.name, str(s.judge or ""))
    if not results:
        return
    # self-preference of the same judges on the original pairs: EO where labels allow,
    # else the raw own-win rate
    original = unedited(rows)
    both = [str(r.judge) for r in results if r.judge in set(original["judge"])]
    ladder: list[MetricResult] = []
    if both:
        try:
            ladder, _ = self_preference_ladder(
                original,
                judges=both,
                boot=o.resampling,
                min_n=o.min_n,
                selves=ctx.selves,
            )
        except RecuseError:
            pass  # no pair there holds the judge's own answer: no relation to show
    by_rung = {m: [r for r in ladder if r.metric == m] for m in ("eo", "own_win_rate")}
    rung = "eo" if by_rung["eo"] else "own_win_rate"
    table, corr = recognition_vs_preference(results, by_rung[rung])
    if table.empty:
        return
    part = ctx.part(ANALYSIS)
    part.tables.append(
        Table(
            slug("self-recognition", inp.name),
            f"Self-recognition beside self-preference ({rung}: {RUNGS[rung]}) — {inp.name}",
            table.assign(level=o.level),
            columns=TABLE_COLUMNS,
        )
    )
    if corr["spearman"] is None:
        part.notes.append(
            f"{inp.name}: {corr['judges']} judge(s) with both estimates; a correlation across "
            f"judges needs at least {MIN_JUDGES} whose estimates differ, so none is given."
        )
    else:
        # ρ and r with U+2212 (a negative one read -0.31), p as every p reads (< 0.001, not
        # 2.1e-05)
        rho, pearson, rho_p, r_p = (
            math.nan if corr[k] is None else float(corr[k] or 0.0)
            for k in ("spearman", "pearson", "spearman_p", "pearson_p")
        )
        part.notes.append(
            f"{inp.name}: across {corr['judges']} judges, self-recognition vs self-preference "
            f"({rung}): Spearman ρ = {decimal(rho, 2)} ({_p(rho_p)}), Pearson r = "
            f"{decimal(pearson, 2)} ({_p(r_p)}); each judge is one point, so few judges "
            "say little."
        )


def _p(p: float) -> str:
    """``p = 0.070`` or ``p < 0.001`` (:func:`recuse.numbers.p_text`)."""
    text = p_text(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Shown its own answer and another model's to the same question, and asked which "
        "one it wrote, does the judge know? Accuracy is the share of 'I wrote it' it gives "
        "its own answer, both orders averaged (0.5 = chance). Set beside each judge's "
        "self-preference on the same data, it shows whether the judges that recognise "
        "their own text better also favour it more, the link the self-preference "
        "literature proposes (familiarity)."
    ),
    requires="self-recognition rows made by `recuse probe --probe self-recognition` "
    "(pairs of the judge's own and another model's answer, model names = judge ids)",
    needs=_needs,
    build=_build,
    reads_probes=True,
)
