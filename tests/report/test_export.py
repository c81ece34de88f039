from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recuse.report import AuditReport, Finding, render_html, to_dict, write_report
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


def test_an_absolute_value_finding_says_so_from_the_result_to_the_gate(
    sample_report: AuditReport, tmp_path: Path
) -> None:
    """Eq. 5 (verbosity_deviation, |Eq. 6|) says it is an absolute value where it is
    computed (MetricResult.absolute); a finding made of it carries that into its text
    (no '+'), report.json (``absolute_value``, valid against the schema) and the gate,
    which prints it unsigned as the audit does — where Eq. 6's finding, signed, keeps
    its sign. The interval is Eq. 6's folded: worked out here by cases."""
    from dataclasses import replace

    import jsonschema

    from recuse.analyses.base import from_result
    from recuse.analyses.verbosity import ANALYSIS, VERBOSITY
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.verbosity import verbosity_bias
    from recuse.report.export import schema
    from recuse.report.gate import Threshold, evaluate, load_findings
    from recuse.simulate.pairs import simulate_pairs

    pairs = simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=3).pairs
    boot = Resampling(n_boot=200)
    eq6 = verbosity_bias(pairs, judge="gpt-4", unit="column", boot=boot)
    eq5 = verbosity_bias(pairs, judge="gpt-4", kind="absolute", unit="column", boot=boot)
    assert (eq6.signed, eq6.absolute, eq5.signed, eq5.absolute) == (True, False, False, True)
    assert eq5.estimate == abs(eq6.estimate)
    low, high = sorted((abs(eq6.ci_low), abs(eq6.ci_high)))
    if eq6.ci_low <= 0 <= eq6.ci_high:
        low = 0.0
    assert (eq5.ci_low, eq5.ci_high) == (low, high)
    signed, absolute = (
        replace(from_result(ANALYSIS, VERBOSITY, r, dataset="sim"), judge=judge)
        for r, judge in ((eq6, "eq6"), (eq5, "eq5"))
    )
    assert isinstance(signed, Finding) and isinstance(absolute, Finding)
    assert not signed.absolute and absolute.absolute
    assert signed.text[0] in "+\u2212" and "+" not in absolute.text
    assert "\u2212" not in absolute.text
    section = replace(sample_report.sections[0], findings=(signed, absolute))
    report = replace(sample_report, sections=(section,))
    d = json.loads(json.dumps(to_dict(report)))
    jsonschema.validate(d, schema(), cls=jsonschema.Draft202012Validator)
    bad = json.loads(json.dumps(d))
    bad["sections"][0]["findings"][0]["absolute_value"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema(), cls=jsonschema.Draft202012Validator)
    write_report(report, tmp_path)
    gated = {f["judge"]: f for f in load_findings(tmp_path / "report.json")}
    assert (gated["eq6"]["absolute_value"], gated["eq5"]["absolute_value"]) == (False, True)
    line6 = evaluate(gated["eq6"], Threshold("verbosity_recall_gap", 0.5)).text
    line5 = evaluate(gated["eq5"], Threshold("verbosity_recall_gap", 0.5)).text
    assert f": {signed.text} (" in line6 and f": {absolute.text} (" in line5
    assert "+" not in line5.split(" (")[0]


def test_a_table_defines_only_columns_it_has() -> None:
    from recuse.report.model import Table

    frame = pd.DataFrame({"a": [1.0], "b": [2.0]})
    assert Table("t", "T", frame).to_dict() == {"title": "T", "rows": [{"a": 1.0, "b": 2.0}]}
    assert Table("t", "T", frame, columns={"a": "x"}).to_dict()["columns"] == {"a": "x"}
    with pytest.raises(ValueError, match=r"defines columns it does not have: \['c'\]"):
        Table("t", "T", frame, columns={"c": "y"})


def test_every_number_of_a_finding_cell_and_bias_is_described_by_the_schema(
    sample_report: AuditReport,
) -> None:
    """report.json's schema described p_floor and absolute_value but not material or
    detectable_with_80pct_power: distances from null (position: 0.5 ± 0.05), which a
    script read beside the estimate 0.70 and the null 0.5 as values of the estimate; nor
    q_value, significant or materiality. Every number and reading of a finding, a matrix
    cell and a bias now has its description, and those two say they are distances."""
    from recuse.report.export import schema

    defs = schema()["$defs"]
    d = to_dict(sample_report)
    finding = d["sections"][0]["findings"][0]
    cell = next(
        e for row in d["summary_matrix"]["rows"] for c in row["cells"].values()
        for e in c["estimates"]
    )  # fmt: skip
    bias = d["summary_matrix"]["biases"][0]
    readings = {"significant", "direction", "materiality", "flagged"}
    for name, value in (("finding", finding), ("cell_estimate", cell), ("bias", bias)):
        props = defs[name]["properties"]
        numbers = {
            k for k, v in value.items() if isinstance(v, int | float) and not isinstance(v, bool)
        }
        for key in sorted((numbers | readings) & set(props) - {"text"}):
            assert "description" in props[key], (name, key)
    for key in ("material", "detectable_with_80pct_power"):
        assert "distance from null" in defs["finding"]["properties"][key]["description"]


def test_a_report_json_that_is_not_recuses_removes_none_of_its_tables(
    sample_report: AuditReport, tmp_path: Path
) -> None:
    """A folder holding another tool's report.json and tables/: its ``tables`` list
    named files that recuse took for an earlier audit's tables and removed (and held to
    the inputs as its own). Only a report.json of recuse's shape (``schema_version``,
    tables by name with their rows) says which tables were an earlier report's."""
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "results.csv").write_text("theirs\n")
    (tables / "notes.csv").write_text("theirs too\n")
    for theirs in ({"tables": ["results"]}, {"tables": {"notes": "a summary"}}):
        (tmp_path / "report.json").write_text(json.dumps(theirs))
        assert report_files(tmp_path) == ["report.json", "report.html"]
        write_report(sample_report, tmp_path)
        assert (tables / "results.csv").read_text() == "theirs\n"
        assert (tables / "notes.csv").read_text() == "theirs too\n"
    # recuse's own earlier report's tables are still replaced or removed
    earlier = to_dict(sample_report)
    earlier["tables"]["gone"] = {"title": "an earlier table", "rows": []}
    (tmp_path / "report.json").write_text(json.dumps(earlier))
    (tables / "gone.csv").write_text("an earlier audit's\n")
    assert "tables/gone.csv" in report_files(tmp_path)
    write_report(sample_report, tmp_path)
    assert not (tables / "gone.csv").exists()


def test_the_schema_names_each_key_once() -> None:
    """json.load keeps the last of two equal keys: 8 fields of report.schema.json said
    their description twice (the same words, so none was lost, but an edit to the first
    would have been silently dropped). Every object of the schema names a key once."""
    from recuse.report.export import SCHEMA_FILE

    repeated: list[list[str]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            repeated.append(sorted({k for k in keys if keys.count(k) > 1}))
        return dict(pairs)

    json.loads(SCHEMA_FILE.read_text(encoding="utf-8"), object_pairs_hook=hook)
    assert repeated == []
