"""`recuse validate FILE`: check a user's file against an evidence-table schema."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import pandas as pd
import typer
from rich.table import Table
from rich.text import Text

from recuse.cli.app import (
    AllowUnknownOption,
    ConfidenceOfOption,
    ConfidenceOption,
    MapOption,
    ReferenceJudgeOption,
    ReferenceScorerOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_roster,
    parse_mapping,
    references,
    value_reading,
)
from recuse.cli.console import console as make_console
from recuse.data.generic import IGNORED, UnknownModels, ValueReading, read_table
from recuse.data.importers import ImportFormat, References, read_import, sniff, sniff_folder
from recuse.errors import ConfigError, InputError
from recuse.roster import Roster


def describe(table: pd.DataFrame, kind: Literal["pairs", "ratings"]) -> dict[str, int]:
    """Counts a person checks first: rows, prompts, models, judges, labels, unparsed."""
    if kind == "pairs":
        models = pd.concat([table["model_a"], table["model_b"]]).dropna()
        judged = table["judge"].notna()
        human = table["human"]
        return {
            "rows": len(table),
            "prompts": table["prompt_id"].nunique(),
            "models": models.nunique(),
            "judges": table["judge"].nunique(),
            "rows with a human label": int(human.notna().sum()),
            "human: a better": int((human > 0.5).sum()),
            "human: b better": int((human < 0.5).sum()),
            "human: tie": int((human == 0.5).sum()),
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
    table: pd.DataFrame, kind: Literal["pairs", "ratings"], roster: Roster
) -> list[tuple[str, str | None]]:
    """Each registered analysis of this table kind with the reason it would estimate
    nothing on ``table`` (None: it would estimate), from the analyses' own ``needs``
    and ``estimable`` checks: "supported" means the audit gives numbers, not only that
    the analysis runs."""
    from recuse.analyses import REGISTRY
    from recuse.analyses.base import unedited

    original = unedited(table)  # as the audit gives them: probe rows to the probe analyses
    return [
        (a.id, a.supported(table if a.reads_probes else original, roster))
        for a in REGISTRY
        if a.table == kind
    ]


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
    table: str = typer.Option(
        "pairs", "--table", help="pairs or ratings (a --format file's format fixes it)."
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
) -> None:
    """Check a file against the pairs or ratings schema, summarise it, and say which
    analyses it supports and which columns that look like verdicts it left unread.

    One file may hold at most 512 MiB (after gzip) and one row 4 MiB; set
    RECUSE_MAX_INPUT_BYTES / RECUSE_MAX_ROW_BYTES (bytes) to read larger ones.
    """
    if table not in ("pairs", "ratings"):
        raise typer.BadParameter("use pairs or ratings", param_hint="--table")
    kind: Literal["pairs", "ratings"] = "pairs" if table == "pairs" else "ratings"
    how = value_reading(values, swapped_frame, confidence, confidence_of)
    roster = cli_roster(ctx)  # the command's one roster (--roster)
    df, kind, found, notes = _read_any(
        path, kind, fmt=fmt, mapping=mapping, how=how, roster=roster,
        refs=references(reference_scorer, reference_judge),
    )  # fmt: skip
    if as_json:
        _print_json(path, df, kind, found, notes, roster)
        return
    console = make_console()
    what_file = f"{path}: a valid {kind} table" + (f" (imported from {found})" if found else "")
    out = Table(title=Text(what_file))  # a path is text, not markup
    out.add_column("what")
    out.add_column("count", justify="right")
    for what, count in describe(df, kind).items():
        out.add_row(Text(str(what)), f"{count:,}")
    console.print(out)
    for note in notes:
        console.print(Text(f"note: {note}"))
    analyses = Table(title="Analyses this file supports (recuse analyses: what each needs)")
    analyses.add_column("analysis")
    analyses.add_column("supported")
    analyses.add_column("why not", overflow="fold")
    for analysis_id, reason in supported_analyses(df, kind, roster):
        analyses.add_row(analysis_id, "no" if reason else "yes", Text(as_sentence(reason or "")))
    console.print(analyses)
    ignored: dict[str, str] = df.attrs.get(IGNORED, {})
    if ignored:
        unread = Table(title="Columns not read that look like verdicts or labels (map them)")
        unread.add_column("column")
        unread.add_column("why it looks like one", overflow="fold")
        for column, why in ignored.items():
            unread.add_row(Text(column), Text(why))
        console.print(unread)


def _read_any(
    path: str, kind: Literal["pairs", "ratings"], *, fmt: ImportFormat | None,
    mapping: str | None, how: ValueReading, refs: References, roster: Roster,
) -> tuple[pd.DataFrame, Literal["pairs", "ratings"], str | None, tuple[str, ...]]:  # fmt: skip
    """The table ``path`` holds (a folder or file of another tool, or a plain table), its
    kind, the tool's format (None for a plain table) and the reader's notes."""
    unknown: UnknownModels = "keep"  # --allow-unknown-models: no effect, kept for old scripts
    if Path(path).expanduser().is_dir():
        found = fmt or sniff_folder(Path(path).expanduser())
        if found is None:
            raise InputError(
                "the folder holds no file recuse recognises as another tool's",
                file=path,
                fix="give a file, or a folder of FastChat, Arena-Hard-Auto, AlpacaEval or "
                "Inspect files (or name the format with --format)",
            )
    else:
        found = fmt or sniff(path)
    notes: tuple[str, ...] = ()
    if found is not None:
        if mapping:
            raise ConfigError(f"--map does not apply to a {found} file: its columns are fixed")
        imported = read_import(path, found, unknown_models=unknown, references=refs, roster=roster)
        df, kind, notes = imported.frame, imported.table, imported.notes
    else:
        if refs.scorer is not None:
            raise ConfigError(
                "--reference-scorer names a scorer of an Inspect log; this file is not one"
            )
        if refs.judge is not None and kind != "ratings":
            raise ConfigError("--reference-judge applies to ratings: add --table ratings")
        df = read_table(
            path,
            table=kind,
            roster=roster,
            mapping=parse_mapping(mapping),
            unknown_models=unknown,
            values=how.values,
            swapped_frame=how.swapped_frame,
            confidence=how.confidence,
            confidence_of=how.confidence_of,
        )
        if refs.judge is not None:
            from recuse.data.generic import reference_from_judge

            df = reference_from_judge(df, refs.judge, roster=roster, file=path)
            notes = tuple(str(n) for n in df.attrs.get("notes", ()))
    return df, kind, found, notes


def _print_json(
    path: str, df: pd.DataFrame, kind: Literal["pairs", "ratings"], found: str | None,
    notes: tuple[str, ...], roster: Roster,
) -> None:  # fmt: skip
    """One JSON object: counts, notes, analyses supported, unread columns."""
    import json

    ignored_cols: dict[str, str] = df.attrs.get(IGNORED, {})
    typer.echo(
        json.dumps(
            {
                "file": str(path),
                "valid": True,
                "table": kind,
                "format": found or "",
                "counts": describe(df, kind),
                "notes": list(notes),
                "analyses": [
                    {
                        "analysis": a,
                        "supported": reason is None,
                        "why_not": as_sentence(reason or ""),
                    }
                    for a, reason in supported_analyses(df, kind, roster)
                ],
                "unread_columns": [{"column": c, "why": w} for c, w in ignored_cols.items()],
            },
            indent=2,
            ensure_ascii=False,
        )
    )
