"""Familiarity (Wataoka et al., Figures 3–5): does the judge prefer answers that are more
familiar to it (lower perplexity under its own model) beyond the human labels?"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from recuse.analyses.base import (
    Analysis,
    Context,
    coef_figure,
    estimate_columns,
    findings_of,
    from_result,
    slug,
    table_row,
)
from recuse.analyses.base import judged as judged_rows
from recuse.biases.familiarity import FAMILIARITY as FAMILIARITY
from recuse.biases.familiarity import HEADING
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.familiarity import (
    familiarity_bias,
    log_perplexity_by_model,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve,
    perplexity_curve_by_self,
)
from recuse.metrics.familiarity_mediation import familiarity_mediation
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.verbosity import OPEN_BIN, for_files
from recuse.numbers import decimal, ends_apart_decimals, percent, signed
from recuse.report import figures as fig
from recuse.report.model import Table
from recuse.roster import Roster, self_keys


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    has = {"ppl_a", "ppl_b"} <= set(frame.columns) and bool(
        (frame["ppl_a"].notna() & frame["ppl_b"].notna()).any()
    )
    if not has:
        return (
            "no perplexities in this data (columns ppl_a, ppl_b): compute each response's "
            "perplexity under the judge first (recuse judge ... --perplexity)"
        )
    return None


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    parts = ctx.part(ANALYSIS)
    judged = judged_rows(inp.frame)
    judges = sorted(str(j) for j in judged["judge"].unique())
    with ctx.timed(f"familiarity bias ({inp.name})", ANALYSIS):
        for judge in judges:
            try:
                r = familiarity_bias(judged, judge=judge, boot=o.resampling, min_n=o.min_n)
            except RecuseError as exc:
                ctx.skip(ANALYSIS, f"familiarity_bias: {exc}", inp.name, judge)
                continue
            ctx.add(
                ANALYSIS,
                from_result(
                    ANALYSIS,
                    FAMILIARITY,
                    r,
                    dataset=inp.name,
                    detail="log-odds per nat of log-perplexity difference",
                ),
            )
    findings = findings_of(ctx, ANALYSIS, inp.name, FAMILIARITY)
    if findings:
        parts.figures.append(coef_figure(findings, inp.name, "familiarity bias", o))
    if judges:
        with ctx.timed(f"familiarity curves ({inp.name})", ANALYSIS):
            _curves(ctx, inp, judged, judges)
        with ctx.timed(f"familiarity mediation ({inp.name})", ANALYSIS):
            _mediation(ctx, inp, judged, judges)


_MEDIATION_TITLE = "How much of the calibrated self-preference is familiarity"


def table_words(name: str, frame: pd.DataFrame, level: float) -> dict[str, str]:
    """What each column of the section's table ``name`` holds (its CSV and report.json;
    the five tables had no words: a curve's ``mean`` read as no rate of anything, its
    ``bin_low`` in no unit), for the columns ``frame`` has."""
    interval = (
        f"the low end of the mean's {percent(level)} interval (cluster bootstrap over prompts)"
    )
    spread = "the standard deviation of that value over them (empty for one)"
    curve = {
        "judge": "the judge whose verdicts and perplexities the row is of",
        "subset": "own: pairs holding the judge's own answer, turned so that a is its own "
        "(d = log ppl_own − log ppl_other); other: pairs holding neither, as given",
        "rater": "judge: the judge's verdicts; human: the human labels of the same pairs",
        "bin_low": "the bin's lower end, in it: d = log ppl_a − log ppl_b under the judge, "
        "nats per token (d < 0: a is the more familiar to it); empty (null in JSON) for the "
        "first bin: no lower edge, the first bin is open — every pair below bin_high",
        "bin_high": f"the bin's upper end, not in it; {OPEN_BIN}",
        "n": "the pairs in the bin",
        "n_clusters": "the prompts of those pairs (the interval resamples prompts)",
        "mean": "the rater's mean P(a better) over the bin's pairs (the judge's verdict for a, "
        "its orders averaged; the human label, a tie ½): a's win rate, 0.5 = even",
        "sd": spread,
        "ci_low": interval + "; empty with a note where the bin has too few pairs",
        "ci_high": "the high end",
        "note": "why the row has no interval; empty: it has one",
    }
    by_model = {
        **curve,
        "judge": "the judge the perplexities are under",
        "model": "the model that wrote the responses",
        "own": "whether that model is the judge itself (its own responses)",
        "n": "its distinct responses (each once, however many pairs hold it)",
        "n_clusters": "the prompts of those responses (the interval resamples prompts)",
        "mean": "their mean log-perplexity under the judge, nats per token (lower: more "
        "familiar to the judge)",
        "ci_low": interval + "; empty with a note under the fewest responses estimated",
    }
    gap = {
        **estimate_columns(frame),
        "mean_log_ppl_own": "the mean log-perplexity of the judge's own responses under it, "
        "nats per token (each distinct response once)",
        "mean_log_ppl_other": "the same of the other models' responses",
        "n own responses": "the judge's own distinct responses",
        "n responses of other models": "the other models' distinct responses",
        "method": "how the estimate and its interval were worked out",
    }
    mediation = {
        "judge": "the judge",
        "part": "familiarity_indirect: the part of the calibrated self-preference that the "
        "judge's lower perplexity on its own answers explains; familiarity_direct: the "
        "rest; familiarity_share: indirect ÷ the calibrated self-preference",
        "definition": "how the part is worked out",
        "estimate": "indirect and direct: in the calibrated self-preference's unit (own "
        "picks minus the predicted, per own pair), adding up to it; share: a ratio (0.8: "
        "familiarity explains 80% of it)",
        "ci_low": f"the low end of its {percent(level)} percentile interval (cluster "
        "bootstrap over prompts)",
        "ci_high": "the high end",
        "calibrated self-preference": "the judge's calibrated self-preference, which the "
        "two parts add up to",
        "own − other log-perplexity (nats)": "the mean log-perplexity of its own answers "
        "minus the other answers' on the pairs holding its own (nats per token; negative: "
        "its own the more familiar)",
        "n": "the pairs the estimate rests on",
        "prompts": "their prompts (the interval resamples them)",
        "warnings": "what to know before trusting the interval",
    }
    words = {
        "perplexity-curve": curve,
        "perplexity-curve-by-self": curve,
        "own-perplexity-gap": gap,
        "log-perplexity-by-model": by_model,
        "mediation": mediation,
    }[name]
    return {c: words[c] for c in map(str, frame.columns) if c in words}


def _authored(judged: pd.DataFrame, judge: str, selves: dict[str, str] | None) -> bool:
    """Whether a response among ``judge``'s pairs is its own (``selves``: what counts as
    the judge itself, as the self-preference metrics count it)."""
    rows = judged[judged["judge"] == judge]
    me = self_keys(pd.Series([judge], dtype=object), selves).iloc[0]
    return bool(
        self_keys(rows["model_a"], selves).eq(me).any()
        or self_keys(rows["model_b"], selves).eq(me).any()
    )


def _mediation(ctx: Context, inp: Input, judged: pd.DataFrame, judges: Sequence[str]) -> None:
    """Per judge that is also an author: the calibrated self-preference split into the
    part its lower perplexity on its own answers explains and the rest
    (:func:`~recuse.metrics.familiarity_mediation.familiarity_mediation`); a section table."""
    o = ctx.options
    rows = []
    for judge in judges:
        if not _authored(judged, judge, ctx.selves):
            continue  # not an author here: no self-preference to split
        try:
            # the headline's competence model: κ per category, family term, who is self
            results = familiarity_mediation(
                judged,
                judge=judge,
                boot=o.resampling,
                min_n=o.min_n,
                families=ctx.roster,
                selves=ctx.selves,
            )
        except RecuseError as exc:
            ctx.part(ANALYSIS).notes.append(
                f"{inp.name}, {judge}: no familiarity mediation ({exc})"
            )
            continue
        c = results[0].components
        for r in results:
            rows.append(
                {
                    "judge": judge,
                    "part": r.metric,
                    "definition": r.method.split("; ")[0],
                    "estimate": r.estimate,
                    "ci_low": r.ci_low,
                    "ci_high": r.ci_high,
                    "calibrated self-preference": c["calibrated_self_preference"],
                    "own − other log-perplexity (nats)": c["own_log_ppl_gap"],
                    "n": r.n,
                    "prompts": r.n_clusters,
                    # e.g. the calibrated estimate's "extrapolated competence", which
                    # the direct part and the share rest on
                    "warnings": "; ".join(r.warnings),
                }
            )
    if rows:
        ctx.part(ANALYSIS).tables.append(
            Table(slug("mediation", inp.name), f"{_MEDIATION_TITLE} — {inp.name}",
                  pd.DataFrame(rows),
                  columns=table_words("mediation", pd.DataFrame(rows), ctx.options.level))
        )  # fmt: skip


_D_LABEL = "d = log ppl_a − log ppl_b under the judge (d < 0: a more familiar)"


def _bin_label(low: float, high: float) -> str:
    if not math.isfinite(low):
        return f"< {high:g}"
    if not math.isfinite(high):
        return f"> {low:g}"
    return f"{low:g} to {high:g}"


def _binned_series(
    curve: pd.DataFrame, keys: Sequence[tuple[str, dict[str, str]]], min_n: int
) -> tuple[list[str], list[fig.Series]]:
    """Curve rows as plot series on the bins where some curve has ``min_n`` pairs (NaN
    where this one has fewer)."""
    shown = curve[curve["n"] >= min_n]
    grid = shown[["bin_low", "bin_high"]].drop_duplicates().sort_values("bin_low").to_numpy(float)
    labels = [_bin_label(lo, hi) for lo, hi in grid]
    series = []
    for label, where in keys:
        rows = curve
        for col, value in where.items():
            rows = rows[rows[col] == value]
        rows = rows[rows["n"] >= min_n]
        if rows.empty:
            continue
        cols = ["bin_low", "mean", "ci_low", "ci_high"]
        by_bin = {float(r[0]): r[1:] for r in rows[cols].to_numpy(float)}
        none = np.full(3, np.nan)
        values = np.array([by_bin.get(float(low), none) for low, _high in grid])
        y, low, high = (values[:, k].tolist() for k in range(3))
        series.append(fig.Series(label, y, low, high))
    return labels, series


def _curves(ctx: Context, inp: Input, judged: pd.DataFrame, judges: Sequence[str]) -> None:
    """Figures 3–5 of the self-preference paper, per judge, with their tables."""
    o = ctx.options
    parts = ctx.part(ANALYSIS)
    boot, min_n = o.resampling, o.min_n
    edges = perplexity_bins()
    band = (
        f"bins with at least {o.min_n} pairs; bands: {percent(o.level)} cluster-bootstrap intervals"
    )
    curves, by_self, gaps, by_model = [], [], [], []
    for judge in judges:
        # Figure 3: win rate of a by perplexity difference, judge and humans
        try:
            curve = perplexity_curve(judged, judge=judge, edges=edges, boot=boot, min_n=min_n)
        except RecuseError as exc:
            ctx.skip(ANALYSIS, f"perplexity curve (Figure 3): {exc}", inp.name, judge, False)
        else:
            curves.append(curve)
            labels, series = _binned_series(
                curve, [(judge, {"rater": "judge"}), ("humans", {"rater": "human"})], o.min_n
            )
            if series:
                parts.figures.append(
                    fig.curves(
                        labels, series, id=slug("ppl-curve", inp.name, judge),
                        title=f"Preference by perplexity difference — {judge}, {inp.name}",
                        xlabel=_D_LABEL, ylabel="share preferring response a", reference=0.5,
                        caption=(
                            f"Mean verdict for a (judge) and mean human label, by bin of d "
                            f"(Figure 3 of the self-preference paper); {band}. A judge that "
                            "favours familiar answers beyond the humans falls more steeply "
                            "from left to right than the human curve."
                        ),
                        format=o.figure_format,
                    )
                )  # fmt: skip
        # Figure 4: the same, pairs with the judge's own response vs the others
        try:
            split = perplexity_curve_by_self(
                judged, judge=judge, edges=edges, boot=boot, min_n=min_n, selves=ctx.selves
            )
        except RecuseError as exc:
            ctx.skip(
                ANALYSIS, f"perplexity curve by own response (Figure 4): {exc}", inp.name,
                judge, False,
            )  # fmt: skip
        else:
            by_self.append(split)
            keys = [
                (f"{rater}, {subset} pairs", {"rater": r, "subset": subset})
                for subset in ("own", "other")
                for r, rater in (("judge", judge), ("human", "humans"))
            ]
            labels, series = _binned_series(split, keys, o.min_n)
            if series:
                parts.figures.append(
                    fig.curves(
                        labels, series, id=slug("ppl-curve-self", inp.name, judge),
                        title=f"Own vs other pairs by perplexity difference — {judge}, "
                        f"{inp.name}",
                        xlabel="d (own pairs: log ppl_own − log ppl_other; others: a − b)",
                        ylabel="share preferring the own (or a) response", reference=0.5,
                        caption=(
                            f"Figure 4 of the self-preference paper: pairs holding {judge}'s "
                            "own response (oriented own vs other) and pairs holding neither; "
                            f"{band}. Self-preference beyond familiarity shows as the own "
                            "curve lying above the other curve at the same d."
                        ),
                        format=o.figure_format,
                    )
                )  # fmt: skip
        # Figure 5: mean log-perplexity of the judge's own responses vs the others'
        if not _authored(judged, judge, ctx.selves):
            ctx.skip(
                ANALYSIS,
                "own vs others' log-perplexity (Figure 5): no response of the judge's own "
                "model among the pairs (model_a/model_b never the judge itself: its id, or "
                "its model line with --self-scope line)",
                inp.name, judge, False,
            )  # fmt: skip
            continue
        results, skipped = own_perplexity_gap(
            judged, judge=judge, boot=boot, min_n=min_n, selves=ctx.selves
        )
        for k in skipped:
            ctx.skip(
                ANALYSIS, f"own vs others' log-perplexity (Figure 5): {k.reason}",
                inp.name, judge, False,
            )  # fmt: skip
        for r in results:
            rec = {k: v for k, v in table_row(r, inp.name, "").items()
                   if k not in ("components", "n_of")}  # fmt: skip
            rec.update(r.components)
            rec.update({f"n {k}": v for k, v in r.counts.items()})
            gaps.append(rec)
            d = ends_apart_decimals(r.ci_low, r.ci_high, 3)  # ends that differ read apart
            parts.notes.append(
                f"{inp.name}, {judge}: mean log-perplexity of its own responses "
                f"{decimal(r.components['mean_log_ppl_own'], 3)} vs other models' "
                f"{decimal(r.components['mean_log_ppl_other'], 3)}; gap "
                f"{signed(r.estimate, d)} [{decimal(r.ci_low, d)}, {decimal(r.ci_high, d)}] "
                f"({percent(o.level)}; negative: its own "
                "answers are more familiar to it)"
            )
        if not results:
            continue
        models = log_perplexity_by_model(
            judged, judge=judge, boot=boot, min_n=min_n, selves=ctx.selves
        )
        by_model.append(models)
        parts.figures.append(
            fig.bars(
                [f"{m} (own)" if own else str(m) for m, own in zip(models["model"],
                                                                   models["own"], strict=True)],
                models["mean"].astype(float).tolist(), models["ci_low"].astype(float).tolist(),
                models["ci_high"].astype(float).tolist(), highlight=models["own"].tolist(),
                id=slug("ppl-by-model", inp.name, judge),
                title=f"Mean log-perplexity by generator under {judge} — {inp.name}",
                xlabel="mean log-perplexity of the responses (nats per token)",
                caption=(
                    f"Figure 5 of the self-preference paper: each distinct response once; "
                    f"red: {judge}'s own responses; whiskers: {percent(o.level)} cluster-bootstrap "
                    f"intervals (none under {o.min_n} responses). Lower: more familiar to "
                    "the judge."
                ),
                format=o.figure_format,
            )
        )  # fmt: skip
    for name, title, frames, show in (
        ("perplexity-curve", "Win rate of a by perplexity difference (Figure 3)", curves, False),
        ("perplexity-curve-by-self", "The same, own-response pairs vs others (Figure 4)",
         by_self, False),
        ("own-perplexity-gap", "Own minus other models' mean log-perplexity (Figure 5)", gaps,
         True),
        ("log-perplexity-by-model", "Mean log-perplexity by generator (Figure 5)", by_model,
         False),
    ):  # fmt: skip
        if not frames:
            continue
        table = (
            pd.DataFrame(frames)
            if isinstance(frames[0], dict)
            else pd.concat(frames, ignore_index=True)
        )
        parts.tables.append(
            Table(
                slug(name, inp.name),
                f"{title} — {inp.name}",
                for_files(table),  # the open bins' edges empty, as their words say
                show,
                columns=table_words(name, table, o.level),
            )
        )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Does the judge prefer answers that are more familiar to it (lower perplexity) "
        "beyond the human labels? Perplexity is each response's, given its prompt, under "
        "the judge's own model; d = log ppl_a − log ppl_b. Familiarity bias: the human "
        "slope minus the judge's slope of fractional-logit fits of the preference for a "
        "on d (log-odds per nat; positive: the judge follows familiarity more than the "
        "humans). The curves are the win rate of a by bin of d for the judge and the "
        "humans (Figure 3 of the self-preference paper), the same split into pairs with "
        "and without the judge's own answer (Figure 4), and the mean log-perplexity of "
        "each generator's answers under the judge (Figure 5): lower for its own answers "
        "means they are more familiar to it."
    ),
    requires="pairs with perplexities ppl_a/ppl_b under the judge (recuse judge "
    "--perplexity; none of the built-in datasets has them) and human labels; Figures 4-5 "
    "also need the judge's own responses among the pairs",
    needs=_needs,
    build=_build,
)
