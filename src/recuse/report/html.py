"""The HTML report: one self-contained page rendered from a jinja2 template.

Autoescaping is on for every value, so text from datasets and models (judge names,
prompts, responses, notes) is shown as text and never becomes markup. Figures are
``data:`` URIs in ``<img>`` tags, and a Content-Security-Policy forbids scripts and
every fetch except those embedded images: the page needs no network and runs no code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recuse.bootstrap_rules import Extrapolation
from recuse.errors import MissingDependencyError
from recuse.numbers import (
    column_decimals,
    decimal,
    decimal_beside,
    lower_bound,
    minus,
    p_text,
    percent,
    share_percent,
    share_percent_beside,
)
from recuse.report.extrapolated import (
    EXTRAPOLATED_TAG,
    fold_extrapolated,
    short_warnings,
    warning_head,
)
from recuse.report.labels import ORDERS_LABEL, fdr_adjusted, option_said
from recuse.report.model import AuditReport, Finding
from recuse.report.summary_table import nothing_in_table
from recuse.terminal import shown

MAX_ROWS = 60  # rows of a tidy table shown in the page; the CSV has all


def table_number(value: Any, digits: int = 3) -> str:
    """A number of the page: a float under 10 with ``digits`` decimals (three, or the
    column's :func:`recuse.numbers.column_decimals`), two decimals from 10 on, none from
    100,000 on, with thousands separators from 1,000 on (``1,234.50``, ``2,500,000``: it
    read 1234.50 and 2.5e+06), scientific only from 1e15 on, where the digits would be
    noise — never below 1, where a small number would sit in another notation than its
    column's (0.000 beside 3e-04)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        if abs(value) >= 1e15:
            return minus(f"{value:.3g}")
        return decimal(value, 0 if abs(value) >= 1e5 else 2 if abs(value) >= 10 else digits)
    return str(value)


COUNT_COLUMN = re.compile(
    r"^(n|count|total|rows|pairs|prompts|clusters|judges|models|wins|losses|ties|excluded)$"
    r"|^n_|_n$|count|_pairs$|_prompts$|_clusters$|_kept$"
)
#: a column of p- or q-values: written "< 0.001" below 0.001 (:func:`recuse.numbers.p_text`)
P_COLUMN = re.compile(r"^(p|q|p_value|q_value|p-value|q-value)$")
#: a column of lower bounds, read against a target beside them (the certification
#: curve's ``lower_bound``: "the guarantee holds where it is at least target"): written
#: rounded down (:func:`recuse.numbers.lower_bound`), never up onto the target it misses
LOWER_BOUND_COLUMN = re.compile(r"^lower_bound$")


def table_digits(records: list[dict[str, Any]], columns: Any) -> dict[str, int]:
    """:func:`recuse.numbers.column_decimals` of every column of the rows a table shows."""
    return {str(c): column_decimals([r.get(str(c)) for r in records]) for c in columns}


def _cell(
    value: Any, column: object = "", digits: int = 3, percent: bool = False, bound: Any = None
) -> str:
    """A tidy-table cell: :func:`table_number` with the column's ``digits``
    (:func:`table_digits`), except that a count column's whole numbers print as integers
    (67, not 67.000), a p- or q-value column's numbers as p-values (0.023, < 0.001), a
    lower bound rounded down (:data:`LOWER_BOUND_COLUMN`), a column of shares the
    table writes as percentages (``percent``,
    :attr:`~recuse.report.model.Table.percent`) as :func:`recuse.numbers.share_percent`
    writes them (28.5%, 0.04%), and a number read against its row's threshold ``bound``
    (:attr:`~recuse.report.model.Table.beside`) on its own side of it (0.7996 beside a
    target 0.8: ``0.7996``, not ``0.800``). An estimates table's warnings, with the ends
    beyond the resamples in a line's words, are its
    :attr:`~recuse.report.model.Table.texts` (:func:`recuse.analyses.base.warnings_texts`:
    read from each result's ``extrapolated`` record)."""
    name = str(column).lower()
    if isinstance(value, float) and abs(value) < 10 and LOWER_BOUND_COLUMN.search(name):
        # rounded down (as a percentage: its share's three decimals, as certify writes
        # it), on its side of its row's target: 0.69973 beside 0.70 is 0.699, not 0.700
        target = bound if _finite(bound) else None
        return lower_bound(value, 3 if percent else digits, percent=percent, beside=target)
    if _finite(value) and _finite(bound):
        if percent:
            return share_percent_beside(value, bound)
        return decimal_beside(value, [bound], digits)
    if percent and isinstance(value, float) and math.isfinite(value):
        return share_percent(value)
    if isinstance(value, float) and math.isfinite(value) and P_COLUMN.search(name):
        return p_text(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        if COUNT_COLUMN.search(name):
            return f"{int(value):,}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if COUNT_COLUMN.search(name) else str(value)
    return table_number(value, digits)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def warning_tag(text: str, far: Extrapolation | None = None) -> str:
    """A warning's head for a matrix cell: the words before its first ':' or ' — ' (at
    most 40 characters), e.g. "low n" or "only 4 prompts", and the one of the
    finding's ``extrapolated`` record ``far`` its level and end ("99% low end
    extrapolated": :func:`~recuse.report.extrapolated.warning_head`); the full text is
    in the cell's tooltip, the verdict list, the terminal and the JSON."""
    head = warning_head(text, far)
    if head is not None:  # its head ran past 40 characters: "the 99% interval's low end…"
        return head
    head = text.split(":", 1)[0].split(" — ", 1)[0].strip()
    return head if len(head) <= 40 else head[:39].rstrip() + "…"


def warning_tags(finding: Finding) -> list[str]:
    """Each of ``finding``'s warnings as its matrix cell tags it (:func:`warning_tag`)."""
    return [warning_tag(w, finding.extrapolated) for w in finding.warnings]


def finding_short_warnings(finding: Finding) -> tuple[str, ...]:
    """``finding``'s warnings with its extrapolated ends in a line's words: the verdict
    list's (:func:`~recuse.report.extrapolated.short_warnings`)."""
    return short_warnings(finding.warnings, finding.extrapolated)


def _visible(value: Any) -> Any:
    r"""Each value the page writes, with the characters a page would not show as
    written (NUL, ESC and the other controls, the bidirectional overrides that reorder
    what follows: a judge named ``"gpt\x00\u202eevil"``) as their escapes, as the
    terminal writes them (:func:`recuse.terminal.shown`); HTML-escaped after, as every
    value is. report.json keeps the text as read."""
    if not isinstance(value, str):
        return value
    text = shown(value)
    if text == value:
        return value
    return type(value)(text) if type(value) is not str else text  # Markup stays Markup


def _environment() -> Any:
    try:
        import jinja2
    except ImportError:
        raise MissingDependencyError("jinja2", "plots") from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recuse.report", "templates"),
        autoescape=True,
        finalize=_visible,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["num"] = table_number
    env.globals["table_digits"] = table_digits
    env.filters["percent"] = percent
    env.filters["cell"] = _cell
    env.filters["warning_tags"] = warning_tags
    env.filters["short_warnings"] = finding_short_warnings  # the verdict list's, in a line
    return env


@dataclass(frozen=True)
class SkipGroup:
    """Skipped analyses that share one cause: the reason, the datasets it applies to, and
    the analyses (and judges, when not all) it left out."""

    reason: str
    datasets: tuple[str, ...]
    analyses: tuple[str, ...]
    judges: tuple[str, ...]
    rows: int


def skip_groups(report: AuditReport) -> list[SkipGroup]:
    """``report.skipped`` grouped by cause, most rows first ("12 analyses need a pairs
    table …: play-favorites is ratings" instead of one row per analysis); the skips of
    single estimates (``flip_rate``, ``first_position_rate``) by their reason alone."""
    groups: dict[str, list[Any]] = {}
    for k in report.skipped:
        groups.setdefault(k.reason, []).append(k)
    out = [
        SkipGroup(
            reason=cause,
            datasets=tuple(dict.fromkeys(k.dataset for k in ks if k.dataset)),
            analyses=tuple(dict.fromkeys(k.analysis for k in ks)),
            judges=tuple(dict.fromkeys(k.judge_label for k in ks if k.judge_label)),
            rows=len(ks),
        )
        for cause, ks in groups.items()
    ]
    return sorted(out, key=lambda g: (-len(g.analyses), -g.rows, g.reason))


def nothing_estimated(report: AuditReport) -> dict[str, str]:
    """Per section with nothing to show (no finding, figure or table shown in the page),
    the one reason the page gives in its place: its notes, else the reasons the report's
    skips give for its analysis, else a plain "nothing could be estimated"."""
    out: dict[str, str] = {}
    for s in report.sections:
        if s.findings or s.figures or any(t.show for t in s.tables):
            continue
        reasons = list(s.notes) or list(
            dict.fromkeys(
                f"{k.dataset + ': ' if k.dataset else ''}{k.said}"
                for k in report.skipped
                if k.analysis == s.title
            )
        )
        text = " ".join(r if r.endswith(".") else f"{r}." for r in reasons)
        out[s.id] = text or "nothing could be estimated from these inputs."
    return out


VERDICT_WORDS = {  # --orders, in the title line's words
    "both": "verdicts: each judge's preference averaged over both presentation orders "
    "(one order where only one was judged)",
    "first": "verdicts: only the order with answer a shown first",
    "second": "verdicts: only the order with answer b shown first",
}


def verdict_words(report: AuditReport) -> str:
    """Which verdicts the numbers use, in plain words, from the run's ``--orders``."""
    text = option_said(report.provenance.options, ORDERS_LABEL)
    orders = text.split(":", 1)[0].strip()
    return VERDICT_WORDS.get(orders, f"verdicts: {text}" if text else "")


def section_warnings(report: AuditReport) -> dict[str, tuple[list[tuple[str, ...]], str]]:
    """Per section id, each finding's warnings as its table shows them and the one note
    under the table (:func:`~recuse.report.extrapolated.fold_extrapolated`: the ends
    beyond the resamples of many intervals said once); a warning the table already
    showed whole on an earlier row reads "as on ROW above" (:func:`said_once`: the
    five reward models' identical position warnings of JudgeBench). report.json keeps
    each."""
    out: dict[str, tuple[list[tuple[str, ...]], str]] = {}
    for s in report.sections:
        names = [" · ".join(x for x in (f.judge, f.bias.label) if x) for f in s.findings]
        rows = [
            (name, f.warnings, f.extrapolated) for name, f in zip(names, s.findings, strict=True)
        ]
        shown, note = fold_extrapolated(rows, level=report.level)
        out[s.id] = said_once(list(zip(names, shown, strict=True)), keep=EXTRAPOLATED_TAG), note
    return out


def said_once(rows: list[tuple[str, tuple[str, ...]]], *, keep: str) -> list[tuple[str, ...]]:
    """Each row's warnings, one already shown whole on an earlier row as ``"as on NAME
    above"`` (``keep``: a text every row keeps as it is, a short tag).

    >>> said_once([("a", ("x", "t")), ("b", ("x", "t", "y"))], keep="t")
    [('x', 't'), ('as on a above', 't', 'y')]
    """
    first: dict[str, str] = {}
    out = []
    for name, warnings in rows:
        out.append(tuple(first.get(w, w) if w != keep else w for w in warnings))
        for w in warnings:
            first.setdefault(w, f"as on {name} above")
    return out


def render_html(report: AuditReport) -> str:
    """The report as one HTML document (a string)."""
    template = _environment().get_template("report.html.j2")
    return str(
        template.render(
            report=report,
            summary=report.summary(),
            matrix=report.matrix(),
            verdicts=report.flagged_verdicts(),
            max_rows=MAX_ROWS,
            skip_groups=skip_groups(report),
            collapsed=nothing_estimated(report),
            section_warnings=section_warnings(report),
            verdict_words=verdict_words(report),
            fdr_adjusted=fdr_adjusted(report.provenance.options),
            empty_summary=nothing_in_table(report, why="the skipped analyses below say why"),
        )
    )


def write_html(report: AuditReport, path: str | Path) -> Path:
    """Write ``render_html(report)`` to ``path`` (UTF-8, atomically); returns the path."""
    from recuse.outputs import write_text

    return write_text(path, render_html(report))
