"""The ends beyond the resamples are said once per table, not under every row.

At 99% on LLMBar's MT-Bench set (75 prompts) the expanded agreement and κ intervals ask
2,000 resamples for a tail of about 1.6e-3, deeper than their 0.0025: each result
carries :func:`~recuse.metrics.bootstrap.beyond_warning` (report.json keeps every one:
29 in the whole audit). The terminal's table, ``--verbose`` and the page's section
table said the whole 400-character warning on each row; they now say it once, with
the count, the rows, which ends and the most resamples any of those records names (the
estimator's advice for the deepest end). The note reads each result's record
(``extrapolated``: which ends, the tail, the resamples), not the warning's words;
report.json keeps both.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from recuse.analyses.base import warnings_texts
from recuse.bootstrap_rules import Extrapolation
from recuse.cli import main
from recuse.metrics.bootstrap import beyond_warning
from recuse.metrics.result import MetricResult
from recuse.report.extrapolated import EXTRAPOLATED_TAG, fold_extrapolated
from recuse.report.html import warning_tag

BEYOND = re.compile(r"beyond the [\d,]+ resamples")
NEED = re.compile(r"resamples: ([\d,]+) \(--n-boot\)")


def _audit(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], str, str]:
    out = tmp_path / "r"
    args = ["audit", "llmbar-mtbench", "--only", "agreement", "--level", "0.99", "-v"]
    assert main([*args, "--data-dir", str(data), "--out", str(out)]) == 0
    terminal = capsys.readouterr().out
    return (
        json.loads((out / "report.json").read_text()),
        (out / "report.html").read_text(),
        terminal,
    )


def _need(warning: str) -> int:
    m = NEED.search(warning)
    assert m is not None, warning
    return int(m[1].replace(",", ""))


def _json_warnings(report: dict[str, Any]) -> list[str]:
    return [w for s in report["sections"] for f in s["findings"] for w in f["warnings"]]


def _low(tail: float, *, clusters: int = 75, level: float = 0.99) -> Extrapolation:
    """The record of an interval whose low end asked ``tail`` of 2,000 resamples."""
    return Extrapolation(
        low=True, high=False, tail=tail, resamples=2000, clusters=clusters, level=level
    )


def _rows(records: list[Extrapolation]) -> list[tuple[str, list[str], Extrapolation]]:
    return [(str(k), [x.warning()], x) for k, x in enumerate(records)]


def test_agreement_at_99_says_the_extrapolated_ends_once(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, page, terminal = _audit(tmp_path, shared_data, capsys)
    whole = [w for w in _json_warnings(report) if BEYOND.search(w)]
    assert len(whole) == 6  # agreement and κ of the four judges: 2 + 4 past the 0.0025 tail
    # report.json keeps each warning, and beside it the record it was written from
    findings = [f for s in report["sections"] for f in s["findings"]]
    records = [Extrapolation.from_dict(f["extrapolated"]) for f in findings if f["extrapolated"]]
    assert sorted(x.warning() for x in records) == sorted(whole)
    # BCa intervals: the bias correction moved their ends, and the words say so
    assert all(x.bias_corrected for x in records)
    assert all(
        re.search(r"\(Student.s t for 7[45] prompts, bias-corrected, asks them", w) for w in whole
    )
    # a bias correction sent the low end past the resamples, not the high one: the
    # method says which end (it said "its ends" of every such interval)
    assert all(x.side == "low end" for x in records)
    assert all(
        f["method"].endswith("; its low end past the resamples' reach extrapolated along a "
                             "normal tail")
        for f in findings if f["extrapolated"]
    )  # fmt: skip
    # the most resamples any one warning asks for reads every one of those ends
    most = max(_need(w) for w in whole)
    headline = [w for r in report["summary"] for f in r["findings"] for w in f["warnings"]]
    most_headline = max(_need(w) for w in headline if BEYOND.search(w))
    # the terminal: one numbered note on the table, one note after --verbose's list
    notes = [ln for ln in terminal.splitlines() if BEYOND.search(ln)]
    assert len(notes) == 2, notes
    table_note, verbose_note = notes
    assert table_note.startswith("[1] 2 intervals have an end beyond the 2,000 resamples")
    assert "; low ends: 2): Student's t" in table_note
    assert verbose_note.startswith("note: 2 intervals have an end beyond the 2,000")
    assert f"resamples: {most_headline:,} (--n-boot) would read them all" in table_note
    assert terminal.count(f"warning: {EXTRAPOLATED_TAG}") == 2
    # the page: the section's table says it once, each row its tag
    section = page.split('<section id="agreement"', 1)[1].split("</section>", 1)[0]
    findings_table = section.split("<h3>", 1)[0]
    assert len(BEYOND.findall(findings_table)) == 1
    assert findings_table.count(f"&#9888; {EXTRAPOLATED_TAG}") == 6
    assert "6 intervals have an end beyond the 2,000 resamples" in findings_table
    assert f"resamples: {most:,} (--n-boot) would read them all" in findings_table
    # the section's estimates table: each record's end in a line (the CSV keeps them
    # whole: its 6 findings' and Krippendorff's alpha, which is no finding)
    tidy = section.split("<h3>", 1)[1]
    csv = (tmp_path / "r" / "tables" / "agreement-llmbar-mtbench.csv").read_text()
    assert len(BEYOND.findall(csv)) == 7
    assert tidy.count("99% low end extrapolated past the 2,000 resamples (tail ") == 7
    assert "bias-corrected, asks them" not in tidy


def test_one_warning_alone_is_kept_whole() -> None:
    x = _low(1.6e-3)
    w = x.warning()
    shown, note = fold_extrapolated([("a", [w], x), ("b", ["low n"], None)], level=0.99)
    assert shown == [(w,), ("low n",)] and note == ""


def test_the_note_reads_the_records_not_the_words() -> None:
    """The note is tied to each row's ``extrapolated`` record: rows whose warnings read
    like the estimator's but carry no record (a report written before the field) are
    said whole, not folded (the regex folded them by their wording); rows with records
    are counted by their ends, low and high apart."""
    low, high = _low(2.0e-3), replace(_low(1.8e-3), low=False, high=True)
    both = replace(_low(1.0e-3), high=True)
    shown, note = fold_extrapolated(
        [("a", [low.warning()], None), ("b", [high.warning()], None)], level=0.99
    )
    assert note == "" and shown == [(low.warning(),), (high.warning(),)]
    rows = [("a", [low.warning()], low), ("b", [high.warning()], high), ("c", ["x"], None)]
    shown, note = fold_extrapolated([*rows, ("d", ["low n", both.warning()], both)], level=0.99)
    assert shown == [(EXTRAPOLATED_TAG,), (EXTRAPOLATED_TAG,), ("x",), ("low n", EXTRAPOLATED_TAG)]
    assert note.startswith(
        "3 intervals have an end beyond the 2,000 resamples (a; b; d; low ends: 1, high "
        "ends: 1, both ends: 1): Student's t for their prompts asks for tails as deep as "
        "1.0e-03,"
    )
    # 5 / 1e-3: the deepest record's resamples, as the estimator's advice for it says
    assert both.fix() == "add prompts, or resamples: 5,000 (--n-boot) would read them"
    assert "resamples: 5,000 (--n-boot) would read them all" in note
    # a record whose warning is not among the row's (edited away) folds nothing of it
    rows = [("a", ["other"], low), ("b", [high.warning()], high)]
    _, note = fold_extrapolated(rows, level=0.99)
    assert note == ""


def test_the_note_names_the_deepest_ends_resamples_not_the_rounded_tails() -> None:
    # 5 / 1.57e-3 = 3,184.7: the estimator's 3,185; the tail as printed (1.6e-03) reads 3,125
    records = [_low(t) for t in (2.0e-3, 1.57e-3, 1.8e-3)]
    _, note = fold_extrapolated(_rows(records), level=0.99)
    assert "resamples: 3,185 (--n-boot) would read them all" in note
    assert "tails as deep as 1.6e-03" in note
    # too deep for any number of prompts or resamples: the estimator's words stand
    records.append(replace(_low(1e-9, clusters=5), high=True))
    _, note = fold_extrapolated(_rows(records), level=0.99)
    assert note.split(" — ")[-1].startswith("add prompts; each interval's own ends and tail")


def test_a_matrix_cell_and_a_tidy_cell_read_the_end_and_the_advice() -> None:
    x = replace(_low(2.4e-3, clusters=60), low=False, high=True)
    w = x.warning()
    assert warning_tag(w, x) == "99% high end extrapolated"  # was "the 99% interval's high…"
    assert warning_tag(w, None) == "the 99% interval's high end lies beyond…"  # no record
    r = MetricResult("m", 0.5, 0.4, 0.6, 0.99, 60, 60, "m; BCa", warnings=(w, "low n: 4 pairs"),
                     extrapolated=x)  # fmt: skip
    assert warnings_texts([r, replace(r, extrapolated=None)]) == {
        "warnings": [
            "99% high end extrapolated past the 2,000 resamples (tail 2.4e-03): add prompts, "
            "or resamples: 2,084 (--n-boot) would read it; low n: 4 pairs",
            f"{w}; low n: 4 pairs",  # no record (the tidy cell's regex shortened it by its words)
        ]
    }


def test_a_tail_just_inside_the_resamples_reach_is_not_written_on_it() -> None:
    # an end extrapolated asks for a tail below 2,000 resamples' 0.0025; 2.496e-3 at one
    # significant digit more read "2.5e-03 ... they read 0.0025", the tail on the reach
    w = beyond_warning(2.496e-3, resamples=2000, clusters=90, level=0.99)
    assert "asks them for a tail of 0.002496; they read 0.0025 and no deeper" in w
    assert Extrapolation(True, True, 2.496e-3, 2000, 90, 0.99).asked == "0.002496"
    # a tail well inside keeps its short form
    assert "a tail of 1.6e-03;" in beyond_warning(1.6e-3, resamples=2000, clusters=75, level=0.99)


def test_the_gate_says_the_extrapolated_end_in_a_line_and_names_the_audits_n_boot(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `recuse gate` takes no --n-boot: its caveat said "resamples: 3,179 (--n-boot) would
    # read it" in the whole 400 characters under each agreement line
    report, _, _ = _audit(tmp_path, shared_data, capsys)
    headline = [w for r in report["summary"] for f in r["findings"] for w in f["warnings"]]
    needs = sorted(_need(w) for w in headline if BEYOND.search(w))
    assert len(needs) == 2
    assert (
        main(["gate", str(tmp_path / "r" / "report.json"), "--min", "agreement_accuracy=0.5"]) == 0
    )
    caveats = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ! ")]
    assert len(caveats) == 2 and all(len(c) < 160 for c in caveats), caveats
    said = sorted(_need(c.replace("recuse audit ", "")) for c in caveats)
    assert said == needs  # the estimator's numbers, each on its own line
    assert all("(recuse audit --n-boot) would read it" in c for c in caveats)
    assert all(
        c.startswith("  ! 99% low end extrapolated past the 2,000 resamples") for c in caveats
    )


def test_the_pages_verdict_list_says_a_flagged_findings_extrapolated_end_in_a_line(
    sample_report: Any,
) -> None:
    from recuse.report.html import render_html

    x = replace(_low(1.6e-3, level=0.9), low=False, high=True)
    w = x.warning()
    sections = tuple(
        replace(
            s,
            findings=tuple(
                replace(f, warnings=(w,), extrapolated=x) if f.flagged else f for f in s.findings
            ),
        )
        for s in sample_report.sections
    )
    report = replace(sample_report, sections=sections)
    assert report.flagged_verdicts()
    page = render_html(report)
    (verdicts,) = re.findall(r"<ul class=\"verdicts\".*?</ul>", page, flags=re.S)
    assert "90% high end extrapolated past the 2,000 resamples (tail 1.6e-03)" in verdicts
    assert "bias-corrected, asks them" not in verdicts  # the whole warning: the section's table


def test_verbose_says_a_warning_many_judges_share_once(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # JudgeBench's five reward models score each answer alone: each one's position rate
    # carries the same 400-character warning (same verdict in both orders on all 350
    # pairs); --verbose said it whole five times, the table once
    out = tmp_path / "r"
    args = ["audit", "judgebench", "--only", "position", "--n-boot", "200", "-v"]
    assert main([*args, "--data-dir", str(shared_data), "--out", str(out)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "warning:" in ln]
    report = json.loads((out / "report.json").read_text())
    same = [w for s in report["sections"] for f in s["findings"] for w in f["warnings"]]
    assert len(same) == 5 and len(set(same)) == 1  # report.json keeps each
    assert lines[0] == f"      warning: {same[0]}"
    first = next(r["judge"] for r in report["summary"] if any(f["warnings"] for f in r["findings"]))
    assert lines[1:] == [f"      warning: as under {first}'s Position above"] * 4


def test_the_pages_section_table_says_a_shared_warning_once(
    tmp_path: Path, shared_data: Path
) -> None:
    out = tmp_path / "r"
    args = ["audit", "judgebench", "--only", "position", "--n-boot", "200"]
    assert main([*args, "--data-dir", str(shared_data), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    (section,) = [s for s in report["sections"] if s["id"] == "position"]
    warned = [f for f in section["findings"] if f["warnings"]]
    assert len(warned) == 5 and len({f["warnings"][0] for f in warned}) == 1
    page = (out / "report.html").read_text()
    table = page.split('<section id="position"', 1)[1].split("</table>", 1)[0]
    shown = re.findall(r"data-warning>&#9888; ([^<]*)", table)
    first = f"{warned[0]['judge']} · Position"
    assert shown[1:] == [f"as on {first} above"] * 4
    assert shown[0].startswith("its verdict is the same in both orders on all 350 pairs")


def test_the_note_writes_the_deepest_tail_as_the_estimator_wrote_it() -> None:
    # two ends just past 2,000 resamples' 0.0025: the note read "tails as deep as
    # 2.5e-03, and the resamples read 0.0025", the tail on the reach
    records = [replace(_low(t, clusters=90), high=True) for t in (2.496e-3, 2.498e-3)]
    _, note = fold_extrapolated(_rows(records), level=0.99)
    assert "tails as deep as 0.002496, and the resamples read 0.0025 and no deeper" in note


def test_the_gate_reads_a_report_written_before_the_record_and_refuses_a_broken_one(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse gate` reads report.json: one written before ``extrapolated`` (no such key)
    still gates, its caveats printed as written; a record that is no record is a clear
    error naming the finding, exit 2."""
    report, _, _ = _audit(tmp_path, shared_data, capsys)
    path = tmp_path / "r" / "report.json"
    whole = sorted(
        w
        for r in report["summary"]
        for f in r["findings"]
        for w in f["warnings"]
        if BEYOND.search(w)
    )
    for part in ("summary", "sections"):
        for row in report[part]:
            for f in row["findings"]:
                del f["extrapolated"]
    path.write_text(json.dumps(report))
    assert main(["gate", str(path), "--min", "agreement_accuracy=0.5"]) == 0
    caveats = [ln[4:] for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ! ")]
    assert sorted(caveats) == whole and len(whole) == 2
    report["sections"][0]["findings"][0]["extrapolated"] = {"low_end": "yes"}
    path.write_text(json.dumps(report))
    assert main(["gate", str(path), "--min", "agreement_accuracy=0.5"]) == 2
    err = capsys.readouterr().err
    assert "finding 1 of section 1: 'extrapolated' has no 'low_end' of the right kind" in err
    assert "Traceback" not in err


def _past_the_acceleration() -> MetricResult:
    """A rate from 5 prompts, one of them all 1s and the others near 0, at 99.9%: the
    jackknife's acceleration (one prompt far from the rest) sends Student's expanded
    end past the BCa map's range, ``1 − a (z0 + z') ≤ 0``, so the level it asks of the
    resamples is 0: its ``tail`` is 0 (no number of resamples reads it). Its rates are
    0.3 at most: from rates up to 1 that end, extrapolated to 2.96, is cut to the
    extent's 1, no extrapolated end (the record names the low end alone)."""
    import numpy as np
    import pandas as pd

    from recuse.metrics.bootstrap import GroupedStatistic, Resampling, ratio
    from recuse.metrics.estimate import MetricSpec, run_specs

    clusters = np.repeat(np.arange(5), 3)
    y = np.where(clusters < 1, 0.3, 0.015 * (clusters % 2))
    stat = GroupedStatistic(
        name="rate", values=np.column_stack([y, np.ones(15)]), group=np.zeros(15, dtype=int),
        labels=("j",), combine=ratio, required=((1, "pairs"),),
    )  # fmt: skip
    spec = MetricSpec("rate", stat, "a rate", null=0.5, expanded=True)
    boot = Resampling(n_boot=2000, level=0.999, seed=1)
    (r,), _ = run_specs([spec], pd.Series(clusters), boot=boot, min_n=1)
    return r


def test_a_tail_of_0_is_a_record_the_gate_reads(tmp_path: Path) -> None:
    """An end past the BCa acceleration's range asks a tail of 0 (``Φ(−∞)``): the audit
    wrote ``"tail": 0.0`` into report.json, and ``recuse gate`` refused that report ("a
    tail outside (0, 0.5)", exit 2), as did the schema. A tail so small that 5 / tail
    overflows (1e-320) raised OverflowError from ``math.ceil`` in the warning's advice."""
    from recuse.report.export import schema
    from recuse.report.gate import load_report

    r = _past_the_acceleration()
    x = r.extrapolated
    assert x is not None and x.tail == 0.0 and x.need is None
    assert x.fix() == (
        "more prompts will not bring them within reach (99.9%'s normal tail, 5.0e-04, lies "
        "past the resamples' reach): more than the 1,000,000 resamples allowed would read them"
    )
    record = r.to_dict()["extrapolated"]
    assert record["tail"] == 0.0 and record["n_boot_to_read"] is None
    assert Extrapolation.from_dict(record) == x
    finding = {
        "bias": "position", "judge": "j", "dataset": "d", "estimate": r.estimate,
        "ci_low": r.ci_low, "ci_high": r.ci_high, "null": 0.5, "level": 0.999, "n": r.n,
        "clusters": 5, "warnings": list(r.warnings), "extrapolated": record,
    }  # fmt: skip
    path = tmp_path / "report.json"
    sections = [{"id": "position", "findings": [finding]}]
    path.write_text(json.dumps({"schema_version": 1, "level": 0.999, "sections": sections}))
    assert load_report(path).findings[0]["extrapolated"] == record
    tail = schema()["$defs"]["finding"]["properties"]["extrapolated"]["properties"]["tail"]
    assert tail.get("minimum") == 0 and "exclusiveMinimum" not in tail
    tiny = replace(x, tail=1e-320)
    assert tiny.need is None and "tail of 1.0e-320;" in tiny.warning()


def test_the_matrix_cells_verdicts_and_gate_json_carry_the_record(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.json's findings carried ``extrapolated``; its summary matrix cells and
    flagged verdicts (each with the finding's warnings and interval) and ``recuse gate
    --json``'s lines did not, so a script reading those had the words alone. Each now
    carries the finding's record, null where it has none; the report stays valid
    against its schema."""
    import jsonschema

    from recuse.report.export import schema

    report, _, _ = _audit(tmp_path, shared_data, capsys)
    jsonschema.validate(report, schema(), cls=jsonschema.Draft202012Validator)
    by_key = {
        (f["judge"], f["bias"], f["dataset"], f["detail"]): f["extrapolated"]
        for s in report["sections"]
        for f in s["findings"]
    }
    cells = [
        (row["judge"], key, e)
        for row in report["summary_matrix"]["rows"]
        for key, c in row["cells"].items()
        for e in c["estimates"]
    ]
    assert any(e["extrapolated"] for _, _, e in cells)
    for judge, key, e in cells:
        assert e["extrapolated"] == by_key[(judge, key, e["dataset"], e["detail"])]
    for v in report["flagged_verdicts"]:
        assert v["extrapolated"] == by_key[(v["judges"][0], v["bias"], v["dataset"], v["detail"])]
    path = tmp_path / "r" / "report.json"
    gate = ["gate", str(path), "--min", "agreement_accuracy=0.5", "--json"]
    assert main(gate) == 0
    lines = json.loads(capsys.readouterr().out)["lines"]
    assert sum(1 for x in lines if x["extrapolated"]) == 2
    for x in lines:
        record = by_key[(x["judge"], x["bias"], x["dataset"], "")]
        assert x["extrapolated"] == record
        assert (record is not None) == any(BEYOND.search(w) for w in x["warnings"])


def _gated(tmp_path: Path, record: object, **more: Any) -> Path:
    """A report.json of one position finding (90%, 12 prompts) whose ``extrapolated``
    is ``record``."""
    finding = {
        "bias": "position", "judge": "j", "dataset": "d", "estimate": 0.5, "ci_low": 0.4,
        "ci_high": 0.6, "null": 0.5, "level": 0.9, "n": 40, "clusters": 12,
        "warnings": [], "extrapolated": record, **more,
    }  # fmt: skip
    path = tmp_path / "report.json"
    sections = [{"id": "position", "findings": [finding]}]
    path.write_text(json.dumps({"schema_version": 1, "level": 0.9, "sections": sections}))
    return path


def test_a_huge_crafted_record_is_refused_in_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record whose ``low_end`` is a 1 MB text: the gate's error quoted it whole (a
    10 MB report gave a 10 MB error line); now the value is cut, its length said."""
    path = _gated(tmp_path, {"low_end": "x" * 1_000_000, "high_end": True})
    assert main(["gate", str(path), "--max", "position=0.2"]) == 2
    err = capsys.readouterr().err
    assert "'extrapolated' has no 'low_end' of the right kind (got 'xxx" in err
    assert "… (1,000,002 characters))" in err and len(err) < 1000
    path = _gated(tmp_path, {**_low(1e-3).to_dict(), "resamples": 10**400, "tail": 0.7})
    assert main(["gate", str(path), "--max", "position=0.2"]) == 2
    err = capsys.readouterr().err
    assert "names no end or a tail outside [0, 0.5)" in err and len(err) < 1000


def test_a_records_resamples_past_the_audits_bound_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``resamples`` 10**30 (a tail of 1e-3, 12 prompts) was read by ``recuse gate``: no
    audit keeps more than MAX_N_BOOT resamples (check_n_boot), so a record saying more
    is refused naming the file's finding and field, exit 2; MAX_N_BOOT itself gates."""
    from recuse.bootstrap_rules import MAX_N_BOOT

    ok = replace(_low(1e-3, clusters=12), level=0.9).to_dict()
    at = _gated(tmp_path, {**ok, "resamples": MAX_N_BOOT})
    assert main(["gate", str(at), "--max", "position=0.2"]) == 0
    capsys.readouterr()
    for many in (MAX_N_BOOT + 1, 10**30):
        path = _gated(tmp_path, {**ok, "resamples": many})
        assert main(["gate", str(path), "--max", "position=0.2"]) == 2
        err = capsys.readouterr().err
        assert str(path.name) in err and "finding 1 of section 1" in err
        assert f"'extrapolated' has 'resamples' {many}, more than the 1,000,000" in err
        assert "Traceback" not in err


def test_a_record_of_another_interval_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record that is not of its finding's interval (another level, or another number
    of prompts) was read and passed on by ``recuse gate --json`` beside the finding's
    numbers; the record says which interval's ends were extrapolated, so it is refused
    as a report.json that is not the audit's, naming the finding. A record of its own
    interval gates."""
    ok = replace(_low(1e-3, clusters=12), level=0.9).to_dict()
    assert main(["gate", str(_gated(tmp_path, ok)), "--max", "position=0.2"]) == 0
    capsys.readouterr()
    for bad, said in (
        ({**ok, "level": 0.99}, "'extrapolated' is of level 0.99, the finding's is 0.9"),
        ({**ok, "clusters": 75}, "'extrapolated' is of 75 prompts, the finding resamples 12"),
    ):
        assert main(["gate", str(_gated(tmp_path, bad)), "--max", "position=0.2", "--json"]) == 2
        err = capsys.readouterr().err
        assert f"finding 1 of section 1: {said}" in err and "Traceback" not in err


def test_a_records_rule_round_trips_and_an_older_record_is_a_bca_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The record names its interval's rule (``bias_corrected``: BCa, or the
    leaderboard's percentile ends), and its warning follows it; a record written before
    the key is a BCa interval's, whose warning then said "bias-corrected" (the folded
    note and the gate's line still find it); a key of the wrong kind is refused."""
    pct = replace(_low(2.8e-4, clusters=73, level=0.999), bias_corrected=False)
    assert Extrapolation.from_dict(pct.to_dict()) == pct
    assert "(Student's t for 73 prompts asks them for a tail of 2.8e-04;" in pct.warning()
    old = {k: v for k, v in _low(1e-3).to_dict().items() if k != "bias_corrected"}
    assert Extrapolation.from_dict(old).bias_corrected is True
    assert "(Student's t for 75 prompts, bias-corrected, asks them" in _low(1e-3).warning()
    bad = {**_low(1e-3, clusters=12).to_dict(), "level": 0.9, "bias_corrected": "yes"}
    assert main(["gate", str(_gated(tmp_path, bad)), "--max", "position=0.2"]) == 2
    err = capsys.readouterr().err
    assert "'extrapolated' has no 'bias_corrected' of the right kind (got 'yes')" in err


def test_the_advice_of_two_ends_or_many_says_them() -> None:
    """The advice of an interval's two ends, and the note's of many, said "bring it
    within reach … would read it" (99.9% from 73 prompts: "more prompts will not bring
    it within reach"); one end keeps "it"."""
    one = _low(2.8e-4, clusters=73, level=0.999)
    both = replace(one, high=True)
    assert one.fix().startswith("more prompts will not bring it within reach")
    assert both.fix().startswith("more prompts will not bring them within reach")
    assert both.fix().endswith("17,858 resamples (--n-boot) would read them")  # ⌈5 / 2.8e-4⌉
    assert both.warning().startswith("the 99.9% interval's ends lie beyond")
    assert "they are extrapolated" in both.warning() and "bring them within" in both.warning()
    _, note = fold_extrapolated(_rows([one, one]), level=0.999)
    assert "more prompts will not bring them within reach (99.9%'s normal tail, 5.0e-04, " in note
    assert note.endswith("lies past the resamples' reach): 17,858 resamples (--n-boot) would "
                         "read them all; each interval's own ends and tail: report.json's "
                         "extrapolated")  # fmt: skip
