"""``recuse audit``: run every analysis the data supports and assemble the report.

The driver: resolve the inputs (:mod:`recuse.data.inputs`), record the rows each
analysis leaves out (exclusions), pick the registered analyses
(:data:`recuse.analyses.REGISTRY`) that apply to each input and whose ``needs`` are
met (the others are skipped with the reason, never reported as a zero), run the one
shared cluster bootstrap of the pairwise metrics they ask for, let each build its
section, and wrap everything with provenance into a
:class:`~recuse.report.model.Report`. What each analysis needs: ``recuse analyses``.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.analyses import REGISTRY, selected
from recuse.analyses.base import (
    BOOTSTRAP_WORDS,
    FAST_CHECKS,
    Analysis,
    AuditOptions,
    AuditProgress,
    Context,
    unedited,
)
from recuse.data.columns import ColumnMapping
from recuse.data.importers import ImportFormat, References
from recuse.data.inputs import Input, load_input, load_inputs
from recuse.data.model_names import UnknownModels
from recuse.data.reading_notes import read_in_orders
from recuse.data.value_maps import ValueReading
from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import one_blas_thread
from recuse.metrics.summary import PairwiseBias, pairwise_bias
from recuse.metrics.verdicts import Orders, human_ties_noun, use_orders
from recuse.numbers import percent
from recuse.reference import REFERENCE_NAMES, ReferenceKind, reword
from recuse.report.model import (
    AuditReport,
    Exclusion,
    Figure,
    Finding,
    NotEstimated,
    Provenance,
    Section,
    Table,
)
from recuse.report.multiplicity import adjust_sections
from recuse.roster import Roster
from recuse.tables import TableKind, reject_human_ties

__all__ = ["FAST_CHECKS", "AuditOptions", "audit", "load_input", "run_audit"]


# -------------------------------------------------------------------- exclusions


#: the reason rows without a judge are left out, and what of: every analysis of a
#: judge's verdicts, where it said "nothing to assess" of "all" analyses while the
#: verbosity section's human baselines read their labels (mt-bench-human: 693 of its
#: 910 human-only rows in the humans' length preference)
NO_JUDGE = "no judge verdict (human-only rows: no judge's bias to assess)"
JUDGED_ANALYSES = "every analysis of a judge's verdicts"
LABELS_READ = (
    f"{JUDGED_ANALYSES}; not the verbosity section's human baselines, which read their labels"
)


def no_judge_applies_to(rows: pd.DataFrame) -> str:
    """What rows without a judge verdict are left out of: every analysis of a judge's
    verdicts, and, where they hold human labels, not the humans' own length baselines
    of the verbosity section, which read them.

    >>> no_judge_applies_to(pd.DataFrame({"human": [None, None]}))
    "every analysis of a judge's verdicts"
    """
    labelled = "human" in rows.columns and bool(rows["human"].notna().any())
    return LABELS_READ if labelled else JUDGED_ANALYSES


def _pairs_exclusions(ctx: Context, inp: Input, frame: pd.DataFrame) -> None:
    judged = frame["judge"].notna()
    no_judge = int((~judged).sum())
    if no_judge:
        applies = no_judge_applies_to(frame[~judged])
        ctx.exclusions.append(Exclusion(inp.name, NO_JUDGE, no_judge, len(frame), analysis=applies))
    statuses = [c for c in ("status_first", "status_second") if c in frame.columns]
    for judge, rows in frame[judged].groupby("judge", sort=True):
        total = len(rows)
        j = str(judge)

        def add(
            reason: str, mask: pd.Series, analysis: str, j: str = j, total: int = total
        ) -> None:
            count = int(mask.sum())
            if count:
                ctx.exclusions.append(Exclusion(inp.name, reason, count, total, j, analysis))

        bad = pd.Series(False, index=rows.index)
        for c in statuses:
            bad |= rows[c].isin(["unparsed", "failed"])
        no_verdict = rows["p_a"].isna()
        add("verdict unparsed or failed in every judged order", no_verdict & bad, "all")
        add("no verdict recorded", no_verdict & ~bad, "all")
        if len(statuses) == 2:
            one = rows["p_a"].notna() & bad
            add(
                "one order unparsed or failed: left out of position, which needs both "
                "orders (the other analyses use the other order's verdict)",
                one,
                "position",
            )
        human = rows["human"]
        add("no human label", human.isna() & rows["p_a"].notna(), "EO, verbosity")
        tied = (human == 0.5) & rows["p_a"].notna()  # error: none (refused before)
        o = ctx.options
        said = o.ties_said()  # split: named as the user set it
        out_of = TIES_LEFT_OUT[o.ties].replace(f"--human-ties {o.ties}", said)
        add(_tie_reason(rows, tied.to_numpy()), tied, out_of)
        unknown = rows["model_a"].isna() | rows["model_b"].isna()
        add("generator of a response unknown", unknown & rows["p_a"].notna(), "self/family")


#: the analyses a human tie is left out of, by ``--human-ties``: split counts it half in
#: EO and verbosity, but agreement's accuracy, calibration and certification leave it out
#: whatever the option (their own rule): under split the audit's exclusions said nothing
#: of the 59 tied pairs per judge behind an accuracy from 141 of 200
TIES_LEFT_OUT: dict[str, str] = {
    "drop": "EO, verbosity, agreement accuracy, calibration, certification",
    "split": "agreement accuracy, calibration, certification (their own rule; EO and "
    "verbosity count them ½: --human-ties split)",
}


def _tie_reason(rows: pd.DataFrame, tied: NDArray[np.bool_]) -> str:
    """The exclusion's reason for labels of 0.5: "human tie", or "human label 0.5 (tied
    or evenly split votes)" where such a label is the share of several votes."""
    noun = human_ties_noun(rows, tied)
    return "human tie" if noun == "human ties" else "human label 0.5 (tied or evenly split votes)"


