"""Favoritism (Play Favorites, Spiliopoulou et al., Eq. 1): self- and family-bias as
coefficients of a regression of the judge's ratings on the independent reference
score, with the correction (debiased means) and the robustness battery."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable

import numpy as np
import pandas as pd

from recuse.analyses.base import Analysis, Context, families_of, red_caption, slug, to_finding
from recuse.analyses.self_preference import (
    generators_of,
    line_hint_words,
    spelling_hint_words,
)
from recuse.biases.favoritism import FAMILY_BIAS as FAMILY_BIAS
from recuse.biases.favoritism import HEADING
from recuse.biases.favoritism import SELF_BIAS as SELF_BIAS
from recuse.data.inputs import Input
from recuse.errors import ConfigError, EstimationError, RecuseError
from recuse.metrics.bootstrap import counted
from recuse.metrics.estimate import student_error
from recuse.metrics.summary import PairwiseBias
from recuse.mitigation.debias import debias_effect, not_subtracted, on_few_prompts
from recuse.numbers import percent
from recuse.regression import fit_favoritism
from recuse.regression.explore import score_matrix
from recuse.regression.favoritism import (
    DF_WORDS,
    NEVER_OWN,
    FavoritismResult,
    coefficient_cells,
    corrects_anything,
    precision_note,
    prepare,
)
from recuse.regression.robustness import CHECKS, COMPARISON_COLUMNS, CheckEvent, battery
from recuse.report import figures as fig
from recuse.report.model import Table
from recuse.roster import Roster, self_keys

_TERM_WORDS = {  # the coefficient kinds of Eq. 1, in words ({first}: the baseline dimension)
    "judge": "intercept α + δ_j of judge {label} (its score at reference 0{base})",
    "slope": "slope β_j on the reference score, judge {label}",
    "self": "self-bias γ_j of judge {label} (own model's answers)",
    "family": "family bias λ_F of family {label} (its judges on its other models)",
    "dimension": "dimension effect η_d of {label} (its shift against {first}, whose η is 0)",
}


def coefficient_columns(res: FavoritismResult, level: float, *, df: bool = False) -> dict[str, str]:
    """What each column of :func:`coefficient_table` holds, in the fit's unit: its
    estimate column read in no unit at all (a slope's beside an intercept's and a γ's);
    ``df``: the table has its df column."""
    pct = percent(level)
    words = {
        "coefficient": "the term of the regression (Play Favorites' Eq. 1), in words",
        "estimate": f"its value in {res.scale_note} (a slope β_j's: per unit of the "
        "reference score)",
        f"{pct} low": f"the low end of its {pct} Wald interval (standard errors {res.se_type})",
        f"{pct} high": "the high end",
        "p": "two-sided Wald p-value against 0",
    }
    if df:
        words["df"] = DF_WORDS.format(df=res.df).removeprefix("df: ")
    return words


def coefficient_table(
    tidy: pd.DataFrame, level: float, *, dimensions: Collection[str] = (), df: bool = False
) -> pd.DataFrame:
    """Eq. 1's coefficients for a reader: what each is in words, its estimate and interval
    (normalised score points), and its p-value (a regression's full output, with term
    names and z, stays in the fit's ``tidy()``). The numbers are the fit's, unrounded:
    the table is also ``tables/NAME.csv`` and part of report.json, exact for scripts; the
    HTML rounds them as it rounds every table.

    ``dimensions``: the fit's dimensions. With two or more, the first in sorted order is
    the baseline of the design (:func:`~recuse.regression.favoritism.design_matrix`:
    ``η = 0``), so a dimension effect is its shift against that one and a judge's
    intercept its score at reference 0 in it; the words name it (a bare ``dimension
    effect δ_d: logical correctness`` said neither, and δ is Eq. 1's judge effect).

    ``df``: with each term's degrees of freedom (where some term's is not the fit's:
    :meth:`~recuse.regression.favoritism.FavoritismResult.own_df`)."""
    dims = sorted(map(str, dimensions))
    first = dims[0] if dims else "the first dimension"
    base = f" in {first}" if len(dims) > 1 else ""
    words = [
        _TERM_WORDS.get(str(k), "{label}").format(label=label, base=base, first=first)
        for k, label in zip(tidy["kind"], tidy["label"], strict=True)
    ]
    p = tidy["p"].astype(float)
    return pd.DataFrame(
        {
            "coefficient": words,
            "estimate": tidy["estimate"].astype(float),
            f"{percent(level)} low": tidy["lower"].astype(float),
            f"{percent(level)} high": tidy["upper"].astype(float),
            "p": p,
            **({"df": tidy["df"].astype(int)} if df else {}),
        }
    )


#: the coefficient kinds whose estimate is a difference from 0 (a bias, or a shift against
#: the baseline dimension), written signed; an intercept and a slope are levels
_SIGNED_KINDS = ("self", "family", "dimension")
#: how the note under the page's table names a bias term's row
_TERM_NAMES = {"self": "γ_j of judge {label}", "family": "λ_F of family {label}"}


def coefficient_texts(tidy: pd.DataFrame, level: float) -> tuple[dict[str, list[str]], str]:
    """The page's cells of :func:`coefficient_table`'s estimate and interval columns,
    as ``recuse favoritism`` writes its tables
    (:func:`~recuse.regression.favoritism.coefficient_cells`: one precision for the
    table, the finest any row needs, a starred interval's end kept off 0, in units of a
    power of ten on an extreme scale), a bias term's or dimension effect's estimate
    signed; "" for a number that is not finite. And the note under the table that the
    terminal's caption gives (:func:`~recuse.regression.favoritism.precision_note`): where
    a γ or λ reads with more decimals than its finding above the table, the first such
    both ways; on an extreme scale, its unit. The page wrote one precision per column
    (the estimate's 0.006 beside a low end's, say, −0.0012) with no word of why
    llama-3.1-8b-instruct's γ read −0.113 [−0.134, −0.092] there and −0.11 [−0.13,
    −0.09] in the findings."""
    cells, scale = coefficient_cells(tidy)
    kinds = tidy["kind"].astype(str).tolist()
    estimate = [
        "" if c[0] is None else c[0] if k in _SIGNED_KINDS else c[0].removeprefix("+")
        for c, k in zip(cells, kinds, strict=True)
    ]
    pct = percent(level)
    texts = {
        "estimate": estimate,
        f"{pct} low": [c[2] or "" for c in cells],
        f"{pct} high": [c[3] or "" for c in cells],
    }
    if scale:
        return (
            texts,
            f"Estimate, low and high {scale} (the CSV and report.json keep the fit's numbers).",
        )
    bias = [k in _TERM_NAMES for k in kinds]
    terms = tidy[bias].assign(
        name=[
            _TERM_NAMES[k].format(label=label)
            for k, label in zip(
                tidy["kind"][bias].astype(str), tidy["label"][bias].astype(str), strict=True
            )
        ]
    )
    clause = precision_note(terms, [c for c, b in zip(cells, bias, strict=True) if b], key="name")
    note = clause.removeprefix("; ")
    return texts, (note[:1].upper() + note[1:] + "." if note else "")


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    judges, models = (set(frame[c].astype(str).unique()) for c in ("judge", "model"))
    if not judges & models:
        return "no judge rated its own model's outputs, so self-bias is not identified"
    if frame["reference"].notna().sum() == 0:
        return "no reference scores (column reference is empty)"
    return None


def _identified(frame: pd.DataFrame, roster: Roster) -> str | None:
    """Why the favoritism regression would estimate nothing, or None: it needs rows with
    a rating and a reference on which some judge rates its own model and another model
    (self-bias γ), or a model of its family and one outside it (family bias λ)."""
    rows = frame[frame["rating"].notna() & frame["reference"].notna()]
    judge, model = rows["judge"].astype(str), rows["model"].astype(str)
    own = judge == model
    if ((own.groupby(judge).any()) & (~own).groupby(judge).any()).any():
        return None
    fam = families_of(pd.concat([judge, model]), roster)
    fj, fm = judge.map(fam), model.map(fam)
    member = (fj == fm) & ~own
    if (member.groupby(fj).any() & (fj != fm).groupby(fj).any()).any():
        return None
    return (
        "no judge rates both its own model (or a model of its family) and another model on "
        "rows with a reference, so neither self- nor family bias is identified; give the "
        "ratings of several evaluated models together"
    )


def _estimable(frame: pd.DataFrame, roster: Roster) -> str | None:
    """:func:`_identified`, then the fit itself: the design can still be rank deficient
    (e.g. each judge grading its own dimension, so the dimension effects equal the
    judges' intercepts), which only the fit sees."""
    reason = _identified(frame, roster)
    if reason:
        return reason
    names = pd.concat([frame["judge"], frame["model"]]).astype(str)
    try:
        fit_favoritism(frame, families_of(names, roster))
    except (EstimationError, ConfigError) as exc:
        return str(exc)
    return None


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    parts = ctx.part(ANALYSIS)
    # the judges reported are those of --judge, but the fit holds every judge's ratings:
    # its terms are shared (the dimension effects, a family's λ pooled over its judges),
    # so a judge's γ and λ read as in the whole audit and `recuse favoritism` (a fit of
    # gpt-4o's ratings alone read γ +0.032 [0.024, 0.040] and λ +0.023 on play-favorites,
    # the whole fit +0.031 [0.023, 0.039] and +0.019)
    # (the tables, the score matrix, the correction and the robustness rows are the
    # chosen judges' too: a judge not chosen is in no table, as in no finding)
    chosen = set(inp.frame["judge"].astype(str).unique())
    inp = dataclasses.replace(inp, frame=inp.every_judge, whole=None)
    frame = inp.frame
    judges = set(frame["judge"].astype(str).unique())
    with ctx.timed(f"favoritism regression ({inp.name})", ANALYSIS):
        try:
            res = fit_favoritism(frame, ctx.roster, se=o.se, level=o.level, selves=ctx.selves)
        except (EstimationError, ConfigError) as exc:
            ctx.skip(ANALYSIS, str(exc), inp.name)
            return
    fitted = frame[frame["rating"].notna() & frame["reference"].notna()]
    n_by_judge = fitted.groupby("judge").size()
    # each judge's ratings of its own model's answers (the rows that identify γ_j), by
    # the fit's own rule (its self-scope)
    own_rows = (
        self_keys(fitted["judge"], ctx.selves).to_numpy()
        == self_keys(fitted["model"], ctx.selves).to_numpy()
    )
    own_by_judge = fitted[own_rows].groupby("judge").size()
    # a stray score, or few prompts to cluster by: every coefficient is read with it
    warn = res.warnings
    sb = res.self_bias()
    sb = sb[sb["judge"].astype(str).isin(chosen)]
    for _, r in sb.iterrows():
        term = f"self[{r['judge']}]"
        ctx.add(
            ANALYSIS,
            to_finding(
                ANALYSIS, SELF_BIAS, judge=str(r["judge"]), dataset=inp.name,
                estimate=r["estimate"], ci_low=r["lower"], ci_high=r["upper"],
                n=int(n_by_judge.get(r["judge"], res.n)), level=o.level, method=_method(res, r),
                clusters=res.term_prompts[term],
                detail=f"γ, {res.scale_note}; {int(own_by_judge.get(r['judge'], 0)):,} of "
                f"its own model's answers, on {counted(res.term_prompts[term], 'prompts')}",
                std_error=student_error(r["se"], df=r["df"], level=o.level),
                p_value=r["p"], warnings=(*warn, *res.few_prompts(term)), p_method="wald",
            ),
        )  # fmt: skip
    fams = dict(res.families)
    fb = res.family_bias()
    fb = fb[fb["family"].isin({fams.get(j) for j in chosen})]
    for _, r in fb.iterrows():
        members = sorted(j for j in judges if fams.get(j) == r["family"])
        n_fam = int(sum(n_by_judge.get(j, 0) for j in members))
        term = f"family[{r['family']}]"
        for j in (m for m in members if m in chosen):
            ctx.add(
                ANALYSIS,
                to_finding(
                    ANALYSIS, FAMILY_BIAS, judge=j, dataset=inp.name, estimate=r["estimate"],
                    ci_low=r["lower"], ci_high=r["upper"], n=max(n_fam, 1), level=o.level,
                    method=_method(res, r), clusters=res.term_prompts[term],
                    detail=f"λ pooled over the {r['family']} family's judges (its ratings "
                    f"on {counted(res.term_prompts[term], 'prompts')})",
                    std_error=student_error(r["se"], df=r["df"], level=o.level),
                    p_value=r["p"], warnings=(*warn, *res.few_prompts(term)),
                    p_method="wald",
                ),
            )  # fmt: skip
    _not_estimated(ctx, inp, res, sorted(chosen), set(sb["judge"]), set(fb["family"]))
    terms = _of_judges(res.tidy(), chosen, fams).reset_index(drop=True)
    texts, note = coefficient_texts(terms, o.level)
    own_df = res.own_df(terms)  # a term on fewer prompts: each term's df
    dims = res.scales["dimension"].astype(str).tolist()
    parts.tables.append(
        Table(
            slug("favoritism", inp.name),
            f"Favoritism coefficients — {inp.name}",
            coefficient_table(terms, o.level, dimensions=dims, df=own_df),
            columns=coefficient_columns(res, o.level, df=own_df),
            texts=texts,
            note=note,
        )
    )
    parts.notes.extend(f"{inp.name}: {n}" for n in _notes_of_judges(res.notes, chosen, fams))
    if res.n_excluded:
        parts.notes.append(
            f"{inp.name}: excluded from the fit: "
            + ", ".join(f"{v:,} {k}" for k, v in res.n_excluded.items())
        )
    with ctx.timed(f"favoritism figures ({inp.name})", ANALYSIS):
        if len(sb):
            parts.figures.append(
                fig.coefficients(
                    sb["judge"].astype(str).tolist(),
                    sb["estimate"].astype(float).tolist(),
                    sb["lower"].astype(float).tolist(),
                    sb["upper"].astype(float).tolist(),
                    id=slug("selfbias", inp.name), title=f"Self-bias γ_j — {inp.name}",
                    xlabel=f"extra {res.scale_note} for own completions ({percent(o.level)} CI)",
                    caption=red_caption(0.0, adjusted=o.fdr), format=o.figure_format,
                )
            )  # fmt: skip
        if len(fb):
            parts.figures.append(
                fig.coefficients(
                    fb["family"].astype(str).tolist(),
                    fb["estimate"].astype(float).tolist(),
                    fb["lower"].astype(float).tolist(),
                    fb["upper"].astype(float).tolist(),
                    id=slug("familybias", inp.name), title=f"Family bias λ_F — {inp.name}",
                    xlabel=(
                        f"extra {res.scale_note} for the family's other models "
                        f"({percent(o.level)} CI)"
                    ),
                    caption=red_caption(0.0, adjusted=o.fdr), format=o.figure_format,
                )
            )  # fmt: skip
        _score_matrix_figure(ctx, inp, chosen)
    _debiasing(ctx, inp, res, sorted(chosen))
    _robustness(ctx, inp, res, chosen)


def _method(res: FavoritismResult, row: pd.Series) -> str:
    """A finding's method: the fit's and its errors; with Student's t, the one that reads
    this term (``row`` of the coefficients: its ``df``) and the report's standard error
    scaled to it (:func:`~recuse.metrics.estimate.student_error`)."""
    if res.df is None:
        return f"{res.method}; SE {res.se_type}"
    return (
        f"{res.method}; SE {res.se_type}; this term's t on {row['df']:g} df, and the "
        "standard error reported the regression's times t/z, so that z times it is the "
        "interval's half-width"
    )


def _notes_of_judges(notes: Iterable[str], chosen: set[str], families: dict[str, str]) -> list[str]:
    """The fit's ``notes`` less those of a judge not ``chosen`` or of a family none of
    them is in (``self-bias of J not estimable: ...``, ``γ_j of J: no finite standard
    error ...``, and the same of λ_F): what --judge reports, as :func:`_of_judges`.

    >>> _notes_of_judges(["self-bias of b1 not estimable: x", "γ_j of a1: y", "z"],
    ...                  {"a1"}, {"a1": "a", "b1": "b"})
    ['γ_j of a1: y', 'z']
    """
    mine = {families[j] for j in chosen if j in families}
    theirs = [
        *(f"{w} of {j}{end}" for j in set(families) - chosen
          for w, end in (("self-bias", " "), ("γ_j", ":"))),
        *(f"{w} of {f}{end}" for f in set(families.values()) - mine
          for w, end in (("family-bias", " "), ("λ_F", ":"))),
    ]  # fmt: skip
    return [n for n in notes if not n.startswith(tuple(theirs))]


def _of_judges(terms: pd.DataFrame, chosen: set[str], families: dict[str, str]) -> pd.DataFrame:
    """The rows of ``terms`` (a fit's coefficients or robustness rows: ``kind`` and
    ``label``) that --judge reports: a judge's intercept, slope and γ_j for the
    ``chosen`` judges, λ_F for their families, and the terms every judge shares (the
    dimension effects). Without --judge every judge is chosen and every row kept.

    >>> t = pd.DataFrame({"kind": ["self", "self", "family", "family", "dimension"],
    ...                   "label": ["a1", "b1", "a", "b", "logic"]})
    >>> _of_judges(t, {"a1"}, {"a1": "a", "b1": "b"})["label"].tolist()
    ['a1', 'a', 'logic']
    """
    kind, label = terms["kind"].astype(str), terms["label"].astype(str)
    own = kind.isin(["judge", "slope", "self"])
    family = kind == "family"
    kept = (
        (own & label.isin(chosen))
        | (family & label.isin({families[j] for j in chosen if j in families}))
        | ~(own | family)
    )
    return terms[kept.to_numpy()]


def _not_estimated(
    ctx: Context,
    inp: Input,
    res: FavoritismResult,
    judges: list[str],
    with_self: set[str],
    with_family: set[str],
) -> None:
    """A not-estimated entry for each judge whose γ_j (or whose family's λ_F) the design
    leaves out, with the design's reason — as a pairwise metric's skip, so the summary,
    the matrix and the CLI say so, not only the section's notes."""
    fams = dict(res.families)

    def reason(prefix: str) -> str:
        said = [n for n in res.notes if n.startswith(prefix)]
        return said[0] if said else f"{prefix} not estimable: no usable ratings"

    for j in judges:
        if j not in with_self:
            why = reason(f"self-bias of {j}")
            if why.endswith(NEVER_OWN):  # its own answers perhaps under another name
                rated = generators_of(inp.frame, j)
                why += spelling_hint_words(j, rated, ctx.roster, columns="model")
                why += line_hint_words(j, rated, ctx.roster, self_scope=ctx.options.self_scope)
            ctx.skip(ANALYSIS, why, inp.name, j, bias=SELF_BIAS)
        f = fams.get(j)
        if f is not None and f not in with_family:
            ctx.skip(ANALYSIS, reason(f"family-bias of {f}"), inp.name, j, bias=FAMILY_BIAS)


def _debiasing(ctx: Context, inp: Input, res: FavoritismResult, judges: list[str]) -> None:
    """The correction: each model's mean score by ``judges`` (those chosen) with γ̂ and
    λ̂ taken out, and ranks."""
    mine = _of_judges(res.coefficients, set(judges), dict(res.families))
    if not corrects_anything(mine):  # none, or none with a standard error
        ctx.skip(
            ANALYSIS,
            "debiasing: no self- or family-bias term was estimated, so there is nothing to correct",
            inp.name,
            headline=False,
        )
        return
    with ctx.timed(f"favoritism debiasing ({inp.name})", ANALYSIS):
        try:
            eff = debias_effect(inp.frame, res, ctx.roster, judges=judges, selves=ctx.selves)
        except RecuseError as exc:
            ctx.skip(ANALYSIS, f"debiasing: {exc}", inp.name, headline=False)
            return
    parts = ctx.part(ANALYSIS)
    parts.tables.append(
        Table(
            slug("debiased", inp.name),
            f"Correction: mean score per model with self- and family-bias removed — {inp.name}",
            eff.table,
            columns=eff.columns(res.scale_note),
            texts={"change": eff.change_texts()},
        )
    )
    changed = "changes" if eff.ranking_changed else "does not change"
    parts.notes.append(
        f"{inp.name}: debiasing subtracts γ̂_j from judge j's ratings of its own model and "
        f"λ̂_F from its ratings of other models of its family ({res.scale_note}); it "
        f"{changed} the judges' model ranking, and Kendall's τ between that ranking and "
        f"the reference ranking goes {eff.taus}. The corrections are point estimates; their "
        "uncertainty is the coefficients' intervals above"
        + not_subtracted(mine)
        + on_few_prompts(res, mine)
        + "."
    )


def _score_matrix_figure(ctx: Context, inp: Input, judges: set[str]) -> None:
    """Figure 2 of Play Favorites: mean normalised score, judge × model, own cells
    outlined; the rows of ``judges`` (those chosen), normalised over every judge's
    ratings as in the whole audit."""
    parts = ctx.part(ANALYSIS)
    try:
        sm = score_matrix(inp.frame, ctx.roster)
    except RecuseError as exc:
        ctx.skip(ANALYSIS, f"judge × model heat map: {exc}", inp.name)
        return
    keep = sm.means.index.astype(str).isin(list(judges))
    sm = dataclasses.replace(sm, means=sm.means[keep], self_cells=sm.self_cells[keep], n=sm.n[keep])
    means = sm.with_reference
    colour = sm.normalize_rows(means)
    highlight = np.vstack([sm.self_cells.to_numpy(bool), np.zeros((1, means.shape[1]), dtype=bool)])
    parts.figures.append(
        fig.heatmap(
            colour.to_numpy(float),
            rows=list(means.index),
            cols=[str(c) for c in means.columns],
            annotations=means.to_numpy(float),
            id=slug("heat", inp.name),
            title=f"Mean score, judge × model — {inp.name}",
            caption=(
                f"Mean {sm.normalize}-normalised rating each judge (row) gives each model's "
                "completions (column), all dimensions pooled; last row: the reference "
                "(human) score. Colour: the row's values centred and divided by the row's "
                "range (Figure 2 of Play Favorites). Outlined: the judge's own completions. "
                "Descriptive; the regression is the estimate."
            ),
            highlight=highlight,
            scale_label=sm.ROW_NORMALIZED,
            last_row=str(means.index[-1]),
            format=ctx.options.figure_format,
        )
    )

    def long(wide: pd.DataFrame, name: str) -> pd.DataFrame:
        out = wide.copy()
        out.index = out.index.astype(str).rename("judge")
        return out.reset_index().melt(id_vars="judge", var_name="model", value_name=name)

    tidy = long(sm.means, "mean").dropna(subset=["mean"])
    n = long(sm.n, "n")
    parts.tables.append(
        Table(
            slug("score-matrix", inp.name),
            f"Mean normalised score, judge × model — {inp.name}",
            tidy.merge(n, on=["judge", "model"]),
            show=False,
            columns={
                "judge": "the judge (a row of the heat map)",
                "model": "the model whose completions it rated",
                "mean": f"its mean {sm.normalize}-normalised rating of them, all dimensions "
                "pooled (the human reference's are the debiased table's reference)",
                "n": "the ratings averaged",
            },
        )
    )


def _announce(ctx: Context, inp: Input, p: CheckEvent) -> None:
    if p.stage == "start" and p.check != "main":
        ctx.step(f"robustness check {p.step}/{p.total}: {p.check} ({inp.name})")


def _robustness(ctx: Context, inp: Input, main: FavoritismResult, judges: set[str]) -> None:
    """The regression's robustness battery (the checks in ``options.robustness``), its
    variants fitted on every judge's ratings as the main fit is, its rows those of
    ``judges`` (the chosen ones) and their families."""
    o = ctx.options
    chosen = list(CHECKS) if o.robustness == ("all",) else list(o.robustness)
    not_run = [c for c in CHECKS if c not in chosen]
    if not chosen:
        return
    with ctx.timed(f"favoritism robustness battery ({inp.name})", ANALYSIS):
        try:
            data = (
                inp.frame if ctx.selves is None
                else prepare(inp.frame, ctx.roster, selves=ctx.selves)
            )  # fmt: skip
            bat = battery(
                data, ctx.roster, checks=chosen, se=o.se, level=o.level, main=main,
                progress=lambda p: _announce(ctx, inp, p),
            )  # fmt: skip
        except RecuseError as exc:
            ctx.skip(ANALYSIS, f"robustness battery: {exc}", inp.name)
            return
    for name, reason in bat.skipped.items():
        ctx.skip(ANALYSIS, f"robustness check {name}: {reason}", inp.name, headline=False)
    if not_run:
        ctx.skip(
            ANALYSIS,
            f"robustness checks not run (slow; ask for them with --robustness all): "
            f"{', '.join(not_run)}",
            inp.name,
            headline=False,
        )
    table = _of_judges(bat.table(), judges, dict(main.families)).reset_index(drop=True)
    parts = ctx.part(ANALYSIS)
    parts.tables.append(
        Table(
            slug("robustness", inp.name),
            f"Robustness: self- and family-bias under each check — {inp.name}",
            table,
            show=False,
            columns=COMPARISON_COLUMNS,
        )
    )
    # the self-bias of each judge across variants, as one coefficient plot per kind
    for kind, what in (("self", "self-bias γ_j"), ("family", "family bias λ_F")):
        t = table[(table["kind"] == kind) & table["lower"].notna()]
        if t.empty:
            continue
        wide = t.pivot_table(
            index="label", columns="variant", values="significant", aggfunc="first"
        )
        agree = wide.apply(lambda r: f"{int(r.sum())} of {int(r.notna().sum())}", axis=1)
        parts.notes.append(
            f"{inp.name}: {what}: in how many of the fitted variants its interval "
            "excludes 0 (each interval alone, not the summary's flag, which is adjusted "
            "for multiple tests and reads an interval within the bias's threshold as "
            "negligible) — " + "; ".join(f"{label}: {v}" for label, v in agree.items())
        )
    parts.notes.append(
        f"{inp.name}: robustness checks run: {', '.join(chosen)} "
        f"({sum(bat.seconds.values()):.1f} s); every variant's coefficients are in the "
        f"table 'Robustness: self- and family-bias under each check — {inp.name}' "
        f"(n_term: {COMPARISON_COLUMNS['n_term']}; n_fit: {COMPARISON_COLUMNS['n_fit']})"
    )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Play Favorites' regression (Spiliopoulou et al., Eq. 1): the judge's rating "
        "explained by the independent reference score with judge-specific intercepts and "
        "slopes; γ_j is the extra score judge j gives its own completions (self-bias), λ_F "
        "the extra score judges of family F give the family's other models (family bias). "
        "OLS with robust standard errors (cluster-robust by prompt unless --se names "
        "another; the paper's were White's, --se HC0, which read narrower or wider where "
        "a prompt's ratings move together), Wald intervals (cluster-robust: Student's t on "
        "the prompts holding the term's ratings less one); scores normalised per dimension."
    ),
    requires="ratings with an independent reference score, from judges that also "
    "generated some of the rated answers",
    needs=_needs,
    estimable=_estimable,
    build=_build,
)
