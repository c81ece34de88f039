"""Self-preference taken apart.

First the calibrated headline's ladder: per judge, the calibrated self-preference and
its parts by the human label of the judge's own pairs (human prefers its own answer /
neither / the other; :data:`recuse.metrics.competence.CALIBRATED_RUNGS`), each
observed own picks minus the competence-predicted own picks on that rung per own pair,
so the parts add up to the headline; from the shared bootstrap. Then the raw ladder
(:data:`recuse.metrics.ladder.RUNGS`), labelled as not adjusted for the judge's
competence; no number of it is a finding (the harmful excess included).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from recuse.analyses.base import (
    Analysis,
    Context,
    from_result,
    judged,
    needs_verdicts,
    slug,
)
from recuse.analyses.self_preference import UNADJUSTED
from recuse.biases.self_preference_ladder import HEADING
from recuse.biases.self_preference_ladder import PARTS as PARTS
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.competence import CALIBRATED, CALIBRATED_RUNGS
from recuse.metrics.ladder import RUNGS, rung_definition, self_preference_ladder
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.verdicts import judged_in_both_orders
from recuse.report.model import FIXED_WORDS, Table
from recuse.roster import Roster

#: the calibrated ladder's rows: the headline, then its parts
_CALIBRATED_ROWS = {
    CALIBRATED: "the calibrated self-preference (the headline): own picks minus the "
    "competence-predicted own picks, per own pair",
    **{k: f"part of the headline: {v}" for k, v in CALIBRATED_RUNGS.items()},
}


#: what the calibrated ladder's columns hold: its "prompts" (73 for gpt-3.5-turbo on
#: llmbar-mtbench) beside "own pairs" 67 read as the own pairs' prompts, which the
#: rung-by-rung table below gives as 46
CALIBRATED_COLUMNS: dict[str, str] = {
    "judge": "the judge",
    "rung": "the headline (self_preference_calibrated) or one of its parts, by the human "
    "label of the own pair",
    "bias": "the key of its finding in report.json",
    "definition": "what the row's estimate is",
    "estimate": "own picks minus the competence-predicted own picks on the row's pairs, per "
    "own pair (probability units; the parts add up to the headline, a part fixed by "
    "construction at its 0)",
    "ci_low": "the low end of its percentile interval at the report's level",
    "ci_high": "the high end",
    "fixed by construction": "a part none of the judge's own pairs is on: its value (0) is "
    "fixed by construction, not a measurement, and its estimate and interval are left "
    "empty; empty: the row is measured",
    "share of own pairs": "the row's pairs as a share of the judge's own pairs (0 to 1)",
    "own pick rate": "how often the judge picks its own answer on the row's pairs",
    "predicted own pick rate": "how often its competence predicts it would",
    "own pairs": "the judge's pairs holding its own answer (n of every row)",
    "prompts": "the prompts the interval resampled: those of all the judge's pairs, own "
    "and other (its competence is learnt on all of them), so more than its own pairs' "
    "prompts",
}

#: what the rung-by-rung table's columns hold
RUNG_COLUMNS: dict[str, str] = {
    "judge": "the judge",
    "rung": "the rung's id",
    "definition": "what the rung is (not adjusted for the judge's competence)",
    "estimate": "the rung's value, in the unit its definition gives (a rate or a "
    "difference of rates)",
    "ci_low": "the low end of its interval at the report's level: a rung that is one rate "
    "(not dp_difference, eo or harmful_excess), the Wilson score interval at the effective "
    "pairs of the cluster bootstrap over prompts; a difference, the bootstrap's BCa interval "
    "(dp_difference's expanded for the prompts' number)",
    "ci_high": "the high end",
    "n": "the pairs the rung is computed on",
    "prompts": "the prompts of those pairs, which its interval resamples",
    "not estimated": "why the rung was not estimated (empty: it was)",
}


def _calibrated_ladder(inp: Input, shared: PairwiseBias | None) -> pd.DataFrame:
    """The calibrated headline and its parts per judge, from the shared bootstrap."""
    if shared is None:
        return pd.DataFrame()
    order = {k: i for i, k in enumerate(_CALIBRATED_ROWS)}
    rows = []
    for r in shared.results:
        if r.metric not in _CALIBRATED_ROWS:
            continue
        c = r.components
        rows.append(
            {
                "judge": r.judge,
                "rung": r.metric,
                # the key of its finding in report.json (the headline's is in the
                # self-preference section)
                "bias": PARTS[r.metric].key if r.metric in PARTS else CALIBRATED,
                "definition": _CALIBRATED_ROWS[r.metric],
                # a part fixed by construction is no measurement: no estimate or interval
                "estimate": np.nan if r.fixed else r.estimate,
                "ci_low": np.nan if r.fixed else r.ci_low,
                "ci_high": np.nan if r.fixed else r.ci_high,
                "fixed by construction": f"{r.estimate:g}, {FIXED_WORDS}" if r.fixed else "",
                "share of own pairs": c.get("rung_share", 1.0),
                "own pick rate": c.get("own_pick_rate", np.nan),
                "predicted own pick rate": c.get("predicted_own_pick_rate", np.nan),
                "own pairs": r.n,
                "prompts": r.n_clusters,
            }
        )
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    frame["_o"] = frame["rung"].map(order)
    return frame.sort_values(["judge", "_o"]).drop(columns="_o").reset_index(drop=True)


#: rungs that say nothing about the judge's own answers (its error rate elsewhere)
_NOT_OWN = frozenset({"baseline_error"})
FIRST = next(iter(RUNGS))  # the first rung's reason says why a judge has none


def left_out_notes(skipped: Sequence[tuple[str | None, str]], *, what: str, why: str) -> list[str]:
    """One line per reason for the judges left out of a per-judge table because nothing
    of theirs was estimated: ``skipped`` holds (judge, reason) pairs, e.g. "3 judges left
    out of the rung-by-rung table of X (a, b, c) — no rung about its own answers could be
    estimated: no judged pairs holding the judge's own answer"."""
    by_reason: dict[str, list[str]] = {}
    for judge, reason in skipped:
        names = by_reason.setdefault(reason, [])  # Skipped.reason: no metric before it
        if judge is not None and str(judge) not in names:
            names.append(str(judge))
    out = []
    for reason, judges in by_reason.items():
        who = "1 judge" if len(judges) == 1 else f"{len(judges)} judges"
        out.append(f"{who} left out of {what} ({', '.join(judges)}) — {why}: {reason}.")
    return out


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    reason = needs_verdicts(frame, roster)
    if reason:
        return reason
    if "human" not in frame.columns or frame["human"].isna().all():
        return "no reference labels (human or objective) to tell legitimate from harmful"
    return None