def _ratings_exclusions(ctx: Context, inp: Input, frame: pd.DataFrame) -> None:
    for judge, rows in frame.groupby("judge", sort=True):
        total = len(rows)
        status = rows["status"].fillna("ok") if "status" in rows else pd.Series("ok", rows.index)
        for s in ("unparsed", "failed", "missing"):
            count = int((status == s).sum())
            if count:
                ctx.exclusions.append(
                    Exclusion(inp.name, f"rating {s}", count, total, str(judge), "favoritism")
                )
        count = int((rows["reference"].isna() & rows["rating"].notna()).sum())
        if count:
            ctx.exclusions.append(
                Exclusion(inp.name, "no reference score", count, total, str(judge), "favoritism")
            )


# ------------------------------------------------------------------------ driver


def _shared_bootstrap(ctx: Context, inp: Input, ready: Sequence[Analysis]) -> PairwiseBias | None:
    """One cluster bootstrap of every pairwise metric the ready analyses ask for, for the
    judges of ``inp`` (those of ``--judge``), over its whole table (``every_judge``)."""
    metrics = [m for a in ready for m in a.metrics]
    if not metrics or inp.table != "pairs":
        return None
    o = ctx.options
    judges = sorted(str(j) for j in inp.frame["judge"].dropna().unique())
    with ctx.timed(f"pairwise metrics, bootstrap ({inp.name})"):
        # the whole table, as `recuse metrics pairs` and the library read it, --judge or
        # not: rows with a human label and no judge, and the other judges' rows, add
        # their prompts to the resampled ones (the same draws, so the same intervals from
        # the same seed) and the humans' labels to their verbosity curve (Figure 4); and
        # the calibrated estimate's choice of exact or one-step resamples counts every
        # judge of the table (competence.table_judges), so `--judge gpt-4` reads GPT-4's
        # interval as the whole audit and `recuse metrics pairs --judge gpt-4` do
        shared = pairwise_bias(
            inp.every_judge,
            ctx.roster,
            judges=judges,
            metrics=metrics,
            boot=o.resampling,
            min_n=o.min_n,
            orders=o.orders,
            orders_said=o.said("orders"),
            selves=ctx.selves,
            human_ties=o.ties,
        )
    total = ctx.timings[-1][1]
    # where the bootstrap's time went: each metric's terms and share of the resampling
    # (a slow report names its cause), then each analysis its metrics' seconds and an
    # even share of the rest
    for metric, seconds in sorted(shared.seconds.items(), key=lambda kv: -kv[1]):
        ctx.timings.append((f"  {metric}: {o.n_boot} resamples ({inp.name})", seconds))
    users = [a for a in ready if a.metrics]
    rest = total
    for metric, seconds in shared.seconds.items():
        readers = [a for a in users if metric in a.metrics]
        for a in readers:
            ctx.part(a).seconds += seconds / len(readers)
        rest -= seconds if readers else 0.0
    for a in users:
        ctx.part(a).seconds += max(rest, 0.0) / len(users)
    return shared


