"""The ends beyond the resamples are said once per table, not under every row.

At 99% on LLMBar's MT-Bench set (75 prompts) the expanded agreement and κ intervals ask
2,000 resamples for a tail of about 1.6e-3, deeper than their 0.0025: each result
carries :func:`~recuse.metrics.bootstrap.beyond_warning` (report.json keeps every one:
29 in the whole audit). The terminal's table, ``--verbose`` and the page's section
table said the whole 400-character warning on each row; they now say it once, with
the count, the rows and the most resamples any of those warnings names (the estimator's
advice for the deepest end), and report.json is unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from recuse.cli import main
from recuse.metrics.bootstrap import beyond_warning
from recuse.report.extrapolated import (
    EXTRAPOLATED_TAG,
    extrapolated_parts,
    fold_extrapolated,
    shorten_extrapolated,
)
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


def test_agreement_at_99_says_the_extrapolated_ends_once(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, page, terminal = _audit(tmp_path, shared_data, capsys)
    whole = [w for w in _json_warnings(report) if BEYOND.search(w)]
    assert len(whole) == 6  # agreement and κ of the four judges: 2 + 4 past the 0.0025 tail
    assert all(extrapolated_parts(w) is not None for w in whole)  # report.json keeps each
    # the most resamples any one warning asks for reads every one of those ends
    most = max(_need(w) for w in whole)
    headline = [w for r in report["summary"] for f in r["findings"] for w in f["warnings"]]
    most_headline = max(_need(w) for w in headline if BEYOND.search(w))
    # the terminal: one numbered note on the table, one note after --verbose's list
    notes = [ln for ln in terminal.splitlines() if BEYOND.search(ln)]
    assert len(notes) == 2, notes
    table_note, verbose_note = notes
    assert table_note.startswith("[1] 2 intervals have an end beyond the 2,000 resamples")
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


def test_one_warning_alone_is_kept_whole() -> None:
    w = beyond_warning(1.6e-3, resamples=2000, clusters=75, level=0.99, side="low end")
    shown, note = fold_extrapolated([("a", [w]), ("b", ["low n"])], level=0.99)
    assert shown == [(w,), ("low n",)] and note == ""


def test_the_note_names_the_deepest_ends_resamples_not_the_rounded_tails() -> None:
    # 5 / 1.57e-3 = 3,184.7: the estimator's 3,185; the tail as printed (1.6e-03) reads 3,125
    tails = (2.0e-3, 1.57e-3, 1.8e-3)
    ws = [beyond_warning(t, resamples=2000, clusters=75, level=0.99, side="low end") for t in tails]
    _, note = fold_extrapolated([(str(k), [w]) for k, w in enumerate(ws)], level=0.99)
    assert "resamples: 3,185 (--n-boot) would read them all" in note
    assert "tails as deep as 1.6e-03" in note
    # too deep for any number of prompts or resamples: the estimator's words stand
    ws.append(beyond_warning(1e-9, resamples=2000, clusters=5, level=0.99))
    _, note = fold_extrapolated([(str(k), [w]) for k, w in enumerate(ws)], level=0.99)
    assert note.split(" — ")[-1].startswith("add prompts; each interval's own tail")


def test_a_matrix_cell_and_a_tidy_cell_read_the_end_and_the_advice() -> None:
    w = beyond_warning(2.4e-3, resamples=2000, clusters=60, level=0.99, side="high end")
    assert warning_tag(w) == "99% high end extrapolated"  # was "the 99% interval's high…"
    assert shorten_extrapolated(f"{w}; low n: 4 pairs") == (
        "99% high end extrapolated past the 2,000 resamples (tail 2.4e-03): add prompts, "
        "or resamples: 2,084 (--n-boot) would read it; low n: 4 pairs"
    )


def test_a_tail_just_inside_the_resamples_reach_is_not_written_on_it() -> None:
    # an end extrapolated asks for a tail below 2,000 resamples' 0.0025; 2.496e-3 at one
    # significant digit more read "2.5e-03 ... they read 0.0025", the tail on the reach
    w = beyond_warning(2.496e-3, resamples=2000, clusters=90, level=0.99)
    assert "asks them for a tail of 0.002496; they read 0.0025 and no deeper" in w
    parts = extrapolated_parts(w)
    assert parts is not None and parts.tail == 2.496e-3
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
    from dataclasses import replace

    from recuse.report.html import render_html

    w = beyond_warning(1.6e-3, resamples=2000, clusters=75, level=0.9, side="high end")
    sections = tuple(
        replace(
            s, findings=tuple(replace(f, warnings=(w,)) if f.flagged else f for f in s.findings)
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
    ws = [beyond_warning(t, resamples=2000, clusters=90, level=0.99) for t in (2.496e-3, 2.498e-3)]
    _, note = fold_extrapolated([("a", [ws[0]]), ("b", [ws[1]])], level=0.99)
    assert "tails as deep as 0.002496, and the resamples read 0.0025 and no deeper" in note
