"""The audit report: data model, verdicts, figures, HTML and JSON output."""

from recuse.report.bias import Bias
from recuse.report.export import to_dict, to_json, write_json, write_report, write_tables
from recuse.report.html import render_html, write_html
from recuse.report.model import (
    AuditReport,
    Exclusion,
    Figure,
    Finding,
    Matrix,
    NotEstimated,
    Provenance,
    Section,
    Source,
    SummaryRow,
    Table,
)
from recuse.report.verdict import verdict

__all__ = [
    "AuditReport",
    "Bias",
    "Exclusion",
    "Figure",
    "Finding",
    "Matrix",
    "NotEstimated",
    "Provenance",
    "Section",
    "Source",
    "SummaryRow",
    "Table",
    "render_html",
    "to_dict",
    "to_json",
    "verdict",
    "write_html",
    "write_json",
    "write_report",
    "write_tables",
]