def _notes_in_orders(inp: Input, orders: Orders) -> Input:
    """The input without the reading notes that ``orders`` (one order read) makes untrue
    (:func:`~recuse.data.reading_notes.read_in_orders`)."""
    if inp.table != "pairs":
        return inp
    notes = read_in_orders(inp.source.notes, inp.frame, orders=orders)
    return (
        inp if notes == inp.source.notes else replace(inp, source=replace(inp.source, notes=notes))
    )


def _both_tables(inp: Input, change: Callable[[pd.DataFrame], pd.DataFrame]) -> Input:
    """``inp`` with ``change`` made to its rows and to its whole table (``Input.whole``)."""
    whole = None if inp.whole is None else change(inp.whole)
    return replace(inp, frame=change(inp.frame), whole=whole)


def _audit_input(ctx: Context, inp: Input, analyses: Sequence[Analysis]) -> None:
    """Run ``analyses`` on ``inp`` (its rows of the judges chosen; ``inp.whole``: its
    table before ``--judge``, which the shared bootstrap resamples)."""
    orders, name = ctx.options.orders, inp.name
    if inp.table == "pairs" and orders != "both":  # one order for every analysis
        said = ctx.options.said("orders")
        inp = _both_tables(inp, lambda t: use_orders(t, orders, source=name, said=said))
    frame = inp.frame
    # a probe table's edited and self-recognition rows are for the analyses that read
    # them; every other analysis sees the original pairs only
    original = _both_tables(inp, unedited)
    ready = []
    for a in analyses:
        if a.table != inp.table:
            kind = "pairwise verdicts" if a.table == "pairs" else "absolute scores"
            ctx.skip(a, f"needs a {a.table} table ({kind}); this is {inp.table}", inp.name)
            continue
        reason = a.needs(frame if a.reads_probes else original.frame, ctx.roster)
        if reason:
            ctx.skip(a, reason, inp.name)
            if a.unjudged is not None:  # what the data gives without a judge
                a.unjudged(ctx, original)
        else:
            ready.append(a)
    if inp.table == "pairs":
        _pairs_exclusions(ctx, inp, frame)
    else:
        _ratings_exclusions(ctx, inp, frame)
    if any(a.metrics for a in ready):
        ctx.step(f"pairwise metrics, one bootstrap ({inp.name})")
    shared = _shared_bootstrap(ctx, original, ready)
    for a in ready:
        ctx.step(f"{a.title} ({inp.name})")
        before, start = ctx.part(a).seconds, time.perf_counter()
        a.build(ctx, inp if a.reads_probes else original, shared)
        _time_the_rest(ctx, a, inp.name, time.perf_counter() - start, ctx.part(a).seconds - before)
        ctx.ran.add(a.id)


#: seconds of an analysis's build outside its own timed steps below which ``--profile``
#: adds them to the analysis without a line of their own
REST_LINE_S = 0.05


def _time_the_rest(ctx: Context, a: Analysis, name: str, wall: float, timed: float) -> None:
    """Count an analysis's whole build in ``--profile``: the seconds outside its own timed
    steps (``wall - timed``; all of them for one that times none, such as the
    certification's thirty figures of thirty judges, 6 s untold before) go to the
    analysis, with a line of their own when it timed no step (and they are
    :func:`_shown`) or they reach :data:`REST_LINE_S`."""
    rest = max(wall - timed, 0.0)
    ctx.part(a).seconds += rest
    if timed == 0.0:
        if _shown(rest):
            ctx.timings.append((f"{a.title} ({name})", rest))
    elif rest >= REST_LINE_S:
        ctx.timings.append((f"{a.title}: the rest, outside the steps above ({name})", rest))


