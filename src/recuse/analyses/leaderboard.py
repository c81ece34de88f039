"""Bias-adjusted leaderboard: what would the ranking be without the judge's biases?

A Bradley–Terry model of the judges' pairwise verdicts, fitted raw and with covariates
for the biases (length, markdown, position, own answer, family); per system the raw
and adjusted strength and rank with prompt-clustered intervals, Kendall's τ between
the orderings, and each covariate's coefficient as a (non-headline) finding. Where a
judge compares every system with one fixed baseline (AlpacaEval), AlpacaEval 2's
length-controlled win rate too. See :mod:`recuse.metrics.bradley_terry` and
:mod:`recuse.metrics.length_controlled` for the formulas.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import pandas as pd

from recuse.analyses.base import Analysis, Context, judged, needs_verdicts, slug, to_finding
from recuse.biases.leaderboard import COVARIATE_BIASES as COVARIATE_BIASES
from recuse.biases.leaderboard import HEADING, SELF_TERMS
from recuse.biases.leaderboard import LONGER as LONGER
from recuse.data.inputs import Input
from recuse.errors import EstimationError
from recuse.metrics.bradley_terry import VARIANTS, leaderboard
from recuse.metrics.estimate import extrapolated_words
from recuse.metrics.length_controlled import (
    CONFOUNDED_R,
    GLM,
    GLM_CONFOUNDED,
    JOINT,
    NONE,
    UPSTREAM_DIFFERENCES,
    fixed_baseline,
    joint_needs,
    length_controlled_win_rates,
    tracks_difficulty,
)
from recuse.metrics.length_controlled import columns as lc_columns
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.tool_scores import (
    SIGNIFICANT_WEIGHT,
    arena_hard_battles,
    arena_hard_scores,
    arena_hard_style_scores,
    fastchat_results,
)
from recuse.numbers import decimal, percent, share_percent, signed
from recuse.report import figures as fig
from recuse.report.model import Table
from recuse.roster import Roster

#: why a self term of a fit of one judge's verdicts (``--judge`` choosing one) is never
#: identified: the pooled coefficient needs several judges
_ONE_JUDGE = {
    "own": "pooled over one judge, {judge}, whose own answers are all its model's: the "
    "covariate is that model's strength",
    "family": "pooled over one judge, {judge}, whose family's answers are its family's "
    "other models': the covariate is their strengths",
}


def _fixed_baseline(frame: pd.DataFrame) -> bool:
    """Whether some judge compares every system it judged with one fixed baseline
    (AlpacaEval's layout: the length-controlled win rate applies)."""
    rows = frame[frame["judge"].notna() & frame["p_a"].notna()]
    return any(fixed_baseline(g) is not None for _, g in rows.groupby("judge"))


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    reason = needs_verdicts(frame, roster)
    if reason:
        return reason
    if pd.concat([frame["model_a"], frame["model_b"]]).nunique() < 3 and not _fixed_baseline(frame):
        return (
            "fewer than three systems compared and no judge with one fixed baseline: "
            "nothing to rank"
        )
    return None


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    part = ctx.part(ANALYSIS)
    frame = inp.frame
    if o.judges:  # the chosen judges' verdicts, and every human label
        frame = frame[frame["judge"].isna() | frame["judge"].isin(list(o.judges))]
    rows = judged(frame)
    fits: _Fits = {}
    _tool_numbers(ctx, inp, frame, fits)
    ids = pd.concat([rows["model_a"], rows["model_b"], rows["judge"]]).astype(str).unique()
    families = {m: ctx.roster.family(m) for m in ids if m in ctx.roster}
    if pd.concat([rows["model_a"], rows["model_b"]]).nunique() < 3:
        # two systems: no ranking, but a model against a fixed baseline (AlpacaEval)
        if not _length_controlled(ctx, inp, rows, sorted(rows["judge"].astype(str).unique()), fits):
            ctx.skip(
                ANALYSIS,
                "two systems: nothing to rank, and no length-controlled win rate could be fitted",
                inp.name,
                headline=False,
            )
        return
    with ctx.timed(f"leaderboard ({inp.name})", ANALYSIS):
        try:
            lb = leaderboard(frame, families=families, boot=o.resampling, selves=ctx.selves)
        except EstimationError as exc:
            ctx.skip(ANALYSIS, str(exc), inp.name, headline=False)
            return
    judges = ", ".join(lb.judges)
    adj = lb.adjusted
    method = (
        "Bradley–Terry logistic GLM (maximum likelihood, Newton–Raphson) of the verdicts of "
        f"{judges}; "
        f"{percent(o.level)} percentile interval, its ends expanded for the prompts' number "
        f"(Student's t), one-step cluster bootstrap over prompts "
        f"({o.n_boot} resamples); n = the judged pairs fitted"
        + (f", {left}" if (left := adj.left_out_words()) else "")
    )
    records = adj.coefficients_extrapolated or (None,) * len(adj.covariates)
    for name, est, lo, hi, far in zip(
        adj.covariates, adj.coefficients, adj.coefficients_low, adj.coefficients_high, records,
        strict=True,
    ):  # fmt: skip
        # an end past the resamples' reach (99.9% from 73 prompts): its record, its
        # warning and the method's words, as a shared-bootstrap result has them
        # (recuse.metrics.estimate.to_results); the finding said none
        ctx.add(
            ANALYSIS,
            to_finding(
                ANALYSIS, COVARIATE_BIASES[name], judge=judges, dataset=inp.name,
                estimate=est, ci_low=lo, ci_high=hi, n=adj.n_pairs, level=o.level,
                method=method + (f"; {extrapolated_words(far.side)}" if far else ""),
                clusters=adj.n_clusters, interval_rule="expanded",
                warnings=(far.warning(),) if far else (), extrapolated=far,
            ),
        )  # fmt: skip
    part.tables.append(
        Table(slug("leaderboard", inp.name), f"Leaderboard, raw and adjusted — {inp.name}",
              lb.table(), columns=lb.columns())
    )  # fmt: skip
    part.tables.append(
        Table(slug("leaderboard-covariates", inp.name),
              f"Bias covariates of the adjusted leaderboard — {inp.name}", adj.coefficient_table(),
              columns=adj.coefficient_columns())
    )  # fmt: skip
    taus = [f"raw vs adjusted {decimal(lb.tau_raw_adjusted, 2)}"]  # τ < 0: U+2212
    if lb.tau_raw_human is not None and lb.tau_adjusted_human is not None:
        taus += [
            f"raw vs humans {decimal(lb.tau_raw_human, 2)}",
            f"adjusted vs humans {decimal(lb.tau_adjusted_human, 2)}",
        ]
    part.notes.append(
        f"{inp.name}: Kendall's τ between the orderings (1 = same order; of the fitted "
        "strengths, with no interval: how far each rank could move is the table's rank "
        "interval): "
        + "; ".join(taus)
        + f". {len(adj.systems)} systems, {adj.n_pairs:,} judged pairs fitted, "
        + f"{adj.n_clusters:,} prompts"
        + (f"; {left}." if left else ".")
    )
    if lb.human_missing:
        part.notes.append(
            f"{inp.name}: the human labels give no leaderboard of their own, so the table has "
            f"no human strengths and no τ against the humans: {lb.human_missing}."
        )
    for name, why in adj.dropped.items():
        bias = COVARIATE_BIASES[name]
        if name in SELF_TERMS and len(lb.judges) == 1 and "collinear" in why:  # one judge
            why += f"; {_ONE_JUDGE[name].format(judge=lb.judges[0])}"
            why += " (the audit without --judge pools every judge's verdicts)" if o.judges else ""
        ctx.skip(ANALYSIS, f"{bias.title}: {why}", inp.name, headline=False, bias=bias)
    part.figures.append(
        fig.coefficients(
            [f"{s} (raw)" for s in lb.raw.systems] + [f"{s} (adjusted)" for s in adj.systems],
            np.concatenate([lb.raw.strengths, adj.strengths]).tolist(),
            np.concatenate([lb.raw.strengths_low, adj.strengths_low]).tolist(),
            np.concatenate([lb.raw.strengths_high, adj.strengths_high]).tolist(),
            id=slug("leaderboard", inp.name), title=f"Strengths, raw and adjusted — {inp.name}",
            xlabel=f"strength (log-odds, centred) with {percent(o.level)} interval",
            # no red: a strength off 0 is a model better or worse than the mean, no bias
            highlight=[False] * (len(lb.raw.systems) + len(adj.systems)),
            caption="Raw: the verdicts as they are; adjusted: length, markdown, position, "
            "own-answer and family effects held equal. Dashed line: 0, the models' mean "
            "strength (a strength off it is a better or worse model, not a bias: none is "
            "red).", format=o.figure_format,
        )
    )  # fmt: skip
    _length_controlled(ctx, inp, rows, list(lb.judges), fits)


def _sources(frame: pd.DataFrame) -> set[str]:
    return set(frame["source"].dropna().astype(str)) if "source" in frame.columns else set()


def _judges(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["judge"].dropna().astype(str).unique())


#: the length-controlled fits of one input, per (judge, baseline): the rows fitted and
#: the result (or the reason it could not be fitted), shared by the AlpacaEval
#: headline and the section's table so that each judge is fitted once
_Fits = dict[tuple[str, str], tuple[pd.Index, pd.DataFrame | EstimationError]]


def _fit_once(
    ctx: Context, fits: _Fits, rows: pd.DataFrame, judge: str, baseline: str
) -> pd.DataFrame:
    """:func:`length_controlled_win_rates` of ``judge`` against ``baseline`` on its
    rows with a verdict, reusing an earlier fit of the same rows; raises its
    :class:`EstimationError`."""
    o = ctx.options
    used = rows[(rows["judge"] == judge) & rows["p_a"].notna()]
    hit = fits.get((judge, baseline))
    if hit is not None and hit[0].equals(used.index):
        result = hit[1]
    else:
        try:
            result = length_controlled_win_rates(
                used, judge=judge, baseline=baseline, boot=o.resampling
            )
        except EstimationError as exc:
            result = exc
        fits[(judge, baseline)] = (used.index, result)
    if isinstance(result, EstimationError):
        raise result
    return result.copy()


def _tool_numbers(ctx: Context, inp: Input, frame: pd.DataFrame, fits: _Fits) -> None:
    """The number each tool's users came for, as the tool computes it, per judge: a
    table in the section and one headline sentence per model (first screen, terminal).
    AlpacaEval: win rate and length-controlled win rate; Arena-Hard-Auto: the score
    against the baseline; FastChat pairwise: win / tie / loss. A judge that wrote the
    baseline is said first: every number is then against its own answers (one of its
    family: against a same-family model's)."""
    sources = _sources(frame)
    if "alpaca-eval" in sources:
        _alpaca_eval(ctx, inp, frame[frame["source"] == "alpaca-eval"], fits)
    if "arena-hard" in sources:
        _arena_hard(ctx, inp, frame[frame["source"] == "arena-hard"])
    if "fastchat-pair" in sources:
        _fastchat(ctx, inp, frame[frame["source"] == "fastchat-pair"])


def _baseline_lines(
    ctx: Context, inp: Input, tool: str, judge: str, baseline: str, n: int, *, where: str = ""
) -> None:
    """Say it before the rates when the judge wrote the baseline (:func:`_wrote`): every
    win rate is then against the judge's own answer; or when a model of the judge's
    family did (AlpacaEval 1's text-davinci-003 under gpt-4, Arena-Hard-Auto's
    gpt-4-0314 under gpt-4-1106-preview: :func:`_family_of`): every other family's win
    rate is then against a same-family model's answers, which family preference lowers
    (its systems' lines said nothing, where the family's own said "same family").
    ``where``: the categories the baseline is the baseline of, where a v2.0 file has
    several (" of categories coding, math": "every win rate below" read as all of them)."""
    family = _family_of(ctx, judge, baseline)
    if _wrote(ctx, judge, baseline):
        ctx.part(ANALYSIS).headlines.append(
            f"{inp.name}, {tool}: the judge {judge} wrote the baseline {baseline}{where} — in "
            f"all {n:,} comparisons it judged its own answer against another model's, so "
            "every win rate below is against the judge's own answer (self-preference lowers "
            "them)."
        )
    elif family is not None:
        ctx.part(ANALYSIS).headlines.append(
            f"{inp.name}, {tool}: the judge {judge} and the baseline {baseline}{where} are of "
            f"the same family ({family}) — a system of another family is judged against a "
            "same-family model's answers, which family preference favours, so it lowers that "
            "system's win rate (a system of the family says so in its line)."
        )


def _wrote(ctx: Context, judge: str, model: str) -> bool:
    """Whether the judge wrote ``model``'s answers: the same model, or the same line with
    ``--self-scope line``."""
    selves = ctx.selves or {}
    return selves.get(judge, judge) == selves.get(model, model)


def _judged_itself(ctx: Context, judge: str, system: str) -> str:
    """The words a system's headline takes when the judge wrote its answers
    (:func:`_wrote`): a win rate the judge gave its own answers, which self-preference
    raises; "" for any other system. A headline of the judge's own system read as the
    others did, with nothing said."""
    if not _wrote(ctx, judge, system):
        return ""
    return (
        f" The judge {judge} wrote these answers: this rate is its verdict on its own "
        "answers, which self-preference raises."
    )


def _judged_kin(ctx: Context, judge: str, system: str, baseline: str) -> str:
    """A system's words on its judge, in an AlpacaEval, Arena-Hard-Auto or FastChat line
    (``baseline`` "" where FastChat compares every pair): :func:`_judged_itself` for the
    judge's own model (a length-prompted variant's too), and where a model of the
    judge's family in the roster wrote the answers (:func:`_family_of`), a rate on a
    same-family model's answers, which family preference raises (gpt-4-0314 under the
    annotator gpt-4 read as a stranger's), with the roster's model line where
    ``--self-scope line`` counts it as the judge's own, and the baseline where it is of
    the family too; "" for any other system, or a name the roster lacks."""
    model = _model_of(system)
    family = _family_of(ctx, judge, model)
    if family is None:
        return _judged_itself(ctx, judge, model)
    line = ctx.roster.line(judge)
    same_line = (
        f" and model line ({line}; --self-scope line counts its answers as the judge's own)"
        if ctx.roster.line(model) == line
        else ""
    )
    effect = (
        f" against a baseline of the same family ({baseline}), so family preference may "
        "favour either side"
        if _family_of(ctx, judge, _model_of(baseline)) is not None
        else ", which family preference raises"
    )
    return (
        f" The judge {judge} and {model} are of the same family ({family}){same_line}: "
        f"this rate is its verdict on a same-family model's answers{effect}."
    )


def _family_of(ctx: Context, judge: str, model: str) -> str | None:
    """The judge's family in the roster where ``model`` is of it and the judge did not
    write it (:func:`_wrote`); None for any other model, or a name the roster lacks."""
    roster = ctx.roster
    if _wrote(ctx, judge, model) or judge not in roster or model not in roster:
        return None
    family = roster.family(judge)
    return family if roster.family(model) == family else None


def _model_of(system: str) -> str:
    """The model of a leaderboard system: ``system`` less a length-prompted variant's
    `` (concise)`` / `` (verbose)`` (:func:`recuse.metrics.bradley_terry.system_names`)."""
    for v in VARIANTS:
        if system.endswith(f" ({v})"):
            return system.removesuffix(f" ({v})")
    return system


def _alpaca_eval(ctx: Context, inp: Input, frame: pd.DataFrame, fits: _Fits) -> None:
    """AlpacaEval's leaderboard per annotator: win rate and length-controlled win rate."""
    o = ctx.options
    part = ctx.part(ANALYSIS)
    rows = frame[frame["judge"].notna() & frame["p_a"].notna()]
    for judge in _judges(rows):
        found = fixed_baseline(rows[rows["judge"] == judge])
        if found is None:
            continue
        try:
            lc = _fit_once(ctx, fits, rows, judge, found[0])
        except EstimationError as exc:
            part.headlines.append(
                f"{inp.name}, AlpacaEval, annotator {judge}: not computed: {exc}."
            )
            continue
        lc = lc.sort_values("lc_win_rate", ascending=False).reset_index(drop=True)
        _baseline_lines(ctx, inp, "AlpacaEval", judge, found[0], int(lc["n"].sum()))
        part.tables.append(
            Table(slug("alpaca-eval-leaderboard", inp.name, judge),
                  f"AlpacaEval leaderboard, annotator {judge} — {inp.name}", lc,
                  columns=lc_columns(o.level))
        )  # fmt: skip
        for r in lc.itertuples():
            glm_rate = float(cast(float, r.lc_win_rate_glm))
            glm = (
                "AlpacaEval's per-system GLM separates here: no rate"
                if np.isnan(glm_rate)
                else f"AlpacaEval's per-system GLM {_points(glm_rate)}"
            )
            part.headlines.append(
                f"{inp.name}, AlpacaEval, annotator {judge}: {r.system} against {r.baseline}: "
                f"win rate {_points_interval(r.win_rate, r.win_rate_low, r.win_rate_high)}, "
                + (
                    "length-controlled: not estimated"
                    if r.lc_method == NONE
                    else "length-controlled "
                    + _points_interval(r.lc_win_rate, r.lc_win_rate_low, r.lc_win_rate_high)
                )
                + (
                    f" (joint fit; {glm})"
                    if r.lc_method == JOINT
                    else f" (AlpacaEval's per-system GLM{_no_difficulty(r)}; the joint fit "
                    f"needs {joint_needs()})"
                    if r.lc_method == GLM
                    else ""
                )
                + f" ({percent(o.level)} intervals, n = {r.n:,} "
                "instructions; 50% = as good as the baseline)."
                + _caveat(r)
                + _judged_kin(ctx, judge, str(r.system), str(r.baseline))
            )
        part.headlines += _marked(f"{inp.name}, AlpacaEval, annotator {judge}", lc)


def _no_difficulty(r: Any) -> str:
    """What the per-system GLM's rate lacks where no other system answered the system's
    instructions: the instruction-difficulty term (one annotations.json read alone gave
    claude-2.1 32.41%, beside the other systems' files 22.41%, with no word why)."""
    if r.glm_difficulty:
        return ""
    return (
        ", without an instruction-difficulty term: no other system answered these "
        "instructions here, and beside other systems' annotations of them it can read "
        "otherwise"
    )


def _tracks(r: Any) -> bool:
    """Whether a row of :func:`length_controlled_win_rates` has a rate whose length
    difference moves with instruction difficulty (its caveat then marked †)."""
    return bool(r.caveat) and r.lc_method != NONE and abs(r.length_difficulty_r) >= CONFOUNDED_R


def _marked(where: str, lc: pd.DataFrame) -> list[str]:
    """The lines that say once why the two length-controlled rates of ``lc``'s rows differ
    where both are shown (claude-2's 70.02% beside the GLM's 78.09%, with no word on a row
    without a caveat), and what the caveats marked † (:func:`_tracks`) share; none where
    neither applies."""
    both = lc[(lc["lc_method"] == JOINT) & lc["lc_win_rate_glm"].notna()]
    out = []
    if len(both):
        gap = (both["lc_win_rate"] - both["lc_win_rate_glm"]).abs()
        far = both.iloc[int(np.argmax(gap.to_numpy()))]
        out.append(
            f"{where}: the joint fit and AlpacaEval's per-system GLM differ by up to "
            f"{decimal(float(gap.max()), 2)} points ({far['system']}: "
            f"{_points(far['lc_win_rate'])} and {_points(far['lc_win_rate_glm'])}): the GLM "
            "fits each system alone against the baseline, its instruction difficulty read "
            "from the other systems' annotations, and credits to length what moves with "
            "that difficulty; the joint fit shares each instruction's difficulty across the "
            "systems, and is the rate shown."
        )
    marked = sum(_tracks(r) for r in lc.itertuples())
    if marked:
        out.append(
            f"{where}: † for {marked} of {len(lc)} systems the length difference moves with "
            f"instruction difficulty (|r| ≥ {CONFOUNDED_R}): the joint fit separates the two "
            "with every system's answers to the same instructions, and is the rate shown where "
            f"it could be made; {GLM_CONFOUNDED}."
        )
    return out


def _caveat(r: Any) -> str:
    """A row's caveat in its headline: where the length difference moves with
    difficulty, its own part only (:func:`tracks_difficulty`), marked † for the line
    that says the rest once; else the caveat whole."""
    if not r.caveat:
        return ""
    if not _tracks(r):
        return f" Caveat: {r.caveat}."
    read = ": read the rate with the raw win rate" if r.lc_method == GLM else ""
    return f" Caveat †: {tracks_difficulty(r.length_difficulty_r)}{read}."


def _of(words: dict[str, str], frame: pd.DataFrame) -> dict[str, str]:
    """The entries of ``words`` for the columns ``frame`` has."""
    return {k: v for k, v in words.items() if k in frame.columns}


def tool_columns(kind: str, level: float) -> dict[str, str]:
    """What each column of the FastChat and Arena-Hard-Auto tables holds (``kind``:
    ``fastchat``, ``arena-hard`` or ``arena-hard-style``; they had no words: which share a
    score is, of what, and what a battle counts)."""
    interval = (
        f"the low end of its {percent(level)} percentile interval (bootstrap over the "
        "weighted battles)"
    )
    arena = {
        "category": "the Arena-Hard v2.0 category, scored apart against its own baseline "
        "(as upstream's show_result.py does); empty for a v0.1 file's row (every category "
        "together)",
        "arena_hard_version": "the layout of the row's files: v0.1 (question_id; a null "
        "game dropped alone, every category together) or v2.0 (uid; a record with a null "
        "game dropped whole, each category apart), each row scored by its own rule",
        "model": "the model compared with the baseline",
        "baseline": "the model on the other side of every battle",
        "battles": f"the battles counted: each game once, a '>>' verdict {SIGNIFICANT_WEIGHT}×",
        "games": "the judged games (one per prompt and order with a verdict)",
    }
    words = {
        "fastchat": {
            "model": "the model",
            "win": "records where both games pick it (a record: one question and turn "
            "judged in both presentation orders, its two games)",
            "loss": "records where both games pick the other answer",
            "tie": "the other records: a tie in a game, or games that disagree",
            "win_rate": "win / (win + loss + tie), in %",
            "loss_rate": "loss / (win + loss + tie), in %",
            "win_rate_adjusted": "(win + tie / 2) / (win + loss + tie), in %; 50 = even",
            "baseline": "the model on the other side of every record (FastChat's "
            "pairwise-baseline); empty: every pair of models (pairwise-all)",
        },
        "arena-hard": {
            **arena,
            "score": "its Bradley–Terry win rate against the baseline over the weighted "
            "battles, (W + T/2) / (W + T + L), in %; 50 = as good as the baseline",
            "score_low": interval,
            "score_high": "the high end",
        },
        "arena-hard-style": {
            **arena,
            "style_score": "its win rate against the baseline at the battles' average "
            "style difference (length and markdown held equal: 100 σ(β_m)), in %",
            "style_score_low": interval + ", every resample refitted",
            "style_score_high": "the high end",
        },
    }[kind]
    return words


def _arena_hard(ctx: Context, inp: Input, frame: pd.DataFrame) -> None:
    """Arena-Hard-Auto's score of each model against the baseline, per judge."""
    o = ctx.options
    part = ctx.part(ANALYSIS)
    style, no_style = _style_counts(ctx, inp)
    for judge in _judges(frame):
        try:
            scores = arena_hard_scores(frame, judge=judge, boot=o.resampling)
        except EstimationError as exc:
            part.headlines.append(
                f"{inp.name}, Arena-Hard-Auto, judge {judge}: not computed: {exc}."
            )
            continue
        several = "category" in scores and scores["baseline"].nunique() > 1  # v2.0's
        for base, rows in scores.groupby("baseline"):
            cats = sorted(set(rows["category"].dropna().astype(str))) if several else []
            where = f" of categor{'ies' if len(cats) > 1 else 'y'} {', '.join(cats)}" * bool(cats)
            n = int(rows["games"].sum())
            _baseline_lines(ctx, inp, "Arena-Hard-Auto", judge, str(base), n, where=where)
        part.tables.append(
            Table(slug("arena-hard-scores", inp.name, judge),
                  f"Arena-Hard-Auto scores, judge {judge} — {inp.name}", scores,
                  columns=_of(tool_columns("arena-hard", o.level), scores))
        )  # fmt: skip
        styled, whys = _arena_hard_style(ctx, frame, judge, style, no_style)
        _arena_hard_left_out(ctx, inp, frame, judge, scores)
        for r in scores.itertuples():
            row = dict(zip(scores.columns, r[1:], strict=True))
            line = (
                f"{inp.name}, Arena-Hard-Auto, judge {judge}: {r.model}"
                f"{_arena_hard_where(row)} scores {r.score:.1f}% "
                f"[{r.score_low:.1f}, {r.score_high:.1f}] against {r.baseline} (Bradley–Terry "
                f"win rate, a '>>' verdict counted {SIGNIFICANT_WEIGHT}×; {percent(o.level)} "
                f"bootstrap over {r.battles:,} battles from {r.games:,} games; 50% = as good "
                "as the baseline)"
            )
            key = str(row.get("category") or "")
            st_frame = styled.get(key)
            if st_frame is not None and str(r.model) in st_frame.index:
                st = st_frame.loc[str(r.model)]
                line += (
                    f"; style-controlled {st['style_score']:.1f}% [{st['style_score_low']:.1f}, "
                    f"{st['style_score_high']:.1f}] (its win rate with answer length and markdown "
                    "held at the battles' average, evening the models out against each "
                    "other; Arena-Hard-Auto's --control-features length markdown)."
                )
            else:
                line += f"; style control: {whys.get(key) or whys.get('', '')}."
            part.headlines.append(line + _judged_kin(ctx, judge, str(r.model), str(r.baseline)))
        _arena_hard_style_parts(ctx, inp, judge, styled)


def _arena_hard_style_parts(
    ctx: Context, inp: Input, judge: str, styled: dict[str, pd.DataFrame]
) -> None:
    """The style coefficients (a note per category fitted) and the style-controlled
    scores table (a category column where a v2.0 file's categories were fitted apart)."""
    if not styled:
        return
    part = ctx.part(ANALYSIS)
    for category, st in styled.items():
        coefs = ", ".join(f"{k} {signed(v, 2)}" for k, v in st.attrs["coefficients"].items())
        where = f", category {category}" if category else ""
        part.notes.append(
            f"{inp.name}, Arena-Hard-Auto, judge {judge}{where}: style coefficients (log-odds "
            f"of a win per sd of the style difference; 0 = style does not sway the judge): "
            f"{coefs}."
        )
    frames = [
        st.reset_index().assign(category=c) if c else st.reset_index() for c, st in styled.items()
    ]
    table = pd.concat(frames, ignore_index=True)
    if "category" in table.columns:
        table = table[
            ["model", "category", *[c for c in table.columns if c not in ("model", "category")]]
        ]
    part.tables.append(
        Table(slug("arena-hard-style-scores", inp.name, judge),
              f"Arena-Hard-Auto style-controlled scores, judge {judge} — {inp.name}", table,
              columns=_of(tool_columns("arena-hard-style", ctx.options.level), table))
    )  # fmt: skip


def _arena_hard_where(row: dict[str, object]) -> str:
    """The words after a score row's model in its headline: its category (a v2.0
    record's) and, where the judge's files are of both versions, the rule it was
    scored by ("" for a v0.1 row alone)."""
    words = f" in category {row['category']}" if row.get("category") else ""
    version = row.get("arena_hard_version")
    if version == "v0.1":
        words += " (v0.1 files: a null game dropped alone, every category together)"
    elif version == "v2.0":
        words += " (v2.0 files: a record with a null game dropped whole)"
    return words


def _arena_hard_left_out(
    ctx: Context, inp: Input, frame: pd.DataFrame, judge: str, scores: pd.DataFrame
) -> None:
    """Say how many v2.0 records of ``judge`` were left out whole (a null game or score,
    as v2.0's show_result.py leaves them out), by category, and which categories are
    left with no score; and, where its files are of both versions, that each row is
    scored by its own version's rule."""
    part = ctx.part(ANALYSIS)
    where = f"{inp.name}, Arena-Hard-Auto, judge {judge}"
    gone: dict[str, int] = scores.attrs.get("records_left_out", {})
    if gone:
        n = sum(gone.values())
        scored = set(scores["category"]) if "category" in scores.columns else set()
        empty = sorted(c for c in gone if c and c not in scored)
        each = ", ".join(f"{c or 'no category'} {k:,}" for c, k in gone.items())
        none = ""
        if empty:
            none = (
                f"; no score in categor{'ies' if len(empty) > 1 else 'y'} "
                f"{', '.join(empty)}: none of its records has both games"
            )
        part.notes.append(
            f"{where}: {n:,} v2.0 record{'s' if n != 1 else ''} left out whole, a game or "
            f"its score being null, as v2.0's show_result.py leaves them out ({each}){none}."
        )
    if "arena_hard_version" in scores.columns:
        part.notes.append(
            f"{where}: its files are of both Arena-Hard versions (v0.1's question_id "
            "records, v2.0's uid records); each score row says its version and is scored "
            "by that version's rule, never pooled: audit each version's files apart to "
            "compare like with like."
        )


#: why an Arena-Hard score is not style-controlled when no answer metadata is found
NO_STYLE = (
    "needs answer texts/metadata, not in these files (Arena-Hard-Auto keeps them in "
    "model_answer/ beside model_judgment/)"
)


def _style_counts(ctx: Context, inp: Input) -> tuple[pd.DataFrame | None, str]:
    """The answers' style counts from Arena-Hard-Auto's ``model_answer/`` beside the
    judgments (read once per input), or None and why there are none."""
    from recuse.data.arena_hard_answers import answers_folder, read_style_counts

    folder = answers_folder(inp.source.location)
    if folder is None:
        return None, NO_STYLE
    style = read_style_counts(folder, roster=ctx.roster)
    if style.empty:
        return None, f"the answers in {folder.name}/ carry no style metadata (add_markdown_info.py)"
    return style, ""


def _arena_hard_style(
    ctx: Context, frame: pd.DataFrame, judge: str, style: pd.DataFrame | None, why: str
) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """The style-controlled scores of ``judge`` (each indexed by model) where there are
    style counts, by category: a v2.0 file's categories are fitted apart, as upstream's
    ``show_result.py -c CATEGORY --control-features ...`` fits one (key "" for v0.1's one
    pool); and why not, by category ("" for all)."""
    if style is None:
        return {}, {"": why}
    battles = arena_hard_battles(frame, judge=judge)
    mixed = battles["version"].nunique() > 1  # refused by the fit itself, saying why
    categories = [""] if mixed else sorted(battles["category"].unique())
    styled: dict[str, pd.DataFrame] = {}
    whys: dict[str, str] = {}
    for category in categories:
        rows = frame
        if len(categories) > 1:
            rows = frame[frame["category"].fillna("").astype(str) == category]
        try:
            st = arena_hard_style_scores(rows, style, judge=judge, boot=ctx.options.resampling)
        except EstimationError as exc:
            whys[category] = f"not computed: {exc}"
            continue
        styled[category] = st.set_index("model")
    return styled, whys


def _fastchat(ctx: Context, inp: Input, frame: pd.DataFrame) -> None:
    """FastChat's pairwise win / tie / loss per model, per judge."""
    part = ctx.part(ANALYSIS)
    for judge in _judges(frame):
        try:
            res = fastchat_results(frame, judge=judge)
        except EstimationError as exc:
            part.headlines.append(f"{inp.name}, FastChat, judge {judge}: not computed: {exc}.")
            continue
        part.tables.append(
            Table(slug("fastchat-results", inp.name, judge),
                  f"FastChat pairwise results, judge {judge} — {inp.name}", res,
                  columns=_of(tool_columns("fastchat", ctx.options.level), res))
        )  # fmt: skip
        base = str(res["baseline"].iloc[0])
        against = f" against {base}" if base else ""
        if base:
            n = int(res[["win", "tie", "loss"]].sum().sum())
            _baseline_lines(ctx, inp, "FastChat", judge, base, n)
        for r in res.itertuples():
            part.headlines.append(
                f"{inp.name}, FastChat, judge {judge}: {r.model}{against}: "
                f"{r.win} win{'s' if r.win != 1 else ''}, {r.tie} tie{'s' if r.tie != 1 else ''}, "
                f"{r.loss} loss{'es' if r.loss != 1 else ''}; win rate {r.win_rate:.1f}%, adjusted "
                f"{r.win_rate_adjusted:.1f}% (a tie counts half; games that disagree are a "
                "tie; records with an error left out)."
                + _judged_kin(ctx, judge, str(r.model), base)
            )


def _method_note(lc: pd.DataFrame) -> str:
    """Which estimate ``lc_win_rate`` is, when it is the joint fit (AlpacaEval's own
    per-system GLM is then the ``lc_win_rate_glm`` column)."""
    if not (lc["lc_method"] == JOINT).any():
        return ""
    return (
        " lc_win_rate is the joint fit of every system's annotations (an instruction "
        "effect shared by the systems separates difficulty from length); "
        "lc_win_rate_glm is AlpacaEval's per-system GLM, which credits difficulty to "
        "length where the two move together (recuse.metrics.length_controlled)."
    )


def _length_controlled(
    ctx: Context, inp: Input, rows: pd.DataFrame, judges: list[str], fits: _Fits
) -> int:
    """AlpacaEval 2's length-controlled win rate of each judge that has one fixed
    baseline; returns how many judges got one."""
    part = ctx.part(ANALYSIS)
    made = 0
    for judge in judges:
        found = fixed_baseline(rows[rows["judge"] == judge])
        if found is None:
            continue  # no fixed baseline: the length-controlled win rate does not apply
        try:
            lc = _fit_once(ctx, fits, rows, judge, found[0])
        except EstimationError as exc:
            part.notes.append(
                f"{inp.name}, {judge}: length-controlled win rate against the fixed "
                f"baseline {found[0]} not computed: {exc}."
            )
            continue
        part.tables.append(
            Table(slug("lc-win-rate", inp.name, judge),
                  f"Length-controlled win rate (AlpacaEval 2; lc_method says which fit), "
                  f"judge {judge} — {inp.name}", lc, columns=lc_columns(ctx.options.level))
        )  # fmt: skip
        part.notes.append(
            f"{inp.name}, {judge}: length-controlled win rate against the fixed baseline "
            f"{lc['baseline'].iloc[0]}, in %; differs from upstream's: {UPSTREAM_DIFFERENCES}."
            + _method_note(lc)
        )
        part.notes.extend(
            f"{inp.name}, {judge}, {r.system}: length-controlled win rate." + _caveat(r)
            for r in lc.itertuples()
            if r.caveat
        )
        part.notes += _marked(f"{inp.name}, {judge}", lc)
        made += 1
    return made


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "What would the ranking be without the judge's biases? A Bradley–Terry model of "
        "the judges' verdicts: logit P(a beats b) = s_a − s_b + Σ β_k x_k, fitted raw "
        "(no covariates) and adjusted for length (tanh of the standardised word-count "
        "difference), markdown headers, lists and bold text, the position shown, and "
        "whether an answer is the judge's own or from its family. Strengths are log-odds, "
        "centred; rank 1 is the strongest; Kendall's τ compares the orderings. Pairs judged "
        "in both orders enter once per order with weight ½. Where a judge compares every "
        "system with one baseline, AlpacaEval 2's length-controlled win rate is shown too."
    ),
    requires="pairs with judge verdicts comparing at least three systems (two, one of them "
    "a fixed baseline, for the length-controlled win rate alone); the own/family "
    "covariates need the judges' own models among the systems and other judges rating them",
    needs=_needs,
    build=_build,
)


def _points(rate: float) -> str:
    """A win rate in percentage points as AlpacaEval writes it (two decimals, ``97.70%``),
    with the decimals :func:`~recuse.numbers.share_percent` takes where two would write a
    rate strictly inside (0, 100) as an end (``100.00%`` for 99.998). A negative zero is
    0 (``0.00%``, never ``-0.00%``); a subnormal rate, whose share underflows to 0, is
    still above it (``< 0.0001%``)."""
    rate = float(rate) + 0.0
    text = f"{decimal(rate, 2)}%"
    if 0 < rate < 100 and text in ("0.00%", "100.00%"):
        text = share_percent(max(rate / 100, math.ulp(0.0)))
    return text


def _points_interval(rate: Any, low: Any, high: Any) -> str:
    """``97.70% [96.83%, 98.45%]``: each of the three in :func:`_points` (the interval's
    ends read as percentages, as the rate beside them); a row's cells, as floats."""
    return f"{_points(float(rate))} [{_points(float(low))}, {_points(float(high))}]"
