"""The summary as one compact table: judge × bias, estimate [interval], n, reading.

The terminal opens with it (:func:`summary_text`, a pipe table as evaluation harnesses
print their task tables), and a notebook shows the same summary as a judge × bias
matrix (:func:`summary_html`). Both are built from :meth:`AuditReport.summary` — the
headline findings of each judge and the headline biases it could not be estimated
for — so they never disagree with the HTML page or ``report.json``.

Each row's *reading* is one word from the finding (:func:`reading`):

- ``material`` / ``small`` — flagged (:attr:`Finding.flagged`: the interval excludes
  the no-bias value, after the audit's false-discovery adjustment, and is not
  negligible), at least / less than the bias's material threshold from no bias;
  ``flagged`` when the bias declares no threshold. An arrow says the side (▲ above
  no bias, ▼ below);
- ``negligible`` — the whole interval lies within ± the threshold of no bias, whether
  or not it excludes it: neutral, never a flag;
- ``no detectable bias`` — the interval includes no bias and is too wide to rule a
  material bias out (the data could not tell, not that the bias is absent);
- ``unflagged after adjustment`` — the interval excludes no bias, but the
  false-discovery-adjusted test across the summary does not flag it
  (:attr:`Finding.adjusted_away`); its note gives the q-value
  (:attr:`Finding.adjustment_note`: "excludes no bias before adjustment; q = 0.197 >
  0.1"), so the row never shows an interval outside no bias with no word why;
- ``quality score`` — agreement or calibration, never a flag;
- ``unadjusted, not a flag`` — a number the bias declares unadjusted (the papers'
  equal opportunity, high for a strong judge with no bias), shown for what it is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape

from recuse.bootstrap_rules import Extrapolation
from recuse.numbers import percent
from recuse.report.extrapolated import EXTRAPOLATED_TAG, fold_extrapolated
from recuse.report.labels import fdr_adjusted
from recuse.report.model import (
    AuditReport,
    Baseline,
    Finding,
    NotEstimated,
    SummaryRow,
    estimate_key,
)
from recuse.terminal import one_line

__all__ = [
    "SummaryLine",
    "judge_line",
    "nothing_in_table",
    "reading",
    "source_lines",
    "summary_html",
    "summary_lines",
    "summary_sentences",
    "summary_text",
]

DASH = "—"
ARROWS = {"positive": "▲", "negative": "▼"}


def reading(finding: Finding) -> str:
    """The finding's reading in one or two words (see the module docstring)."""
    if finding.bias.kind == "quality":
        return "quality score"
    if not finding.bias.flags:  # e.g. equal opportunity: not adjusted for competence
        return "unadjusted, not a flag"
    if finding.flagged:
        word = finding.materiality or "flagged"
        return f"{ARROWS.get(finding.direction, '')} {word}".strip()
    if finding.materiality == "negligible":
        return "negligible"
    if finding.adjusted_away:
        return "unflagged after adjustment"
    return "no detectable bias"


@dataclass(frozen=True)
class SummaryLine:
    """One row of the compact summary: a judge's headline bias on one dataset."""

    judge: str
    bias: str  # the bias's name, its unit and its no-bias value in words
    dataset: str
    estimate: str  # "+0.12 [0.03, 0.20]", or — when not estimated
    n: str  # "1,234", or empty when not estimated
    reading: str
    warnings: tuple[str, ...] = ()
    flagged: bool = False
    #: why an interval outside no bias is unflagged (:attr:`Finding.adjustment_note`)
    note: str = ""
    #: its ends extrapolated past the resamples (:attr:`Finding.extrapolated`)
    extrapolated: Extrapolation | None = None


def _bias_words(finding: Finding) -> str:
    b = finding.bias
    return f"{b.label} ({b.short_unit} · {b.null_text})"