def _shown(seconds: float) -> bool:
    """Whether ``seconds`` print as more than ``0.00 s`` (``--profile``'s two decimals):
    an analysis that took less has no line."""
    return f"{seconds:.2f}" != "0.00"


def _filter_judges(inputs: Sequence[Input], judges: tuple[str, ...]) -> list[Input]:
    """Each input holding a judge of ``judges`` (every input where none is given) with
    only those judges' rows, its whole table kept beside them (``Input.whole``)."""
    if not judges:
        return list(inputs)
    out = []
    for inp in inputs:
        if not set(judges) & set(inp.source.judges):
            continue
        frame = inp.frame[inp.frame["judge"].isin(judges)].reset_index(drop=True)
        out.append(replace(inp, frame=frame, whole=inp.frame))
    return out


def _unique_names(inputs: Sequence[Input]) -> list[Input]:
    """Inputs that share a name (two files called pairs.csv in different folders, or
    the same dataset twice) renamed apart — by their folder where that tells them apart,
    else with a number — since findings, skips, figures and tables are keyed by it."""
    counts: dict[str, int] = {}
    for i in inputs:
        counts[i.name] = counts.get(i.name, 0) + 1
    if all(c == 1 for c in counts.values()):
        return list(inputs)

    def folder(i: Input) -> str:
        is_file = bool(i.source.location) and i.source.files == (i.name,)
        return Path(i.source.location).parent.name if is_file else ""

    taken = {i.name for i in inputs if counts[i.name] == 1}
    out = []
    for i in inputs:
        name = i.name
        if counts[name] > 1:
            if folder(i):
                name = f"{folder(i)}/{name}"
            n = 2
            base = name
            while name in taken:
                name = f"{base} ({n})"
                n += 1
        taken.add(name)
        out.append(replace(i, name=name, source=replace(i.source, name=name)))
    return out


