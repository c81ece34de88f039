"""Probes: a judge's sensitivity to edits that should not change a verdict, measured
without labels (see :mod:`recuse.probes` and :mod:`recuse.metrics.probes`)."""

from __future__ import annotations

import pandas as pd

from recuse.analyses.base import Analysis, Context, from_result, judged, needs_verdicts, slug
from recuse.biases.probes import HEADING
from recuse.biases.probes import PROBE_BIASES as PROBE_BIASES
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.probes import (
    COMPONENTS,
    DESCRIPTIONS,
    PROBE_COLUMNS,
    VERBOSITY,
    probe_effects,
)
from recuse.metrics.summary import PairwiseBias
from recuse.numbers import share_percent
from recuse.probes.design import RECOGNITION
from recuse.report.model import Table
from recuse.roster import Roster
from recuse.tables import shown

EDITS = [p for p in DESCRIPTIONS if p not in (VERBOSITY, "placebo")]  # versions with an edit

#: what each column of the probe effects table holds (its CSV has no room for them: the
#: interval's level was in none of it)
TABLE_COLUMNS = {
    "judge": "the judge",
    "probe": "the edit (or the verbosity rewrite pair) the effect is of",
    "effect": "the probe's effect: change in the treated answer's share of the win with the "
    "edit, minus the change the placebo makes; 0 = no effect (verbosity: verbose minus "
    "concise rewrite)",
    "ci_low": "the low end of its interval at level (cluster bootstrap over prompts, both "
    "versions of a pair resampled together, BCa; where at most half the prompts hold a "
    "moved pair, expanded for the prompts (pairs moved one way only), and where the pairs "
    "moved both ways, expanded and padded by up to two more effective prompts' variance, "
    "in proportion to the moving variance the fewer way carries; past half the prompts "
    "moving, the expansion and padding fade, to the plain BCa where all move alike (the "
    "moving prompts counted by the size of their net moves); where "
    "the moves cancel on each prompt, the exact bound on the prompts that move; where no "
    "pair moved, the exact bound the prompts allow: the report's method says which)",
    "ci_high": "the high end",
    "level": "the interval's confidence level as a share (0.95: a 95% interval)",
    "n": "base pairs judged in every version the effect reads",
    "prompts": "the prompts the interval resampled",
    **COMPONENTS,
}


