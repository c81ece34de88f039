from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from recuse.report import AuditReport, render_html, to_dict, write_report
from recuse.report.export import report_files


def test_json_holds_every_summary_number(sample_report: AuditReport) -> None:
    d = to_dict(sample_report)
    rows = {(r["judge"]): r for r in d["summary"]}
    assert set(rows) == {"gpt-4", "<b>judge</b>"}
    first = rows["gpt-4"]["findings"][0]  # flagged findings come first
    assert first["bias"] == "self_preference_calibrated" and first["significant"] is True
    assert (first["estimate"], first["ci_low"], first["ci_high"], first["n"]) == (
        0.12, 0.03, 0.2, 340,
    )  # fmt: skip
    assert rows["gpt-4"]["flagged"] == ["Self-preference (calibrated to the judge's competence)"]
    assert d["skipped"][0]["analysis"] == "Familiarity (perplexity)"
    assert d["exclusions"][0] == {
        "dataset": "sim", "judge": "gpt-4", "analysis": "", "reason": "unparsed verdict",
        "count": 3, "total": 343,
    }  # fmt: skip
    assert d["provenance"]["seed"] == 7
    assert d["tables"]["examples"]["rows"][0]["p_a"] == 0.75


def test_write_report_files_round_trip(sample_report: AuditReport, tmp_path: Path) -> None:
    paths = write_report(sample_report, tmp_path)
    loaded: dict[str, Any] = json.loads(paths["json"].read_text("utf-8"))
    assert loaded == json.loads(json.dumps(to_dict(sample_report)))
    csv = pd.read_csv(tmp_path / "tables" / "examples.csv")
    assert csv["p_a"].tolist() == [0.75]
    assert not list(tmp_path.glob("*.part"))


def test_nan_becomes_null_in_json(sample_report: AuditReport, tmp_path: Path) -> None:
    from dataclasses import replace

    from recuse.report import Table

    section = sample_report.sections[0]
    t = Table("gaps", "Gaps", pd.DataFrame({"x": [1.0, math.nan]}))
    report = replace(sample_report, sections=(replace(section, tables=(t,)),))
    text = write_report(report, tmp_path)["json"].read_text("utf-8")
    assert json.loads(text)["tables"]["gaps"]["rows"] == [{"x": 1.0}, {"x": None}]


def test_html_escapes_dataset_text_and_has_no_script(
    sample_report: AuditReport, payload: str
) -> None:
    html = render_html(sample_report)
    assert "<script" not in html and "onerror=" not in html.replace("onerror=&#34;", "")
    assert "&lt;b&gt;judge&lt;/b&gt;" in html
    assert "script-src" not in html and "default-src 'none'" in html
    assert html.count('<img src="data:image/') == 4


def test_html_writes_control_and_bidi_characters_as_escapes(sample_report: AuditReport) -> None:
    """A judge named with NUL, ESC and a right-to-left override: the page held them
    as read (a NUL is a parse error, the override reversed what followed it in every
    cell, heading and data-judge attribute); it writes them as the terminal does, the
    JSON keeps them."""
    from dataclasses import replace

    name = "gpt\x00evil\x1b[31m\u202eok"
    sections = tuple(
        replace(s, findings=tuple(replace(f, judge=name) if f.judge == "<b>judge</b>" else f
                                  for f in s.findings))
        for s in sample_report.sections
    )  # fmt: skip
    report = replace(sample_report, sections=sections)
    html = render_html(report)
    assert not any(c in html for c in "\x00\x1b\u202e")
    assert "gpt\\x00evil\\x1b[31m\\u202eok" in html
    assert any(r["judge"] == name for r in to_dict(report)["summary"])


def test_report_files_names_what_write_report_replaces_or_removes(
    sample_report: AuditReport, tmp_path: Path
) -> None:
    """The files a report writes, and those of the report already in the folder: the
    audit holds them to its inputs before writing (an input among them was replaced)."""
    assert report_files(tmp_path) == ["report.json", "report.html"]  # an empty folder
    mine = ["report.json", "report.html", "tables/examples.csv",
            "tables/for-spreadsheets/examples.csv"]  # fmt: skip
    assert report_files(tmp_path, sample_report) == mine
    write_report(sample_report, tmp_path)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.*"))
    assert written == sorted(mine)
    assert report_files(tmp_path) == mine  # the earlier report's tables: replaced or removed
