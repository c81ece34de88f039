"""A finding's notes: what to know of a number that is no reason to distrust it (the
pairs judged in one order only, too few for the one-slot warning), beside its warnings
in report.json, muted on the page, after the number in the terminal, and read by no
gate. JudgeBench's claude-3-haiku has 13 such pairs (counted from the upstream file in
tests/metrics/test_real_from_raw_files.py); its verbosity results said nothing of them."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from recuse.cli import main
from recuse.report.export import schema

HAIKU = "claude-3-haiku-20240307"
NOTE = re.compile(
    r"^13 of the judge's 265 pairs were judged in one order only, the longer answer shown "
    r"first in 8 and second in 5 \(3 more in one slot than in the other\): below the "
    r"one-slot warning's rule"
)


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    out = tmp_path_factory.mktemp("notes") / "r"
    args = ["audit", "judgebench", "--only", "verbosity", "--n-boot", "200", "-v"]
    assert main([*args, "--data-dir", str(shared_data), "--out", str(out)]) == 0
    return out


def _findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for s in report["sections"] for f in s["findings"]]


def test_the_note_is_in_report_json_beside_the_warnings_and_valid(audited: Path) -> None:
    report = json.loads((audited / "report.json").read_text("utf-8"))
    jsonschema.validate(report, schema(), cls=jsonschema.Draft202012Validator)
    assert "notes" in schema()["$defs"]["finding"]["properties"]
    haiku = [f for f in _findings(report) if f["judge"] == HAIKU]
    assert {f["bias"] for f in haiku} == {"verbosity_longer_gap", "verbosity_recall_gap"}
    for f in haiku:
        (note,) = f["notes"]
        assert NOTE.match(note), note
        assert not any("one order" in w or "that order alone" in w for w in f["warnings"])
    # the judges judged in both orders on every pair have none
    assert all(f["notes"] == [] for f in _findings(report) if f["judge"] != HAIKU)
    # the estimates table carries it as text, as it does the warnings
    csv = (audited / "tables" / "verbosity-judgebench.csv").read_text("utf-8")
    assert csv.splitlines()[0].split(",").count("notes") == 1
    assert sum("13 of the judge's 265 pairs" in line for line in csv.splitlines()) >= 2


def test_the_page_shows_the_note_muted_and_the_gate_does_not_fail_on_it(
    audited: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (audited / "report.html").read_text("utf-8")
    shown = re.findall(r'<span class="([^"]*)" data-note>note: ([^<]*)</span>', page)
    assert len(shown) == 2  # the prefer-longer gap and Eq. 6, in the section's table
    assert all(cls == "muted" for cls, _ in shown)
    assert all(text.startswith("13 of the judge&#39;s 265 pairs") for _, text in shown)
    capsys.readouterr()
    code = main(["gate", str(audited / "report.json"), "--max", "verbosity=0.5", "--json"])
    lines = json.loads(capsys.readouterr().out)["lines"]
    assert code == 0
    (haiku,) = [ln for ln in lines if ln["judge"] == HAIKU]
    assert haiku["outcome"] == "pass"


def test_a_note_is_escaped_on_the_page_and_printed_after_the_number() -> None:
    from recuse.analyses import BIASES
    from recuse.metrics.result import MetricResult
    from recuse.report.html import render_html
    from recuse.report.model import AuditReport, Finding, Provenance, Section

    said = "<script>alert('x')</script> & 3 < 4"
    f = Finding(judge="j", bias=BIASES["verbosity_longer_gap"], estimate=0.07, ci_low=0.01,
                ci_high=0.13, n=265, level=0.9, method="m", dataset="d", notes=(said,))  # fmt: skip
    prov = Provenance((), "0", None, {}, 0, "now", "3.11")
    report = AuditReport("t", (Section("verbosity", "Verbosity", "intro", findings=(f,)),), (),
                         (), prov, 0.9)  # fmt: skip
    page = render_html(report)
    assert "<script>alert" not in page
    escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; 3 &lt; 4"
    assert f'<span class="muted" data-note>note: {escaped}</span>' in page
    assert f.to_dict()["notes"] == [said]
    r = MetricResult("m", 0.07, 0.01, 0.13, 0.9, 265, 264, "d; BCa", notes=("a note",),
                     warnings=("a warning",))  # fmt: skip
    assert str(r).splitlines()[-2:] == ["  warning: a warning", "  note: a note"]
    assert replace(r, notes=()).to_dict()["notes"] == []


def test_a_report_written_before_notes_is_valid_and_gated_alike(
    audited: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.json of an older recuse has no ``notes`` on its findings or baselines: the
    schema still takes it (the key is optional) and ``recuse gate`` says the same of it,
    line for line, as of the report with them."""
    report = json.loads((audited / "report.json").read_text("utf-8"))
    for s in report["sections"]:
        for f in s["findings"]:
            del f["notes"]
        for b in s.get("baselines", []):
            b.pop("notes", None)
    older = tmp_path / "report.json"
    older.write_text(json.dumps(report), "utf-8")
    jsonschema.validate(report, schema(), cls=jsonschema.Draft202012Validator)
    said = []
    for path in (audited / "report.json", older):
        capsys.readouterr()
        code = main(["gate", str(path), "--max", "verbosity=0.5", "--json"])
        said.append((code, json.loads(capsys.readouterr().out)["lines"]))
    assert said[0] == said[1]
    assert said[0][0] == 0 and len(said[0][1]) == 7  # JudgeBench's 7 judges
