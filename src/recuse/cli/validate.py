"""`recuse validate FILE`: check a user's file against an evidence-table schema."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer

from recuse.choices import ImportFormat, TableKind
from recuse.cli.app import (
    READING,
    AllowUnknownOption,
    ConfidenceOfOption,
    ConfidenceOption,
    ConfigOption,
    MapOption,
    ReferenceJudgeOption,
    ReferenceScorerOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_context,
)
from recuse.cli.console import TerminalTable, cell, echo_lines, json_shown
from recuse.cli.console import console as make_console
from recuse.lazy import lazy_module
from recuse.reference import LABEL_NAMES, ReferenceKind, reword

if TYPE_CHECKING:
    import pandas as pd

    from recuse import files as recuse_files
    from recuse.data import columns, inputs
    from recuse.roster import Roster
else:  # imported as the command first uses them (recuse.lazy)
    recuse_files = lazy_module("recuse.files")
    pd = lazy_module("pandas")
    columns = lazy_module("recuse.data.columns")
    inputs = lazy_module("recuse.data.inputs")


def describe(
    table: pd.DataFrame, kind: TableKind, *, reference: ReferenceKind = "human"
) -> dict[str, int]:
    """Counts a person checks first: rows, prompts, models, judges, labels, unparsed;
    the labels named as ``reference`` (:mod:`recuse.reference`: "rows with a
    correctness label" for JudgeBench's rows)."""
    if kind == "pairs":
        models = pd.concat([table["model_a"], table["model_b"]]).dropna()
        judged = table["judge"].notna()
        human = table["human"]
        label = LABEL_NAMES[reference]
        said = "human" if reference == "human" else label  # "correctness label: a better"
        return {
            "rows": len(table),
            "prompts": table["prompt_id"].nunique(),
            "models": models.nunique(),
            "judges": table["judge"].nunique(),
            f"rows with a {label}": int(human.notna().sum()),
            f"{said}: a better": int((human > 0.5).sum()),
            f"{said}: b better": int((human < 0.5).sum()),
            f"{said}: tie": int((human == 0.5).sum()),
            "judged rows without a verdict": int((judged & table["p_a"].isna()).sum()),
        }
    return {
        "rows": len(table),
        "prompts": table["prompt_id"].nunique(),
        "models": table["model"].nunique(),
        "judges": table["judge"].nunique(),
        "dimensions": table["dimension"].nunique(),
        "rows with a reference": int(table["reference"].notna().sum()),
        "rows without a rating": int(table["rating"].isna().sum()),
    }


def supported_analyses(
    table: pd.DataFrame, kind: TableKind, roster: Roster, *, reference: ReferenceKind = "human"
) -> list[tuple[str, str | None]]:
    """Each registered analysis of this table kind with the reason it would estimate
    nothing on ``table`` (None: it would estimate), from the analyses' own ``needs``
    and ``estimable`` checks: "supported" means the audit gives numbers, not only that
    the analysis runs. The reasons, written for human labels, in the words of
    ``reference``'s (:func:`recuse.reference.reword`, as the audit's skips are). A reason
    ends with what the audit still gives without a judge where the analysis says
    (:attr:`~recuse.analyses.base.Analysis.unjudged_gives`: verbosity's humans' length
    preference on a labels-only table), so that "no" does not deny a number it prints."""
    from recuse.analyses import REGISTRY
    from recuse.analyses.base import unedited

    original = unedited(table)  # as the audit gives them: probe rows to the probe analyses
    out: list[tuple[str, str | None]] = []
    for a in REGISTRY:
        if a.table == kind:
            frame = table if a.reads_probes else original
            reason = a.supported(frame, roster)
            gives = a.unjudged_gives(frame, roster) if a.unjudged_gives and reason else None
            if reason is not None and gives:  # the audit's number without a judge
                reason = f"{reason.rstrip('. ')}; {gives}"
            out.append((a.id, None if reason is None else reword(reason, reference)))
    return out


_VERBS = re.compile(
    r"\b(is|are|has|have|holds|hold|needs|need|compares|gives|lacks|was|were|can|"
    r"could|cannot)\b"
)
_SUBJECTS = (("no ", "This file has "), ("fewer than ", "This file has "),
             ("only ", "This file has "), ("not ", "This file is "),
             ("needs ", "The analysis "))  # fmt: skip


def as_sentence(reason: str) -> str:
    """An analysis's reason as a whole sentence for ``recuse validate``: a capital
    letter, a verb and a full stop. A reason whose first clause has no verb gets a
    subject and verb from its first words ("no perplexities in this data" -> "This file
    has no perplexities in this data."); any other is capitalised.

    >>> as_sentence("not a probe table — run `recuse probe`")
    'This file is not a probe table — run `recuse probe`.'
    >>> as_sentence("the verdicts are picks")
    'The verdicts are picks.'
    """
    text = " ".join(reason.split())
    if not text:
        return text
    first = re.split(r" \(|: |; | — ", text, maxsplit=1)[0]
    if not _VERBS.search(first) or text.startswith("needs "):
        for start, subject in _SUBJECTS:
            if text.startswith(start):
                text = subject + text
                break
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


@app.command()
def validate(
    ctx: typer.Context,
    path: str = typer.Argument(
        ..., help="CSV, TSV, JSON, JSONL or Parquet file, or a file of another tool (--format)."
    ),
    table: str | None = typer.Option(
        None,
        "--table",
        help="pairs or ratings (a --format file's format fixes it). Default: ratings for a "
        "file with a rating column and no p_a, else pairs (as recuse audit reads it).",
    ),
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    allow_unknown_models: AllowUnknownOption = False,  # no effect, kept for old scripts
    fmt: Annotated[
        ImportFormat | None,
        typer.Option(
            "--format",
            help="Read a file written by another tool: fastchat-pair / fastchat-single "
            "(FastChat *_pair.jsonl / *_single.jsonl), arena-hard (Arena-Hard-Auto "
            "judgments), alpaca-eval (AlpacaEval annotations.json), inspect (Inspect AI "
            ".eval/.json log). Default: recognised from the file.",
        ),
    ] = None,
    reference_scorer: ReferenceScorerOption = None,
    reference_judge: ReferenceJudgeOption = None,
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object (counts, analyses, unread columns)."
    ),
    config: ConfigOption = None,
) -> None:
    """Check a file against the pairs or ratings schema, summarise it, and say which
    analyses it supports and which columns that look like verdicts it left unread.

    The file is read as recuse audit reads it: the options given here, else those of
    recuse.toml (--config, else ./recuse.toml): its [map], [values], [[model]] entries
    and its table, format, swapped-frame, confidence, confidence-of, reference-scorer
    and reference-judge keys.

    One file may hold at most 512 MiB (after gzip), and one CSV row or JSON-lines line
    4 MiB; set RECUSE_MAX_INPUT_BYTES / RECUSE_MAX_ROW_BYTES (bytes) to read larger
    ones.
    """
    if table not in (None, "pairs", "ratings"):
        raise typer.BadParameter("use pairs or ratings", param_hint="--table")
    settings, roster = cli_context(ctx, READING)
    inp = inputs.load_input(
        path, table=settings.table, roster=roster, mapping=dict(settings.mapping),
        format=settings.format, reading=settings.reading(), references=settings.references(),
    )  # fmt: skip
    df, kind, found, notes = inp.frame, inp.table, inp.source.format or None, inp.source.notes
    ref = inp.source.reference  # the labels' kind: the counts and reasons name it
    if as_json:
        _print_json(path, df, kind, found, notes, roster, ref)
        return
    console = make_console()
    shown_path = recuse_files.path_text(str(path))  # as report.json names it: caf\\xe9.csv
    what_file = f"{shown_path}: a valid {kind} table" + (
        f" (imported from {found})" if found else ""
    )
    out = TerminalTable(title=cell(what_file))  # a path is text, not markup
    out.add_column("what")
    out.add_column("count", justify="right")
    for what, count in describe(df, kind, reference=ref).items():
        out.add_row(cell(str(what)), f"{count:,}")
    console.print(out)
    for note in notes:
        console.print(cell(f"note: {note}"))
    analyses = TerminalTable(title="Analyses this file supports (recuse analyses: what each needs)")
    analyses.add_column("analysis")
    analyses.add_column("supported")
    analyses.add_column("why not", overflow="fold")
    for analysis_id, reason in supported_analyses(df, kind, roster, reference=ref):
        analyses.add_row(analysis_id, "no" if reason else "yes", cell(as_sentence(reason or "")))
    console.print(analyses)
    ignored: dict[str, str] = df.attrs.get(columns.IGNORED, {})
    if ignored:
        unread = TerminalTable(
            title="Columns not read that look like verdicts or labels (map them)"
        )
        unread.add_column("column")
        unread.add_column("why it looks like one", overflow="fold")
        for column, why in ignored.items():  # quoted, as the notes name it: ' len_b'
            unread.add_row(cell(repr(column)), cell(why))
        console.print(unread)


def _print_json(
    path: str, df: pd.DataFrame, kind: TableKind, found: str | None,
    notes: tuple[str, ...], roster: Roster, ref: ReferenceKind,
) -> None:  # fmt: skip
    """One JSON object: counts, notes, analyses supported, unread columns."""
    import json

    ignored_cols: dict[str, str] = df.attrs.get(columns.IGNORED, {})
    echo_lines(
        json_shown(
            json.dumps(
                {
                    "file": recuse_files.path_text(str(path)),
                    "valid": True,
                    "table": kind,
                    "format": found or "",
                    "counts": describe(df, kind, reference=ref),
                    "notes": list(notes),
                    "analyses": [
                        {
                            "analysis": a,
                            "supported": reason is None,
                            "why_not": as_sentence(reason or ""),
                        }
                        for a, reason in supported_analyses(df, kind, roster, reference=ref)
                    ],
                    "unread_columns": [{"column": c, "why": w} for c, w in ignored_cols.items()],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    )
