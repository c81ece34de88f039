"""The machine-readable report: ``report.json`` (every number) and CSV tidy tables."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from recuse.report.model import Report

SCHEMA_VERSION = 1


def to_dict(report: Report) -> dict[str, Any]:
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
        "tables": {t.name: {"title": t.title, "rows": t.records()} for t in report.tables},
        "skipped": [k.to_dict() for k in report.skipped],
        "exclusions": [e.to_dict() for e in report.exclusions],
        "provenance": report.provenance.to_dict(),
        "notes": list(report.notes),
        "timings": [{"analysis": a, "seconds": t} for a, t in report.timings],
    }


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_json(report: Report) -> str:
    """``to_dict`` as strict JSON (NaN and infinities become null)."""
    return json.dumps(_finite(to_dict(report)), indent=2, ensure_ascii=False, allow_nan=False)


def write_json(report: Report, path: str | Path) -> Path:
    p = Path(path)
    p.write_text(to_json(report) + "\n", encoding="utf-8")
    return p


def write_tables(report: Report, folder: str | Path) -> list[Path]:
    """One CSV per tidy table under ``folder``; returns the paths written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table in report.tables:
        path = out / f"{table.name}.csv"
        table.frame.to_csv(path, index=False)
        written.append(path)
    return written


def write_report(report: Report, folder: str | Path) -> dict[str, Path]:
    """Write ``report.html``, ``report.json`` and ``tables/*.csv`` under ``folder``.

    The page and the JSON are rendered in memory first and written under temporary
    names that are renamed at the end, so a failure leaves no half-written report.
    """
    from recuse.report.html import render_html

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    html_text = render_html(report)
    json_text = to_json(report) + "\n"
    tables = write_tables(report, out / "tables")
    paths = {"html": out / "report.html", "json": out / "report.json"}
    for key, text in (("html", html_text), ("json", json_text)):
        tmp = paths[key].with_name(paths[key].name + ".part")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(paths[key])
    return {**paths, "tables": out / "tables", **{t.stem: t for t in tables}}
