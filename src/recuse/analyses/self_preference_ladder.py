"""Self-preference taken apart: from the raw own-win rate to the harmful part.

One table per input, a row per judge and rung (:data:`recuse.metrics.ladder.RUNGS`),
each with a prompt-clustered interval from one shared bootstrap; the harmful excess
(own worse answers chosen beyond the judge's error rate on other models' pairs) is a
finding of its section. The legitimate and harmful rungs are split by what the two
presentation orders did (own in both / split / other in both).
"""

from __future__ import annotations

import pandas as pd

from recuse.analyses.base import Analysis, Context, from_result, judged, needs_verdicts, slug
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.ladder import RUNGS, self_preference_ladder
from recuse.metrics.summary import PairwiseBias
from recuse.report.bias import Bias
from recuse.report.model import Table
from recuse.roster import Roster

HARMFUL_EXCESS = Bias(
    key="self_preference_harmful_excess",
    title="Self-preference, harmful excess",
    short="Harmful self-preference",
    unit=RUNGS["harmful_excess"],
    positive="chooses its own worse answers more often than other models' worse answers",
    negative="chooses its own worse answers less often than other models' worse answers",
    none="no detectable excess",
    order=12,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="share of pairs",
    headline=False,
)


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    reason = needs_verdicts(frame, roster)
    if reason:
        return reason
    if "human" not in frame.columns or frame["human"].isna().all():
        return "no reference labels (human or objective) to tell legitimate from harmful"
    return None


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    rows = judged(inp.frame)
    with ctx.timed(f"self-preference ladder ({inp.name})", ANALYSIS):
        try:
            results, skipped = self_preference_ladder(
                rows, judges=list(o.judges) or None, level=o.level, n_boot=o.n_boot,
                seed=o.seed, min_n=o.min_n, selves=ctx.selves,
            )  # fmt: skip
        except RecuseError as exc:
            ctx.skip(ANALYSIS, str(exc), inp.name, headline=False)
            return
    table = [
        {
            "judge": r.judge,
            "rung": r.metric,
            "definition": RUNGS[r.metric],
            "estimate": r.estimate,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
            "prompts": r.n_clusters,
        }
        for r in results
    ]
    table += [
        {
            "judge": s.judge,
            "rung": s.metric,
            "definition": RUNGS[s.metric],
            "not estimated": s.reason,
        }
        for s in skipped
    ]
    for r in results:
        if r.metric == "harmful_excess":
            ctx.add(ANALYSIS, from_result(ANALYSIS, HARMFUL_EXCESS, r, dataset=inp.name))
    for s in skipped:
        if s.metric == "harmful_excess":
            ctx.skip(ANALYSIS, f"harmful excess: {s.reason}", inp.name, str(s.judge or ""),
                     headline=False, bias=HARMFUL_EXCESS)  # fmt: skip
    if table:
        order = {k: i for i, k in enumerate(RUNGS)}
        frame = pd.DataFrame(table)
        frame = frame.sort_values(
            ["judge", "rung"], key=lambda c: c.map(order) if c.name == "rung" else c
        )
        ctx.part(ANALYSIS).tables.append(
            Table(slug("ladder", inp.name), f"Self-preference, rung by rung — {inp.name}",
                  frame.reset_index(drop=True))
        )  # fmt: skip


ANALYSIS = Analysis(
    id="self-preference-ladder",
    title="Self-preference, taken apart",
    intro=(
        "How much of a judge's preference for its own answers is justified? Rung by rung, "
        "on the pairs that hold its own answer: how often it picks its own answer (no "
        "quality control), how often the reference does, their difference (demographic "
        "parity), equal opportunity (Def. 4.1), then the legitimate "
        "part (own answer better per the reference, and picked) and the harmful part (own "
        "answer worse, yet picked), each split by what the two presentation orders did: its "
        "own answer chosen in both orders, a split between them (position decides, not "
        "choice; the legitimate and harmful rates count it ½), or the other chosen in both. "
        "The harmful excess compares the harmful rate with the "
        "judge's error rate on pairs of two other models' answers: 0 = it chooses its own "
        "wrong answers no more often than anyone's. Judge ties count half; the conditional "
        "rungs leave reference ties out; one prompt-clustered bootstrap for all rungs."
    ),
    table="pairs",
    biases=(HARMFUL_EXCESS,),
    requires="pairs with judge verdicts, generator ids that include the judge's own "
    "answers, and reference labels (human or objective); the baseline also needs labelled "
    "pairs of two other models",
    needs=_needs,
    build=_build,
)
