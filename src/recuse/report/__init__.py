"""The audit report: data model, verdicts, figures, HTML and JSON output.

:class:`Bias` and :func:`verdict` are light and imported here; the other names load
their module (and pandas) on first use, so a light module of this package
(:mod:`recuse.report.gate`, :mod:`recuse.report.bias`) imports without them (``recuse
gate``, tests/cli/test_cli_lazy.py).
"""

from typing import TYPE_CHECKING

from recuse.lazy import first_use
from recuse.report.bias import Bias
from recuse.report.verdict import verdict

#: each name loaded on first use, and the module it is read from
_FROM = {
    **dict.fromkeys(("to_dict", "to_json", "write_json", "write_report", "write_tables"), "export"),
    **dict.fromkeys(("render_html", "write_html"), "html"),
    **dict.fromkeys(
        (
            "AuditReport",
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
        ),
        "model",
    ),
}

if TYPE_CHECKING:
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


_HOMES = {name: f"recuse.report.{home}" for name, home in _FROM.items()}
__getattr__, __dir__ = first_use("recuse.report", _HOMES, __all__)