def run_audit(
    inputs: Sequence[Input],
    *,
    options: AuditOptions | None = None,
    roster: Roster | None = None,
    title: str = "recuse audit",
    timings: Sequence[tuple[str, float]] = (),
    progress: AuditProgress | None = None,
) -> AuditReport:
    """Every analysis the inputs support, as a :class:`~recuse.report.model.Report`.

    ``timings`` (label, seconds) from earlier steps (e.g. loading) are kept in the
    report's timings ahead of the analyses'. ``progress`` is called with a line
    naming each step as it starts (the CLI prints them, so a long audit is not silent).
    """
    o = options or AuditOptions()  # checked as it was made
    if not inputs:
        raise InputError("nothing to audit", fix="give at least one dataset name or file")
    analyses = selected(o)
    if not analyses:
        raise ConfigError("--only/--skip leave no analysis to run — see `recuse analyses`")
    roster = roster or Roster.builtin()
    inputs = [_notes_in_orders(i, o.orders) for i in _unique_names(inputs)]
    if o.judges:  # named as in the data, for every analysis that reads them
        present = {j for i in inputs for j in i.source.judges}
        o = replace(o, judges=tuple(roster.judge_in(j, present) for j in o.judges))
    ctx = Context(o, roster, progress=progress)
    ctx.timings.extend(timings)
    # the analyses run on one BLAS thread. Their products and factorisations are thin
    # (rows × a few dozen columns: the Bradley–Terry and length-controlled GLMs, the
    # favoritism regressions, k × k solves), where a second thread only waits on the
    # first: ``recuse audit llmbar-mtbench play-favorites hh-rlhf alpaca-eval`` on a
    # quiet 2-core machine takes the same wall time either way (8.9–9.3 s) and 10.2 s of
    # CPU with one thread for 12.9 s with two (two runs each, alternated); on that
    # machine shared with other jobs, 31.8 s wall with two threads and 18.3 s with one
    # (the alpaca-eval leaderboard 4.97 s and 1.25 s, the favoritism robustness battery
    # 3.72 s and 0.89 s). The numbers move by rounding only (at most 1e-14 relative: a
    # product split over two threads adds in another order). Audits run at once in
    # threads share the limit (the threads found before the first are back after the last).
    if o.human_ties == "error":  # every input checked before any analysis runs
        for inp in inputs:
            if inp.table == "pairs" and "human" in inp.frame:
                reject_human_ties(inp.every_judge, file=inp.name)  # as `metrics pairs` does
    with one_blas_thread():
        for inp in _filter_judges(inputs, o.judges):
            _audit_input(ctx, inp, analyses)
    sections = []
    for an in analyses:
        p = ctx.part(an)
        # a section with only notes says why it estimated nothing (one line); one with
        # only headlines (a tool's number refused: "not computed: ...") keeps them
        if not (p.findings or p.figures or p.tables or p.notes or p.headlines):
            continue
        sections.append(
            Section(
                id=an.id, title=an.title, intro=an.intro, findings=tuple(p.findings),
                figures=tuple(p.figures), tables=tuple(p.tables), notes=tuple(p.notes),
                headlines=tuple(p.headlines), seconds=round(p.seconds, 3),
                baselines=tuple(p.baselines),
            )
        )  # fmt: skip
    baselines = any(p.baselines for p in ctx.parts.values())  # numbers without a judge
    if o.only and not ctx.ran and not baselines:  # asked for these only, and none applies
        why = "; ".join(f"{k.analysis}: {k.said}" for k in ctx.skipped[:3])
        raise InputError(
            f"--only {','.join(o.only)}: no chosen analysis applies to the data — {why}",
            fix="see `recuse analyses` for what each analysis needs",
        )
    # tables of different inputs with the same name (e.g. judge-model-heat) get a suffix
    seen: dict[str, int] = {}
    fixed = []
    for s in sections:
        tables = []
        for t in s.tables:
            seen[t.name] = seen.get(t.name, 0) + 1
            tables.append(t if seen[t.name] == 1 else replace(t, name=f"{t.name}-{seen[t.name]}"))
        fixed.append(replace(s, tables=tuple(tables)))
    headlines = {a.id: a.headline.key for a in REGISTRY}
    fixed = [_with_materiality(s, o, headlines) for s in fixed]
    fixed = [_in_reference_words(s, inputs) for s in fixed]
    fdr_note = ""
    if o.fdr:
        fixed, fdr_note = adjust_sections(fixed, level=o.level, n_boot=o.n_boot)
    provenance = Provenance(
        sources=tuple(i.source for i in inputs),
        recuse_version=_version(),
        recuse_commit=_git_commit(Path(__file__).resolve().parent),
        options=o.to_dict(),
        seed=o.seed,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        python=platform.python_version(),
        packages=_packages(),
        option_sources=_option_sources(o),
    )
    notes = (
        f"Intervals: {percent(o.level)}; pairwise metrics: {BOOTSTRAP_WORDS}; {o.n_boot} "
        f"resamples, seed {o.seed}; the regression uses {o.se} robust standard errors.",
        *(
            f"In {i.name} the reference label is {i.source.label}, not a human judgment: "
            f"its findings and reasons are worded for {REFERENCE_NAMES[i.source.reference]}"
            + (
                "; where a text shared with other datasets says human(s), read that label."
                if len({j.source.reference for j in inputs}) > 1
                else "."
            )
            for i in inputs
            if i.source.label not in ("", "human preference")
        ),
        *((fdr_note,) if fdr_note else ()),
        *(note for i in inputs for note in i.source.notes),
    )
    return AuditReport(
        title=title,
        sections=tuple(fixed),
        skipped=tuple(_reword_skip(s, inputs) for s in _collapse(ctx.skipped, inputs)),
        exclusions=tuple(ctx.exclusions),
        provenance=provenance,
        level=o.level,
        notes=notes,
        timings=tuple((k, round(v, 4)) for k, v in ctx.timings),
        analyses=tuple(
            (an.title, tuple(b.key for b in an.biases if b.headline)) for an in analyses
        ),
    )


