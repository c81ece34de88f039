"""The machine-readable report: ``report.json`` (every number) and CSV tidy tables.

Every file goes through :mod:`recuse.outputs`: each table is written twice,
``tables/NAME.csv`` exactly as the data are (for scripts: pandas reads back the same
text) and ``tables/for-spreadsheets/NAME.csv`` with formula cells neutralised (for a
spreadsheet: no cell runs as a formula); table file names are bounded
(:func:`table_file`), and :func:`write_report` writes the whole folder all or nothing.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from recuse import outputs
from recuse.report.labels import SCHEMA_VERSION as SCHEMA_VERSION
from recuse.report.model import AuditReport

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")  # JSON Schema of report.json


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json``, shipped in the package."""
    result: dict[str, Any] = json.loads(SCHEMA_FILE.read_text("utf-8"))
    return result


def to_dict(report: AuditReport) -> dict[str, Any]:
    """Everything in the report as JSON-ready data (figures as titles, not images)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "title": report.title,
        "level": report.level,
        "judges": report.judges,
        "summary": [row.to_dict() for row in report.summary()],
        "summary_matrix": report.matrix().to_dict(),
        "flagged_verdicts": [v.to_dict() for v in report.flagged_verdicts()],
        "sections": [s.to_dict() for s in report.sections],
        "tables": {t.name: t.to_dict() for t in report.tables},
        "skipped": [k.to_dict() for k in report.skipped],
        "exclusions": [e.to_dict() for e in report.exclusions],
        "provenance": report.provenance.to_dict(),
        "notes": list(report.notes),
        "timings": [{"analysis": a, "seconds": t} for a, t in report.timings],
    }


def to_json(report: AuditReport) -> str:
    """``to_dict`` as strict JSON (NaN and infinities become null)."""
    return json.dumps(
        outputs.strict_json(to_dict(report)), indent=2, ensure_ascii=False, allow_nan=False
    )


def table_file(name: str) -> str:
    """The CSV file name of the tidy table ``name`` (bounded, safe; see
    :func:`recuse.outputs.file_name`)."""
    return outputs.file_name(name, ".csv")


def _table_texts(report: AuditReport) -> dict[str, str]:
    """``{relative path: CSV text}`` of every tidy table, the exact file and its
    spreadsheet copy (:func:`recuse.outputs.csv_files`); refuses two tables in one file."""
    texts: dict[str, str] = {}
    for table in report.tables:
        name = table_file(table.name)
        if name in texts:
            raise ValueError(f"two tables would be written to {name}; give them distinct names")
        texts.update(outputs.csv_files(name, table.frame))
    return texts


def write_json(report: AuditReport, path: str | Path, *, option: str = "--out") -> Path:
    """Write ``report.json`` to ``path`` atomically (a failure's fix names ``option``)."""
    return outputs.write_text(path, to_json(report) + "\n", option=option)


def write_tables(report: AuditReport, folder: str | Path) -> list[Path]:
    """One CSV per tidy table under ``folder`` (and its copy under
    ``for-spreadsheets/``), all or none; returns the paths of the exact files."""
    out = Path(folder)
    texts = _table_texts(report)
    with outputs.staged(out) as stage:
        for name, text in texts.items():
            stage.write_text(name, text)
    return [out / name for name in texts if "/" not in name]


def _earlier_tables(folder: Path) -> set[str]:
    """File names of the tables listed by the report already in ``folder`` (if any):
    recuse's only, a report.json with a ``schema_version`` and its tables by name, each
    with its rows. Another tool's report.json listing ``tables`` named files of its own
    that were removed as an earlier audit's. A report.json that is no regular file is
    not read: a named pipe there (``mkfifo``) held the audit for good, waiting for a
    writer, before it checked its folder."""
    page = folder / "report.json"
    try:
        if not stat.S_ISREG(page.stat().st_mode):
            return set()
        earlier = json.loads(page.read_text("utf-8"))
        tables = earlier["tables"]
        if "schema_version" not in earlier or not all(
            isinstance(t, dict) and "rows" in t for t in tables.values()
        ):
            return set()
        names = {table_file(str(name)) for name in tables}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()
    return {n for n in names if (folder / "tables" / n).is_file()}


#: the folders under a report's folder that :func:`write_report` writes in
REPORT_FOLDERS = ("tables", f"tables/{outputs.SPREADSHEET_FOLDER}")


def report_files(folder: str | Path, report: AuditReport | None = None) -> list[str]:
    """The paths under ``folder`` (relative, ``/``-separated) that :func:`write_report`
    replaces or removes: ``report.json``, ``report.html``, the tables of the report
    already there (each replaced or removed) and, given ``report``, its own tables, each
    with its spreadsheet copy. A command holds them to its inputs
    (:func:`recuse.outputs.check_output_folder`) before the work and, with the tables
    known, before writing."""
    out = Path(folder)
    names = set(_earlier_tables(out))
    if report is not None:
        names |= {table_file(t.name) for t in report.tables}
    tables = [path for name in sorted(names) for path in outputs.csv_names(f"tables/{name}")]
    return ["report.json", "report.html", *tables]


def write_report(report: AuditReport, folder: str | Path) -> dict[str, Path]:
    """Write ``report.html``, ``report.json``, ``tables/*.csv`` (exact, for scripts) and
    ``tables/for-spreadsheets/*.csv`` (formulas neutralised) under ``folder``.

    Everything is rendered in memory, written to a staging folder and moved into place
    only when all was written (tables first, the page last): a failure (disk full,
    read-only) leaves none of the files, and an :class:`~recuse.errors.OutputError`.
    Tables of an earlier report in ``folder`` that this one does not have are removed
    (only those its ``report.json`` lists); other files are left alone.
    """
    from recuse.report.html import render_html

    out = Path(folder)
    html_text = render_html(report)
    json_text = to_json(report) + "\n"
    tables = _table_texts(report)
    with outputs.staged(out) as stage:  # the folder is locked: read, written, removed at once
        earlier = _earlier_tables(out)
        for name, text in tables.items():
            stage.write_text(f"tables/{name}", text)
        stage.write_text("report.json", json_text)
        stage.write_text("report.html", html_text)
        for name in earlier - set(tables):  # an earlier report's tables would pass for ours
            stage.remove(f"tables/{name}")
            stage.remove(f"tables/{outputs.SPREADSHEET_FOLDER}/{name}")
    paths = {"html": out / "report.html", "json": out / "report.json"}
    written = {Path(name).stem: out / "tables" / name for name in tables if "/" not in name}
    return {**paths, "tables": out / "tables", **written}