#: the columns of the probe-texts table (it had no words: treated read as a yes/no)
TEXT_COLUMNS = {
    "probe": "the version of the pair: original, placebo, an edit, or self-recognition (the "
    "judge asked which answer it wrote)",
    "treated": "a or b: the answer the probes edit, one side for every version of the pair "
    "(on a self-recognition row: the judge's own answer)",
    "prompt": "the prompt",
    "response_a": "answer a as this version shows it",
    "response_b": "answer b as this version shows it",
}


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    if not set(PROBE_COLUMNS) <= set(frame.columns) or frame["probe"].isna().all():
        return "not a probe table (no probe, base_item, treated columns) — run `recuse probe`"
    if not frame["probe"].isin(EDITS).any():
        versions = sorted({str(v) for v in frame["probe"].dropna()})
        return (
            "no edited versions recuse knows in this probe table (its versions: "
            f"{', '.join(shown(v) for v in versions[:8])}; known edits: {', '.join(EDITS)})"
        )
    return needs_verdicts(frame, roster)


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    every = judged(inp.every_judge)
    # judges asked only "which did you write?" have no probe to skip
    every = every[every["judge"].isin(every.loc[every["probe"].isin(EDITS), "judge"].unique())]
    chosen = {str(j) for j in judged(inp.frame)["judge"]}
    rows = every[every["judge"].astype(str).isin(chosen)]
    known = {"original", "placebo", RECOGNITION, *DESCRIPTIONS}
    unknown = sorted({str(p) for p in rows["probe"].dropna()} - known)
    if unknown:
        ctx.part(ANALYSIS).notes.append(
            f"{inp.name}: rows of probe(s) recuse does not know were left out: "
            f"{', '.join(shown(u) for u in unknown[:5])}{' …' if len(unknown) > 5 else ''} "
            f"(known: {', '.join(sorted(DESCRIPTIONS))})"
        )
    with ctx.timed(f"probes ({inp.name})", ANALYSIS):
        try:
            # every judge's probed prompts are resampled, --judge or not (one cluster set
            # for all judges), so the judges chosen read as in the whole audit
            found, missed = probe_effects(every if len(rows) else rows, boot=o.resampling,
                                          min_n=o.min_n)  # fmt: skip
        except RecuseError as exc:
            ctx.skip(ANALYSIS, str(exc), inp.name)
            return
    results = [r for r in found if str(r.judge) in chosen]
    skipped = [s for s in missed if s.judge is None or str(s.judge) in chosen]
    for r in results:
        name = r.metric.removeprefix("probe_")
        fr, pl = r.components.get("flip_rate"), r.components.get("placebo_flip_rate")
        detail = (
            f"flips {share_percent(fr, 0)} vs placebo {share_percent(pl, 0)}"
            if fr is not None and pl is not None
            else ""
        )
        wv, wc = r.components.get("words_verbose"), r.components.get("words_concise")
        if wv is not None and wc is not None:
            detail += f"; rewrites of {wc:.0f} vs {wv:.0f} words on average"
        ctx.add(
            ANALYSIS, from_result(ANALYSIS, PROBE_BIASES[name], r, dataset=inp.name, detail=detail)
        )
    # base pairs that were probed (have the placebo or an edit): the self-recognition
    # pairs' originals are not among them
    edited = rows[rows["probe"].isin([*EDITS, "placebo"])]
    of_judge = edited.groupby("judge")["base_item"].nunique()
    short: dict[tuple[str, int, int], list[str]] = {}
    for r in results:
        total = int(of_judge.get(r.judge, r.n))
        if r.n < total:
            bias = PROBE_BIASES[r.metric.removeprefix("probe_")]
            short.setdefault((str(r.judge), r.n, total), []).append(bias.short)
    for (judge, n, total), names in short.items():
        ctx.part(ANALYSIS).notes.append(
            f"{inp.name}, {judge}: {n} of {total} base pairs had every version judged for "
            f"{', '.join(names)}; the others (a version missing, unparsed or failed) were left out"
        )
    for s in skipped:
        bias = PROBE_BIASES[s.metric.removeprefix("probe_")]
        ctx.skip(ANALYSIS, f"{bias.title}: {s.reason}", inp.name, str(s.judge or ""), bias=bias)
    if results:
        records = [
            {
                "judge": r.judge, "probe": r.metric.removeprefix("probe_"), "effect": r.estimate,
                "ci_low": r.ci_low, "ci_high": r.ci_high, "level": r.level, "n": r.n,
                "prompts": r.n_clusters,
                "flip_rate": r.components.get("flip_rate"),
                "placebo_flip_rate": r.components.get("placebo_flip_rate"),
                "words_concise": r.components.get("words_concise"),
                "words_verbose": r.components.get("words_verbose"),
            }
            for r in results
        ]  # fmt: skip
        ctx.part(ANALYSIS).tables.append(
            Table(slug("probes", inp.name), f"Probe effects — {inp.name}", pd.DataFrame(records),
                  columns=TABLE_COLUMNS)
        )  # fmt: skip
    examples = inp.frame.drop_duplicates("item_id")
    examples = examples[examples["probe"].isin(list(known))]  # no plain or left-out rows
    if len(examples):
        examples = examples[examples["base_item"] == examples["base_item"].iloc[0]]
        cols = [
            c for c in ("probe", "treated", "prompt", "response_a", "response_b") if c in examples
        ]
        ctx.part(ANALYSIS).tables.append(
            Table(slug("probe-texts", inp.name),
                  f"The edited texts of one pair, per probe — {inp.name}", examples[cols],
                  columns={c: TEXT_COLUMNS[c] for c in cols})
        )  # fmt: skip


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Does the judge move when an answer is edited in a way that should not matter? "
        "Each probe edits one answer of a pair (the treated one, chosen by a seeded coin): "
        "a closing paragraph that adds length but no content, a label saying who wrote "
        "it, a fabricated citation, a note that most reviewers preferred it, an "
        "irrelevant sentence, or a model's concise or verbose rewrite of it. The effect "
        "is the change in the treated answer's share of "
        "the win, minus the change a no-op edit (a trailing newline, the placebo) makes: "
        "0 = the judge moves no more than on any change of bytes. Both versions of a pair "
        "are resampled together in the prompt-clustered bootstrap. Tiny judges often "
        "move on the placebo itself: that noise is what the subtraction removes. With "
        "both rewrites, 'verbose vs concise' compares the two rewrites of one source "
        "answer directly (Saito et al. §4): the content is the same, the length is not. "
        "Table columns besides the effect: "
        + "; ".join(f"{k}: {v}" for k, v in COMPONENTS.items())
        + "."
    ),
    requires="a probe table made by `recuse probe` (columns probe, base_item, treated) "
    "with judge verdicts",
    needs=_needs,
    build=_build,
    reads_probes=True,
)