def _option_sources(o: AuditOptions) -> dict[str, str]:
    """Where each of the run's options came from (:attr:`AuditOptions.sources`), keyed
    by the option's flag (:meth:`recuse.options.Settings.option_sources`)."""
    from recuse.options import Settings

    return Settings(sources=dict(o.sources)).option_sources()


def _with_materiality(
    section: Section, o: AuditOptions, headlines: Mapping[str, str] | None = None
) -> Section:
    """Each finding with the smallest effect worth acting on: ``--material`` for its bias
    key, else for the analysis id whose headline it is (``headlines``: id -> bias key, so
    ``verbosity=0.1`` sets the prefer-longer gap's), else its bias's default."""
    by_key = {key: o.material[i] for i, key in (headlines or {}).items() if i in o.material}
    by_key.update(o.material)  # a bias key given as such wins over an analysis id
    findings = tuple(
        replace(f, material=by_key.get(f.bias.key, f.bias.material)) for f in section.findings
    )
    return replace(section, findings=findings)


def _references(inputs: Sequence[Input]) -> dict[str, ReferenceKind]:
    return {i.name: i.source.reference for i in inputs}


#: the columns of a report's table that hold sentences, worded for the labels as the
#: findings are (a finding's warnings, a rung's definition, a curve's note)
PROSE_COLUMNS = ("warnings", "definition", "note")


def _in_reference_words(section: Section, inputs: Sequence[Input]) -> Section:
    """The section in the words of each dataset's labels (:mod:`recuse.reference`): each
    finding's bias (unit, verdict words), method, detail and warnings for its dataset's
    labels; each note, headline, figure's words, table title and table's sentences
    (:data:`PROSE_COLUMNS`) for the labels of the datasets it names, or, naming none, of
    every input when they share one kind; the intro for the labels every input shares
    (else as written, for human labels, with the report's note on the others)."""
    refs = _references(inputs)
    if set(refs.values()) == {"human"}:
        return section
    shared = set(refs.values())
    every: ReferenceKind | None = next(iter(shared)) if len(shared) == 1 else None

    def finding(f: Finding) -> Finding:
        kind = refs.get(f.dataset, "human")
        if kind == "human":
            return f
        return replace(
            f,
            bias=f.bias.for_reference(kind),
            method=reword(f.method, kind),
            detail=reword(f.detail, kind),
            warnings=tuple(reword(w, kind) for w in f.warnings),
        )

    def text(said: str, *, about: str | None = None) -> str:
        about = said if about is None else about
        named = [d for d in refs if about.startswith(f"{d}:") or f" {d}" in about]
        kinds = {refs[d] for d in named} if named else ({every} if every else set())
        return reword(said, kinds.pop()) if len(kinds) == 1 else said

    def table(t: Table) -> Table:
        """Its title, the sentences in its cells (:data:`PROSE_COLUMNS`) and its columns'
        words (``Table.columns``: the certification curve's n_labelled read "pairs with a
        human preference" on JudgeBench's correctness labels); the column names are the
        CSV's and stay."""
        columns = {c: text(said, about=t.title) for c, said in t.columns.items()}
        words = [c for c in t.frame.columns if c in PROSE_COLUMNS]
        if not words:
            return replace(t, title=text(t.title), columns=columns)
        frame = t.frame.copy()
        for c in words:
            frame[c] = frame[c].map(lambda v: text(v, about=t.title) if isinstance(v, str) else v)
        # the page's own texts of those columns (an estimates table's warnings) alike
        texts = {
            c: [text(v, about=t.title) for v in vs] if c in PROSE_COLUMNS else vs
            for c, vs in t.texts.items()
        }
        return replace(t, title=text(t.title), frame=frame, columns=columns, texts=texts)

    def figure(fig: Figure) -> Figure:
        about = f"{fig.title} {fig.caption} {fig.alt}"
        return replace(
            fig,
            title=text(fig.title, about=about),
            caption=text(fig.caption, about=about),
            alt=text(fig.alt, about=about),
        )

    return replace(
        section,
        findings=tuple(finding(f) for f in section.findings),
        intro=reword(section.intro, every) if every else section.intro,
        notes=tuple(text(n) for n in section.notes),
        headlines=tuple(text(h) for h in section.headlines),
        figures=tuple(figure(g) for g in section.figures),
        tables=tuple(table(t) for t in section.tables),
    )