def summary_lines(report: AuditReport) -> tuple[SummaryLine, ...]:
    """The compact summary's rows, judge by judge (in the summary's order), each
    judge's biases in the matrix's column order; a bias not estimated for a judge is a
    row reading "not estimated", and a judge with nothing estimated and no bias to
    name is one row saying so."""
    out: list[SummaryLine] = []
    for row in report.summary():
        before = len(out)
        found = sorted(row.findings, key=lambda f: (f.bias.order, f.dataset, f.detail))
        for f in found:
            pooled = f.bias.pooled and f.detail  # e.g. "λ pooled over family F"
            where = f"{f.dataset} · {f.detail}" if pooled else f.dataset
            out.append(
                SummaryLine(
                    judge=row.judge,
                    bias=_bias_words(f),
                    dataset=where,
                    estimate=f.text,
                    n=f"{f.n:,}",
                    reading=reading(f),
                    warnings=f.warnings,
                    flagged=f.flagged,
                    note=f.adjustment_note,
                    extrapolated=f.extrapolated,
                )
            )
        estimated = {f.bias.key for f in found}
        missing: dict[tuple[int, str], NotEstimated] = {}
        for m in row.not_estimated:
            if m.bias is not None and m.bias.key not in estimated:
                missing.setdefault((m.bias.order, m.bias.key), m)
        for _, m in sorted(missing.items()):
            assert m.bias is not None
            words = f"{m.bias.label} ({m.bias.short_unit} · {m.bias.null_text})"
            out.append(SummaryLine(row.judge, words, m.dataset, DASH, "", "not estimated"))
        if len(out) == before:  # nothing estimated, and no bias to name as missing
            why = f"nothing could be estimated ({len(row.not_estimated)} reason(s) in the report)"
            out.append(SummaryLine(row.judge, DASH, "", DASH, "", why))
    return tuple(out)


def _legend(report: AuditReport) -> str:
    fdr = " after Benjamini–Hochberg adjustment" if fdr_adjusted(report.provenance.options) else ""
    away = (
        "unflagged after adjustment: the interval excludes no bias, the adjusted test "
        "does not (its q in the note); "
        if fdr
        else ""
    )
    return (
        f"estimate [{percent(report.level)} interval]; n: comparisons or ratings. "
        f"▲/▼ flagged: the interval excludes no bias{fdr} and is not negligible — "
        "material: at least the bias's threshold from no bias, small: nearer; "
        "negligible: the interval lies within ± that threshold (thresholds: `recuse "
        f"analyses`, --material); {away}no detectable bias: the data could not tell; why "
        "an estimate was not made: --verbose and the report."
    )


def _cell(text: str) -> str:
    """One cell of the pipe table: one line, its ``|`` escaped (``\\|``)."""
    return one_line(text).replace("|", "\\|")


def nothing_in_table(report: AuditReport, *, why: str) -> str:
    """The sentence in place of an empty summary table. Where the sections hold
    estimates outside it (the ladder's rungs, the leaderboard's rates) it says the table
    is empty, not that nothing was estimated (``--only self-preference-ladder`` read
    "No bias could be estimated" above "estimates in: Self-preference, taken apart");
    where the reasons are (``why``) is said only when some analysis was not made."""
    why = f" ({why})" if report.skipped else ""
    held = [s.title for s in report.sections if any(not f.headline for f in s.findings)]
    if held:
        return (
            "No headline bias for the summary table from these inputs; the estimates made "
            f"are in: {', '.join(held)}{why}."
        )
    return f"No bias could be estimated from these inputs{why}."