#: a part's reason where its judge has no calibrated headline (the headline's reason
#: follows): the estimate it is a part of is said in words, not by its id, so that the
#: skip names its own estimate alone (``self_preference_part_…: …``)
NO_HEADLINE = "the calibrated self-preference it is a part of was not estimated"


def _skip_parts(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    """A skip of each part a judge has no estimate of, where the calibrated headline was
    not estimated for it, with the headline's reason: once per (judge, part), and none
    for a part that was estimated. Without it, ``--only self-preference-ladder`` left
    such a judge's parts with no finding and no reason (the reason was the
    self-preference analysis's skip of the headline alone)."""
    if shared is None:
        return
    made = {(r.judge, r.metric) for r in shared.results if r.metric in PARTS}
    why: dict[str | None, str] = {}  # the first reason per judge: each part skipped once
    for s in shared.skipped:
        if s.metric == CALIBRATED:
            why.setdefault(s.judge, s.reason)
    for judge, reason in why.items():
        for metric, bias in PARTS.items():
            if (judge, metric) not in made:  # named by its key, as the gate reads it
                ctx.skip(ANALYSIS, f"{NO_HEADLINE}: {reason}", inp.name, str(judge or ""),
                         headline=False, bias=bias, metric=bias.key)  # fmt: skip


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    for r in shared.results if shared is not None else ():
        if r.metric in PARTS:  # the parts as findings of the section (never flagged)
            part = from_result(ANALYSIS, PARTS[r.metric], r, dataset=inp.name)
            ctx.add(ANALYSIS, part)
    _skip_parts(ctx, inp, shared)
    cal = _calibrated_ladder(inp, shared)
    if not cal.empty:
        ctx.part(ANALYSIS).tables.append(
            Table(slug("calibrated-ladder", inp.name),
                  f"Calibrated self-preference, part by part (the parts add up to it) — {inp.name}",
                  cal, columns=CALIBRATED_COLUMNS)
        )  # fmt: skip
    # every judge's rows, --judge or not (one cluster set for all judges): the rungs of
    # the judges chosen read as in the whole audit, and its EO and DP rungs as their
    # findings from the shared bootstrap
    rows = judged(inp.every_judge)
    with ctx.timed(f"self-preference ladder ({inp.name})", ANALYSIS):
        try:
            results, skipped = self_preference_ladder(
                rows,
                judges=list(o.judges) or None,
                boot=o.resampling,
                min_n=o.min_n,
                selves=ctx.selves,
            )
        except RecuseError as exc:
            ctx.skip(ANALYSIS, str(exc), inp.name, headline=False)
            return
    shown = {r.judge for r in results if r.metric not in _NOT_OWN}
    for note in left_out_notes(
        [(s.judge, s.reason) for s in skipped if s.judge not in shown and s.metric == FIRST],
        what=f"the rung-by-rung table of {inp.name}",
        why="no rung about their own answers could be estimated",
    ):
        ctx.part(ANALYSIS).notes.append(note)
    if o.orders != "both":  # the intro's words on the two orders are not this run's
        ctx.part(ANALYSIS).notes.append(
            f"{o.said('orders')}: every rung of the ladder of {inp.name} reads the "
            f"{o.orders} order's verdict alone; the rungs split by what the two orders did "
            "need both and are not estimated."
        )
    results = [r for r in results if r.judge in shown]
    skipped = [s for s in skipped if s.judge in shown]
    both = set(rows.loc[judged_in_both_orders(rows), "judge"])  # judges with any such pair
    table = [
        {
            "judge": r.judge,
            "rung": r.metric,
            "definition": rung_definition(r.metric, o.orders, both_judged=r.judge in both),
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
            "definition": rung_definition(s.metric, o.orders, both_judged=s.judge in both),
            "not estimated": s.reason,
        }
        for s in skipped
    ]
    if table:
        order = {k: i for i, k in enumerate(RUNGS)}
        frame = pd.DataFrame(table)
        frame = frame.sort_values(
            ["judge", "rung"], key=lambda c: c.map(order) if c.name == "rung" else c
        )
        ctx.part(ANALYSIS).tables.append(
            Table(slug("ladder", inp.name),
                  f"Self-preference, rung by rung, {UNADJUSTED} — {inp.name}",
                  frame.reset_index(drop=True),
                  columns={c: w for c, w in RUNG_COLUMNS.items() if c in frame})
        )  # fmt: skip


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "How much of a judge's preference for its own answers is justified? First the "
        "calibrated self-preference taken apart by the human label of the judge's own pairs "
        "(the human prefers its answer / neither / the other): each part is its own picks "
        "minus the picks its competence predicts on that part's pairs, per own pair, so the "
        "parts add up to the headline. Then the raw ladder, not adjusted for the judge's "
        "competence (high for a strong judge with no bias, low for a weak one) and never "
        "flagged. Rung by rung, "
        "on the pairs that hold its own answer: how often it picks its own answer (no "
        "quality control), how often the reference does, their difference (demographic "
        "parity), equal opportunity (Def. 4.1), then the legitimate "
        "part (own answer better per the reference, and picked) and the harmful part (own "
        "answer worse, yet picked), each split by what the two presentation orders did: its "
        "own answer chosen in both orders, a split between them (position decides, not "
        "choice; the legitimate and harmful rates average the two orders, so a split of two "
        "firm picks counts ½), or the other chosen in both. "
        "The harmful excess compares the harmful rate with the "
        "judge's error rate on pairs of two other models' answers: 0 = it chooses its own "
        "wrong answers no more often than anyone's. Judge ties count half; the conditional "
        "rungs leave reference ties out; one prompt-clustered bootstrap for all rungs."
    ),
    requires="pairs with judge verdicts, generator ids that include the judge's own "
    "answers, and reference labels (human or objective); the baseline also needs labelled "
    "pairs of two other models",
    needs=_needs,
    metrics={CALIBRATED: None, **PARTS},
    build=_build,
)