def _reword_skip(skip: NotEstimated, inputs: Sequence[Input]) -> NotEstimated:
    """A skip's reason and bias in the words of its dataset's labels."""
    kind = _references(inputs).get(skip.dataset, "human")
    if kind == "human":
        return skip
    bias = skip.bias.for_reference(kind) if skip.bias is not None else None
    return replace(skip, reason=reword(skip.reason, kind), bias=bias)


def _collapse(skipped: list[NotEstimated], inputs: Sequence[Input]) -> list[NotEstimated]:
    """One row for a reason shared by every judge of a dataset; duplicates dropped."""
    judges = {i.name: set(i.source.judges) for i in inputs}
    groups: dict[NotEstimated, set[str]] = {}  # keyed by the skip with its judge blanked
    for s in skipped:
        groups.setdefault(replace(s, judge=""), set()).add(s.judge)
    out = []
    for s, js in groups.items():
        named = js - {""}
        if named and named == judges.get(s.dataset, set()) and len(named) > 1:
            out.append(replace(s, all_judges=len(named)))
        elif not named:
            out.append(s)
        else:
            out.extend(replace(s, judge=j) for j in sorted(named))
    return out


def _version() -> str:
    try:
        return importlib.metadata.version("recuse")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _packages() -> dict[str, str]:
    out = {}
    for name in ("numpy", "pandas", "scipy", "statsmodels", "matplotlib"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _git_commit(folder: Path) -> str | None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, timeout=5, check=True
        )
        return done.stdout.strip()

    try:
        out = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{out}{' (with uncommitted changes)' if dirty else ''}" if out else None


def audit(
    data: Sequence[str | Path],
    *,
    options: AuditOptions | None = None,
    table: TableKind | None = None,
    data_dir: str | Path | None = None,
    roster: Roster | None = None,
    mapping: ColumnMapping | None = None,
    unknown_models: UnknownModels = "keep",
    title: str = "recuse audit",
    progress: AuditProgress | None = None,
    format: ImportFormat | None = None,
    reading: ValueReading | None = None,
    references: References | None = None,
) -> AuditReport:
    """Load each of ``data`` (dataset names or files) and audit them together
    (``mapping``, ``unknown_models``, ``format`` and ``reading``: see :func:`load_input`;
    ``format`` reads every file as that foreign format, see :mod:`recuse.data.importers`;
    ``references``: where a ratings file's reference comes from)."""
    roster = roster or Roster.builtin()
    loaded = []
    timings = []
    for spec in data:
        start = time.perf_counter()
        loaded.extend(
            load_inputs(
                spec, table=table, data_dir=data_dir, roster=roster, mapping=mapping,
                unknown_models=unknown_models, format=format, reading=reading,
                references=references,
            )
        )  # fmt: skip
        timings.append((f"load {spec}", time.perf_counter() - start))
    return run_audit(
        loaded, options=options, roster=roster, title=title, timings=timings, progress=progress
    )


def profile_lines(report: AuditReport) -> list[str]:
    """Where an audit's time went, as lines for a terminal: each timed step in run order
    (the shared bootstrap followed, indented, by each metric's seconds and resamples:
    building its terms and its share of the resampling, slowest first), then each
    analysis's seconds (its whole build, see :func:`_time_the_rest`, and its share of
    the shared bootstrap), slowest first, those :func:`_shown`. Report writing is not
    included."""
    lines = ["where the time went (seconds; steps in run order):"]
    lines += [f"{seconds:8.2f} s  {label}" for label, seconds in report.timings]
    timed = sorted(
        (s for s in report.sections if _shown(s.seconds or 0.0)), key=lambda s: -(s.seconds or 0)
    )
    if timed:
        lines.append("per analysis (its whole build and its share of the shared bootstrap):")
        lines += [f"{s.seconds or 0.0:8.2f} s  {s.title} ({s.id})" for s in timed]
    return lines