def summary_text(report: AuditReport) -> str:
    """The compact summary as a plain-text pipe table (a judge's name on its first row
    only; a data column when there are several datasets), its legend, and each warning
    as a numbered note under the table (the row's reading carries the number). Each cell
    and note is one line (:func:`~recuse.terminal.one_line`): a judge named with a
    newline in it would split its row, and the columns after it, over two lines; a
    ``|`` in a cell is written ``\\|``, as Markdown reads it, so that a name holding one
    stays in its column."""
    lines = summary_lines(report)
    if not lines:
        return nothing_in_table(report, why="reasons: --verbose and the report")
    show_data = len({ln.dataset for ln in lines if ln.dataset}) > 1
    notes: list[str] = []
    rows: list[list[str]] = []
    # a warning several rows share (a stray score under every coefficient of a fit) is
    # one note, its number on each of those rows
    # an unflagged interval outside no bias: its adjustment note first, then its warnings
    said = [(*([ln.note] if ln.note else []), *ln.warnings) for ln in lines]
    # the extrapolated ends of many intervals: one note, its number on each of their rows
    shown, note = fold_extrapolated(
        [
            (f"{ln.judge} · {ln.bias.split(' (')[0]}", ws, ln.extrapolated)
            for ln, ws in zip(lines, said, strict=True)
        ],
        level=report.level,
    )
    said = [tuple(note if w == EXTRAPOLATED_TAG else w for w in ws) for ws in shown]
    uses = Counter(w for ws in said for w in ws)
    numbered: dict[str, int] = {}
    for k, ln in enumerate(lines):
        word = ln.reading
        judge = "" if k and lines[k - 1].judge == ln.judge else ln.judge  # said once
        for w in said[k]:
            if w not in numbered:
                whose = f"{ln.judge}, {ln.bias.split(' (')[0]}: " if uses[w] == 1 else ""
                notes.append(one_line(f"[{len(notes) + 1}] {whose}{w}"))
                numbered[w] = len(notes)
            word += f" [{numbered[w]}]"
        cells = [judge, ln.bias, *([ln.dataset] if show_data else []), ln.estimate]
        rows.append([_cell(c) for c in [*cells, ln.n, word]])
    header = ["judge", "bias (unit · no-bias value)", *(["data"] if show_data else [])]
    header += [f"estimate [{percent(report.level)} interval]", "n", "reading"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {len(header) - 2}  # n

    def fmt(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(parts) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    table = [fmt(header), rule, *(fmt(r) for r in rows)]
    return "\n".join([*table, _legend(report), *notes])


def source_lines(report: AuditReport) -> list[str]:
    """One line per input the audit was given: its name, table and rows, whose verdicts
    it holds, and what was done with it, so that no source goes unnamed in the terminal
    (``hh-rlhf`` beside judged datasets was covered only by the count of estimates not
    made; on its own the terminal read "No bias could be estimated").

    A source without judge verdicts says it holds labels only and what they give
    without a judge (:attr:`AuditReport.baselines`: the humans' preference for the
    longer answer, the verbosity baseline, where the pairs have lengths), else that
    there was nothing to estimate from it (every analysis reads verdicts, ratings,
    probes or perplexities); one with judges says how many of the summary table's estimates come
    from it and how many of the estimates not made are its."""
    # the summary table's rows, and the headline estimates they show: a pooled
    # estimate (a family's λ) is one estimate in each member judge's row, counted once
    # by the key the multiple-testing family counts it by (estimate_key)
    shown: dict[str, list[Finding]] = {}
    for row in report.summary():
        for f in row.findings:
            shown.setdefault(f.dataset, []).append(f)
    made = {d: _estimates_in(fs) for d, fs in shown.items()}
    # the sections holding a source's other estimates (AlpacaEval's leaderboard rates)
    titles = {s.id: s.title for s in report.sections}
    elsewhere: dict[str, list[str]] = {}
    for f in report.findings:
        if not f.headline and titles[f.section] not in elsewhere.get(f.dataset, []):
            elsewhere.setdefault(f.dataset, []).append(titles[f.section])
    skipped: dict[str, int] = {}
    for m in report.skipped:
        skipped[m.dataset] = skipped.get(m.dataset, 0) + 1
    baselines: dict[str, list[Baseline]] = {}  # numbers of the labels, no judge's
    for b in report.baselines:
        baselines.setdefault(b.dataset, []).append(b)
    judges = report.provenance.options.get("judges", "all")  # AuditOptions.to_dict
    chosen = None if judges == "all" else set(str(judges).split(", "))
    out = []
    for src in report.provenance.sources:
        n, k = made.get(src.name, 0), len(src.judges)
        not_made = skipped.get(src.name, 0)
        head = f"{src.name} ({src.table}, {src.rows:,} row{'s' if src.rows != 1 else ''})"
        if not k and not n:
            labels = "reference labels" if src.reference != "human" else "human labels"
            found = baselines.get(src.name, [])
            if found:  # what the labels give without a judge (verbosity's baseline)
                said = "; ".join(b.sentence for b in found)
                out.append(
                    f"{head}: {labels} only — {said}, the verbosity baseline (no judge's "
                    f"bias); judge bias needs verdicts ({_analyses(not_made)} not made; "
                    "reasons in the report)"
                )
                continue
            out.append(
                f"{head}: {labels} only, no judge verdicts — nothing to estimate from it "
                f"({_analyses(not_made)} {'needs' if not_made == 1 else 'need'} verdicts, "
                "ratings, probes or perplexities; "
                "reasons in the report)"
            )
            continue
        whose = f"verdicts of {k:,} judge{'s' if k != 1 else ''}" if k else "no judge column"
        if k and chosen is not None:  # --judge: which of them the estimates are of
            mine = [j for j in src.judges if j in chosen]
            whose += f", {len(mine) if mine else 'none'} of them chosen (--judge)"
        others = elsewhere.get(src.name, [])
        if n:
            did = f"{n:,} headline estimate{'s' if n != 1 else ''} in the table"
            rows = len(shown[src.name])
            if rows != n:  # a pooled estimate in several rows
                did += f" ({_pooled_rows(shown[src.name])})"
        elif others:  # "nothing estimated" read above the leaderboard's own rates
            did = f"no headline estimate in the table; estimates in: {', '.join(others)}"
        else:
            did = "nothing estimated"
        rest = f"; {not_made_words(not_made)} (reasons in the report)" if not_made else ""
        out.append(f"{head}: {whose} — {did}{rest}")
    return out


def _estimates_in(findings: list[Finding]) -> int:
    """The headline estimates among ``findings`` (rows of the summary table): one per
    :func:`~recuse.report.model.estimate_key`."""
    return len({estimate_key(f) for f in findings})


def _pooled_rows(findings: list[Finding]) -> str:
    """The summary table's rows of ``findings`` and why they outnumber its estimates:
    "18 rows: 4 pooled estimates of Family bias (ratings), each in the row of every
    judge it pools"."""
    groups: dict[tuple[object, ...], int] = Counter(estimate_key(f) for f in findings)
    shared = [k for k, rows in groups.items() if rows > 1]
    titles = sorted({f.bias.label for f in findings if groups[estimate_key(f)] > 1})
    one = len(shared) == 1
    return (
        f"{len(findings):,} rows: {len(shared):,} pooled estimate{'' if one else 's'} of "
        f"{', '.join(titles)}, {'' if one else 'each '}in the row of every judge it pools"
    )


def not_made_words(n: int) -> str:
    """``n`` estimates or analyses not made, in words, as an input's line and the
    audit's total say them.

    >>> not_made_words(1), not_made_words(1049)
    ('1 estimate or analysis not made', '1,049 estimates or analyses not made')
    """
    return f"{n:,} {'estimate or analysis' if n == 1 else 'estimates or analyses'} not made"


def _analyses(n: int) -> str:
    """``n`` analyses, in words (``--only verbosity`` on a labels-only table: "1
    analysis", where the line read "1 analyses not made").

    >>> _analyses(1), _analyses(13)
    ('1 analysis', '13 analyses')
    """
    return f"{n:,} {'analysis' if n == 1 else 'analyses'}"


def judge_line(row: SummaryRow) -> str:
    """``gpt-4: 1 of 3 estimated biases flagged``: one judge's count, in words (a judge
    with nothing estimated says so instead of "0 of 0"). Quality scores (agreement,
    calibration) are counted apart, never flagged: "0 of 5 estimated biases" counted
    GPT-4's agreement with the humans as a bias."""
    missing = len(row.not_estimated)
    if not row.findings:
        why = f"{missing} reason(s) in the report" if missing else "no data for any bias"
        return f"{row.judge}: nothing could be estimated ({why})"
    biases = sum(f.bias.kind != "quality" for f in row.findings)
    scores = len(row.findings) - biases
    text = f"{row.judge}: {len(row.flagged)} of {biases} estimated biases flagged"
    if scores:
        text += f", beside {scores} quality score{'s' if scores != 1 else ''} (never flagged)"
    return text + (f"; {missing} not estimated (reasons in the report)" if missing else "")


def summary_sentences(report: AuditReport) -> list[str]:
    """Every headline finding of every judge as its verdict sentence (the terminal's
    ``--verbose`` list): per judge its :func:`judge_line`, then ``  - `` for each flagged
    finding, ``  · `` for the others, each with its bias, dataset, unit and no-bias
    value, its warnings under it, then its notes (no caveat: :attr:`Finding.notes`), and
    ``  ○ `` for each estimate not made, with why.

    Then the analyses not made for a reason about the data rather than a judge (a
    regression its ratings cannot identify, a table of the other kind), one line per
    reason: no judge's line holds them, so an input from which nothing could be
    estimated got no reason at all from ``--verbose``, whose legend promised it."""
    out: list[str] = []
    rows = report.summary()
    # the extrapolated ends of many intervals: a short tag on each, one note after them
    shown, note = fold_extrapolated(
        [
            (f"{row.judge} · {f.bias.label}", f.warnings, f.extrapolated)
            for row in rows
            for f in row.findings
        ],
        level=report.level,
    )
    warned = iter(shown)
    first: dict[str, str] = {}  # a warning said whole once, then named by where it was
    for row in rows:
        out.append(judge_line(row))
        for f in row.findings:
            where = f" ({f.dataset})" if f.dataset else ""
            mark = "-" if f.flagged else "·"
            out.append(f"  {mark} {f.bias.title}{where} [{f.bias.header}]: {f.verdict}")
            for w in next(warned):
                said = first.get(w) if w != EXTRAPOLATED_TAG else None
                out.append(f"      warning: {w}" if said is None else f"      warning: {said}")
                first.setdefault(w, f"as under {row.judge}'s {f.bias.label} above")
            out.extend(f"      note: {n}" for n in f.notes)  # no caveat: after them
        for m in row.not_estimated:
            where = f" ({m.dataset})" if m.dataset else ""
            out.append(f"  ○ {m.analysis}{where}: not estimated — {m.said}")
    if note:
        out.append(f"note: {note}")
    about_data: dict[str, list[NotEstimated]] = {}
    for m in report.skipped:
        if not m.judge_label:
            about_data.setdefault(m.said, []).append(m)
    for said, skips in about_data.items():
        names = list(dict.fromkeys(m.analysis for m in skips))
        data = ", ".join(dict.fromkeys(m.dataset for m in skips if m.dataset))
        what = ", ".join(names) if len(names) <= 3 else f"{len(names)} analyses"
        out.append(f"○ {what}{f' ({data})' if data else ''}: not made — {said}")
    return out


_CELL_STYLE = {
    "material": "background:#fdecea",
    "small": "background:#fbf3f2",
    "flagged": "background:#fdecea",
}


def baseline_sentences(report: AuditReport) -> list[str]:
    """One sentence per number of the labels that is no judge's bias
    (:attr:`AuditReport.baselines`: the humans' preference for the longer answer of a
    labels-only table), as the terminal's data line words it: ``hh-rlhf: humans'
    preference for the longer answer: 0.44 [0.42, 0.46] (90% interval, 2,267 pairs, no
    preference = 0.5), the verbosity baseline (no judge's bias)``."""
    return [
        f"{b.dataset}: {b.sentence}, the verbosity baseline (no judge's bias)"
        for b in report.baselines
    ]


def summary_html(report: AuditReport) -> str:
    """The summary as a judge × bias matrix in HTML (for a notebook): one row per judge,
    one column per headline bias with its unit and no-bias value, each cell the
    estimate [interval], n and its reading; flagged cells are tinted, negligible and
    undetected ones are not; then each baseline of the labels
    (:func:`baseline_sentences`: a notebook's hh-rlhf read only "No bias could be
    estimated" where the terminal gave 0.44 [0.42, 0.46]). Every text is escaped."""
    matrix = report.matrix()
    bases = "".join(f"<p>{escape(line)}</p>" for line in baseline_sentences(report))
    if not matrix.rows:
        return f"<p>{escape(nothing_in_table(report, why='reasons in the report'))}</p>{bases}"
    head = "".join(
        f"<th title='{escape(c.bias.unit, quote=True)}'>{escape(c.bias.label)}<br>"
        f"<small>{escape(c.bias.short_unit)} · {escape(c.bias.null_text)}</small></th>"
        for c in matrix.columns
    )
    body = []
    for row in matrix.rows:
        cells = []
        for c in matrix.columns:
            cell = row.cells.get(c.bias.key)
            if cell is None:
                cells.append("<td></td>")
                continue
            parts = []
            style = ""
            for f in cell.estimates:
                word = reading(f)
                where = f"{escape(f.dataset)}: " if len(cell.estimates) > 1 else ""
                warn = f" <span title='{escape('; '.join(f.warnings), quote=True)}'>⚠</span>"
                note = f.adjustment_note
                parts.append(
                    f"{where}<span style='white-space:nowrap'>{escape(f.text)}</span> "
                    f"<small>n={f.n:,}</small><br><i>{escape(word)}</i>"
                    + (warn if f.warnings else "")
                    + (f"<br><small>◇ {escape(note)}</small>" if note else "")
                )
                if f.flagged:
                    style = _CELL_STYLE.get(f.materiality or "flagged", "")
            if not cell.estimates and cell.not_estimated:
                why = "; ".join(f"{m.dataset}: {m.said}" for m in cell.not_estimated)
                parts.append(f"<i title='{escape(why, quote=True)}'>not estimated</i>")
            attr = f" style='{style}'" if style else ""
            cells.append(f"<td{attr}>{'<br>'.join(parts)}</td>")
        name = escape(row.judge)
        if row.nothing_estimated:
            name += "<br><i>nothing could be estimated</i>"
        body.append(f"<tr><th style='white-space:nowrap'>{name}</th>{''.join(cells)}</tr>")
    legend = escape(_legend(report))
    return (
        f"<table><thead><tr><th>judge</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table><p><small>{legend}</small></p>{bases}"
    )
