"""The one-screen summary: judge × bias matrix, flagged verdict lines, the CLI's lines."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from recuse.analyses import BIASES, AuditOptions
from recuse.cli.audit import summary_line
from recuse.report import (
    AuditReport,
    Finding,
    NotEstimated,
    Provenance,
    Section,
    Source,
    render_html,
    to_dict,
    write_report,
)
from recuse.roster import Roster

HOSTILE = "<script>document.title='PWNED'</script>"


def _f(judge: str, bias: str, est: float, lo: float, hi: float, n: int, **kw: Any) -> Finding:
    kw.pop("null", None)  # the no-bias value is the bias's own
    return Finding(
        judge=judge, bias=BIASES[bias], estimate=est, ci_low=lo, ci_high=hi, n=n, level=0.9,
        method="m", **kw,
    )  # fmt: skip


def Skipped(
    analysis: str,
    reason: str,
    dataset: str = "",
    judge: str = "",
    headline: bool = True,
    bias: str = "",
    all_judges: int = 0,
) -> NotEstimated:
    return NotEstimated(analysis, reason, dataset, judge, headline, BIASES.get(bias), all_judges)


def _matrix(report: AuditReport) -> dict[str, Any]:
    return report.matrix().to_dict()


def _summary(report: AuditReport) -> list[dict[str, Any]]:
    return [r.to_dict() for r in report.summary()]


def _verdicts(report: AuditReport) -> list[dict[str, Any]]:
    return [v.to_dict() for v in report.flagged_verdicts()]


# Judge "a": verbosity from two datasets (one flagged), position flagged below 0.5 (d1)
# and not estimated from d3, self-preference not estimated, a non-headline DP finding.
# "b" and "c": one pooled family-bias estimate each (flagged), self-bias (c flagged).
# "d": only reasons (nothing estimable). HOSTILE: a flagged self-preference.
FINDINGS = (
    _f("a", "verbosity_recall_gap", 0.2, 0.1, 0.3, 100, dataset="d1"),
    _f("a", "verbosity_recall_gap", 0.05, -0.02, 0.12, 80, dataset="d2"),
    _f("a", "position", 0.4, 0.35, 0.45, 90, dataset="d1", null=0.5),
    _f("a", "self_preference_dp", 0.5, 0.3, 0.7, 90, dataset="d1", headline=False),
    _f("b", "self_bias", 0.01, -0.02, 0.04, 700, dataset="r"),
    _f("c", "self_bias", 0.06, 0.02, 0.1, 650, dataset="r"),
    _f("b", "family_bias", -0.05, -0.08, -0.02, 1350, dataset="r", detail="λ pooled over F"),
    _f("c", "family_bias", -0.05, -0.08, -0.02, 1350, dataset="r", detail="λ pooled over F"),
    _f(HOSTILE, "self_preference_eo", 0.3, 0.1, 0.5, 40, dataset="d1"),
)
SKIPS = (
    Skipped(
        "Self-preference",
        "self_preference_eo: no pairs where the human prefers the judge's own response",
        "d1",
        "a",
        bias="self_preference_eo",
    ),
    Skipped(
        "Verbosity",
        "verbosity_bias: no pairs where the human prefers the longer response",
        "d3",
        "d",
        bias="verbosity_recall_gap",
    ),
    Skipped(
        "Position",
        "first_position_rate: no pairs judged in both orders",
        "d3",
        bias="position",
        all_judges=2,
    ),
    Skipped(
        "Familiarity (perplexity)",
        "no perplexities in this data (columns ppl_a, ppl_b)",
        "d1",
        bias="familiarity",
    ),
    Skipped(
        "Favoritism regression (ratings)", "robustness check gam: needs pygam", "r", headline=False
    ),
    Skipped(
        "Self-preference",
        "self_preference_dp: no pairs holding the judge's own answer",
        "d1",
        "a",
        headline=False,
        bias="self_preference_dp",
    ),
)


@pytest.fixture(scope="module")
def report() -> AuditReport:
    sources = (
        Source("d1", "pairs", 500, judges=("a", HOSTILE)),
        Source("d2", "pairs", 80, judges=("a",)),
        Source("d3", "pairs", 30, judges=("a", "d")),
        Source("r", "ratings", 1350, judges=("b", "c")),
    )
    prov = Provenance(sources, "0.1.0", None, {}, 0, "2025-01-01T00:00:00", "3.11")
    section = Section("all", "All", "intro", findings=FINDINGS)
    return AuditReport("Audit", (section,), SKIPS, (), prov, 0.9)


def _cells(report: AuditReport) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (row["judge"], bias): cell
        for row in _matrix(report)["rows"]
        for bias, cell in row["cells"].items()
    }


def test_matrix_has_one_row_per_judge_and_the_biases_present(report: AuditReport) -> None:
    m = _matrix(report)
    judges = [r["judge"] for r in m["rows"]]
    assert judges == [r["judge"] for r in _summary(report)]
    assert sorted(judges) == sorted(["a", "b", "c", "d", HOSTILE])
    # columns: headline findings' biases plus the judges' not-estimated ones, in order;
    # the DP measure is not a headline bias and familiarity is estimated for nobody
    assert [b["bias"] for b in m["biases"]] == [
        "self_preference_eo", "self_bias", "family_bias", "verbosity_recall_gap", "position",
    ]  # fmt: skip
    assert {b["bias"]: b["datasets"] for b in m["biases"]}["verbosity_recall_gap"] == ["d1", "d2"]


def test_flagged_cells_are_exactly_the_significant_findings(report: AuditReport) -> None:
    shown = {
        (judge, bias, e["dataset"]): e
        for (judge, bias), cell in _cells(report).items()
        for e in cell["estimates"]
    }
    headline = {(f.judge, f.bias.key, f.dataset): f for f in FINDINGS if f.headline}
    assert set(shown) == set(headline)
    flagged = {k for k, e in shown.items() if e["significant"]}
    assert flagged == {
        ("a", "verbosity_recall_gap", "d1"), ("a", "position", "d1"), ("c", "self_bias", "r"),
        ("b", "family_bias", "r"), ("c", "family_bias", "r"),
    }  # fmt: skip
    # equal opportunity is not adjusted for the judge's competence: never flagged
    assert not shown[(HOSTILE, "self_preference_eo", "d1")]["significant"]
    for key, e in shown.items():
        f = headline[key]
        assert (e["estimate"], e["ci_low"], e["ci_high"], e["n"]) == (
            f.estimate, f.ci_low, f.ci_high, f.n,
        )  # fmt: skip
        assert e["verdict"] == f.verdict and e["verdict"].endswith(f"n={f.n:,}")
    assert shown[("a", "position", "d1")]["text"] == "0.40 [0.35, 0.45]"  # no-bias 0.5: unsigned
    assert shown[("a", "position", "d1")]["direction"] == "negative"


def test_cells_that_could_not_be_estimated_carry_the_reason(report: AuditReport) -> None:
    cells = _cells(report)
    sp = cells[("a", "self_preference_eo")]
    assert sp["estimates"] == []
    assert sp["not_estimated"] == [
        {"dataset": "d1", "analysis": "Self-preference", "reason": SKIPS[0].reason}
    ]
    # "all 2 judges" of d3 reach both a (next to its d1 estimate) and d
    assert [m["dataset"] for m in cells[("a", "position")]["not_estimated"]] == ["d3"]
    assert len(cells[("a", "position")]["estimates"]) == 1
    d = next(r for r in _matrix(report)["rows"] if r["judge"] == "d")
    assert d["nothing_estimated"] and d["estimated"] == d["flagged"] == 0
    assert {b: [m["reason"] for m in c["not_estimated"]] for b, c in d["cells"].items()} == {
        "verbosity_recall_gap": [SKIPS[1].reason],
        "position": [SKIPS[2].reason],
    }
    assert all(not c["estimates"] for c in d["cells"].values())
    # the non-headline DP skip is in the report, not in the matrix
    assert ("a", "self_preference_dp") not in cells
    (anywhere,) = _matrix(report)["not_estimated_anywhere"]
    assert anywhere == {
        "analysis": "Familiarity (perplexity)",
        "reasons": [{"reason": SKIPS[3].reason, "datasets": ["d1"]}],
    }


def test_flagged_verdicts_one_line_per_estimate_pooled_judges_together(report: AuditReport) -> None:
    lines = _verdicts(report)
    assert [(v["judges"], v["bias"], v["dataset"]) for v in lines] == [
        (["a"], "verbosity_recall_gap", "d1"),
        (["a"], "position", "d1"),
        (["b", "c"], "family_bias", "r"),
        (["c"], "self_bias", "r"),
    ]
    pooled = lines[2]
    assert pooled["verdict"] == (
        "rates its family's answers lower than the reference warrants: "
        "\u22120.050 [\u22120.080, \u22120.020], n=1,350"
    )
    assert pooled["pooled"] and not any(v["pooled"] for v in lines if v is not pooled)
    assert lines[1]["verdict"].startswith("prefers the answer shown second: 0.40 [0.35, 0.45]")


def test_equal_numbers_of_two_judges_are_not_pooled_unless_the_bias_is(report: AuditReport) -> None:
    """Two judges with the same verbosity numbers keep a line each; a family's λ is one."""
    twins = (
        _f("x", "verbosity_recall_gap", 0.2, 0.1, 0.3, 100, dataset="d1"),
        _f("y", "verbosity_recall_gap", 0.2, 0.1, 0.3, 100, dataset="d1"),
        _f("x", "family_bias", 0.2, 0.1, 0.3, 100, dataset="r"),
        _f("y", "family_bias", 0.2, 0.1, 0.3, 100, dataset="r"),
    )
    other = replace(report, sections=(Section("all", "All", "intro", findings=twins),), skipped=())
    lines = _verdicts(other)
    assert [(v["judges"], v["bias"], v["pooled"]) for v in lines] == [
        (["x", "y"], "family_bias", True),
        (["x"], "verbosity_recall_gap", False),
        (["y"], "verbosity_recall_gap", False),
    ]


def test_json_carries_the_matrix_and_the_verdicts(report: AuditReport, tmp_path: Path) -> None:
    d = to_dict(report)
    assert d["summary_matrix"] == _matrix(report)
    assert d["flagged_verdicts"] == _verdicts(report)
    assert [r["nothing_estimated"] for r in d["summary"]] == [
        r["judge"] == "d" for r in d["summary"]
    ]
    written = json.loads(write_report(report, tmp_path)["json"].read_text("utf-8"))
    assert written["summary_matrix"] == json.loads(json.dumps(d["summary_matrix"]))


class _Page(HTMLParser):
    """The summary matrix and the flagged verdict list of a rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self.verdicts: list[str] = []
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.in_matrix = self.in_verdicts = False
        self.details_open: bool | None = None
        self.cards_in_details = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.stack.append((tag, a))
        if tag == "table" and a.get("id") == "summary-matrix":
            self.in_matrix = True
        elif tag == "ul" and a.get("id") == "flagged-verdicts":
            self.in_verdicts = True
        elif tag == "details" and a.get("id") == "all-findings":
            self.details_open = "open" in a
        elif tag == "div" and a.get("class") == "judge" and self.details_open is not None:
            self.cards_in_details += 1
        if self.in_matrix and tag == "tr" and "data-judge" in a:
            self.rows.append({"judge": a["data-judge"], "cells": {}, "text": ""})
        if self.in_matrix and tag == "td" and self.rows:
            cell = {"class": a.get("class", ""), "text": "", "titles": [a.get("title", "")]}
            self.rows[-1]["cells"][a["data-bias"]] = cell
        if self.in_matrix and tag == "span" and self.rows and self._td() is not None:
            self.rows[-1]["cells"][self._td()]["titles"].append(a.get("title", ""))  # type: ignore[index]
        if self.in_verdicts and tag == "li":
            self.verdicts.append("")

    def _td(self) -> str | None:
        for tag, a in reversed(self.stack):
            if tag == "td":
                return a.get("data-bias")
            if tag == "tr":
                return None
        return None

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            top, _ = self.stack.pop()
            if top == tag:
                break
        if tag == "table":
            self.in_matrix = False
        if tag == "ul":
            self.in_verdicts = False

    def handle_data(self, data: str) -> None:
        if self.in_matrix and self.rows:
            bias = self._td()
            if bias is not None:
                self.rows[-1]["cells"][bias]["text"] += data
            else:
                self.rows[-1]["text"] += data
        if self.in_verdicts and self.verdicts:
            self.verdicts[-1] += data


def test_html_matrix_rows_flags_and_reasons(report: AuditReport) -> None:
    html = render_html(report)
    page = _Page()
    page.feed(html)
    matrix = _matrix(report)
    assert [r["judge"] for r in page.rows] == [r["judge"] for r in matrix["rows"]]
    biases = [b["bias"] for b in matrix["biases"]]
    for row, data in zip(page.rows, matrix["rows"], strict=True):
        assert list(row["cells"]) == biases
        for bias in biases:
            cell, shown = data["cells"].get(bias), row["cells"][bias]
            if cell is None:  # no data of that kind: an empty cell, not a zero
                assert shown["class"] == "na" and shown["text"].strip() == ""
                continue
            flagged = [e for e in cell["estimates"] if e["significant"]]
            assert ("hit" in shown["class"]) == bool(flagged)
            assert shown["text"].count("\u25b2") + shown["text"].count("\u25bc") == len(flagged)
            for e in cell["estimates"]:
                assert e["text"] in shown["text"] and f"n={e['n']:,}" in shown["text"]
                assert any(e["verdict"] in t for t in shown["titles"])  # verdict on hover
                if len(cell["estimates"]) > 1:  # two datasets: both, labelled
                    assert e["dataset"] in shown["text"]
            for m in cell["not_estimated"]:
                assert any(m["reason"] in t and m["dataset"] in t for t in shown["titles"])
            if not cell["estimates"]:
                assert shown["text"].strip() == "\u25cb not estimated"
    d = next(r for r in page.rows if r["judge"] == "d")
    assert "nothing could be estimated \u2014 see reasons" in d["text"]
    assert "0 of 0" not in html
    # the verdict sentences: the flagged ones only, one line each
    # + "no bias flagged: HOSTILE" (its only estimate, EO, is never flagged) + "nothing for d"
    assert len(page.verdicts) == len(_verdicts(report)) + 2
    for line, v in zip(page.verdicts, _verdicts(report), strict=False):
        assert v["verdict"] in line and ", ".join(v["judges"]) in line
    assert page.verdicts[-1].startswith("Nothing could be estimated for d")
    assert not any("no detectable" in line for line in page.verdicts)
    # the per-judge cards are kept, collapsed
    assert page.details_open is False and page.cards_in_details == len(matrix["rows"])
    # a judge name with markup stays text everywhere
    assert HOSTILE not in html and "&lt;script&gt;document.title=&#39;PWNED&#39;" in html


def test_a_report_with_nothing_estimable_says_so() -> None:
    prov = Provenance((Source("h", "pairs", 5),), "0.1.0", None, {}, 0, "t", "3.11")
    skipped = (
        Skipped("Verbosity", "no judge verdicts in this data", "h", bias="verbosity_recall_gap"),
    )
    report = AuditReport("Audit", (), skipped, (), prov, 0.9)
    assert _matrix(report)["rows"] == [] and _verdicts(report) == []
    html = render_html(report)
    assert "No bias could be estimated from these inputs" in html
    assert 'id="summary-matrix"' not in html and "Not estimated for any judge" in html


def test_audit_skips_carry_the_bias_they_leave_empty() -> None:
    from recuse.analyses import Context, get

    ctx = Context(AuditOptions(), Roster.load())
    ctx.skip(get("self-preference"), "no judge verdicts in this data")
    fam = get("family-preference")
    ctx.skip(fam, "family_preference_dp: none", bias=BIASES["family_preference_dp"])
    ctx.skip(get("favoritism"), "self-bias: no finite estimate", bias=BIASES["self_bias"])
    ctx.skip(get("familiarity"), "perplexity curve (Figure 3): too few pairs", headline=False)
    assert [k.bias.key if k.bias else "" for k in ctx.skipped] == [
        "self_preference_calibrated",  # the analysis's headline bias
        "family_preference_dp",
        "self_bias",
        "",
    ]


def test_cli_lines_never_say_zero_of_zero(report: AuditReport) -> None:
    lines = {r.judge: summary_line(r) for r in report.summary()}
    assert lines["d"] == "d: nothing could be estimated (2 reason(s) in the report)"
    assert lines["a"] == (
        "a: 2 of 3 estimated biases flagged; 2 not estimated (reasons in the report)"
    )
    assert lines["c"] == "c: 2 of 2 estimated biases flagged"
    assert not [line for line in lines.values() if re.search(r"\b0 of 0\b", line)]


# ---------------------------------------------------------------- one screen


def _demo_sized() -> AuditReport:
    """A report shaped like the demo's: 13 judges with long names, pairwise biases on
    one dataset and regression biases (three decimals, five-digit n) on another,
    about twenty flagged lines, some judges with estimates missing."""
    findings = []
    pair_judges = ["gpt-3.5-turbo", "gpt-4", "llama-2-70b-chat", "palm-2"]
    rating_judges = [
        "claude-2.1", "claude-3-sonnet", "claude-3.5-sonnet-20241022", "gpt-4o",
        "llama-3.1-70b-instruct", "llama-3.1-8b-instruct", "mistral-7b-instruct-v0.2",
        "mistral-large-2407",
    ]  # fmt: skip
    for i, j in enumerate(pair_judges):
        lo = 0.07 if i < 2 else -0.07  # self- and family preference flagged for two
        d = i / 100
        findings += [
            _f(
                j,
                "self_preference_calibrated",
                0.21 + d,
                lo,
                0.33 + d,
                67,
                dataset="llmbar-mtbench",
            ),
            _f(j, "family_preference_calibrated", -0.54, -0.65, -lo, 118, dataset="llmbar-mtbench"),
            _f(j, "verbosity_recall_gap", 0.18 + d, 0.06, 0.30 + d, 195, dataset="llmbar-mtbench"),
            _f(j, "position", 0.7 + d, 0.67, 0.74 + d, 200, dataset="llmbar-mtbench", null=0.5),
        ]
    for i, j in enumerate(rating_judges):
        lo = -0.001 if i % 3 == 0 else 0.011  # self-bias flagged for five
        fam = i // 2  # family bias pooled over pairs of judges
        findings += [
            _f(j, "self_bias", 0.034 + i / 1000, lo, 0.043 + i / 1000, 6956,
               dataset="play-favorites"),
            _f(j, "family_bias", -0.044 - fam / 1000, -0.057, -0.031, 13823,
               dataset="play-favorites", detail=f"λ pooled over family {fam}"),
        ]  # fmt: skip
    skips = [
        Skipped("Self-preference", "self_preference_eo: only 8 pairs where the human prefers "
                "the other response (need at least 10)", "alpaca-eval", "gpt-4-1106-preview"),
        Skipped("Verbosity", "verbosity_bias: no pairs where the human prefers the longer "
                "response", "alpaca-eval", all_judges=2),
        Skipped("Position", "first_position_rate: no pairs judged in both orders",
                "alpaca-eval", all_judges=2),
        Skipped("Familiarity (perplexity)", "no perplexities in this data", "llmbar-mtbench"),
    ]  # fmt: skip
    sources = (
        Source("llmbar-mtbench", "pairs", 1000, judges=tuple(pair_judges)),
        Source("play-favorites", "ratings", 60000, judges=tuple(rating_judges)),
        Source("alpaca-eval", "pairs", 800, judges=("gpt-4", "gpt-4-1106-preview")),
    )
    prov = Provenance(sources, "0.1.0", "abc", {}, 0, "2025-01-01T00:00:00+00:00", "3.11")
    section = Section("all", "All", "intro", findings=tuple(findings))
    notes = ("Intervals: 90%; pairwise metrics use a percentile bootstrap that resamples "
             "prompts (1000 resamples, seed 0); the regression uses HC0 robust standard "
             "errors.",)  # fmt: skip
    return AuditReport("recuse audit", (section,), tuple(skips), (), prov, 0.9, notes=notes)


def test_demo_sized_summary_fits_one_screen(browser: Any, tmp_path: Path) -> None:
    report = _demo_sized()
    assert len(report.summary()) == 13 and len(_verdicts(report)) >= 18
    page = write_report(report, tmp_path / "out")["html"]
    boxes = browser.layout(page, tmp_path, ("summary-matrix", "flagged-verdicts", "all-findings"))
    _, _, width, scroll_width = boxes["viewport"]
    assert scroll_width <= width, "the page scrolls sideways at 1400 px"
    assert boxes["summary-matrix"][2] <= width
    # the verdict lines start on the first screen, right under the matrix (with units in
    # the headers and materiality in the cells, the matrix is the one-screen summary)
    assert boxes["flagged-verdicts"][1] < 1000, "the verdict lines start below the first screen"
    # the collapsed details follow the verdict lines directly
    assert 0 < boxes["all-findings"][1] - boxes["flagged-verdicts"][3] < 200
    # control: the same page in a narrow window does not fit, so the check can fail
    narrow = browser.layout(page, tmp_path, ("flagged-verdicts",), size="900,1000")
    assert narrow["flagged-verdicts"][3] > 1000 or narrow["viewport"][3] > narrow["viewport"][2]


def test_judge_names_in_the_matrix_break_only_at_hyphens(browser: Any, tmp_path: Path) -> None:
    """Each judge name in the summary matrix wraps, if at all, after a hyphen or a space,
    never inside a word (names split into letter groups made the demo's matrix about
    2,000 px tall). Measured in Chromium in a 900 px window (where the old rule split
    "claude" into "claud|e"): every character's line box, per row header."""
    report = _demo_sized()
    page = write_report(report, tmp_path / "out")["html"]
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    probe = (
        "<script>window.addEventListener('load', function () { var bad = [];"
        "document.querySelectorAll('#summary-matrix tbody th').forEach(function (th) {"
        "var node = th.firstChild; if (!node || node.nodeType !== 3) return;"
        "var text = node.textContent, top = null, r = document.createRange();"
        "for (var i = 0; i < text.length; i++) { r.setStart(node, i); r.setEnd(node, i + 1);"
        "var t = r.getClientRects()[0]; if (!t) continue;"
        "if (top !== null && t.top > top + 1 && !/[-\\s]/.test(text[i - 1]))"
        "bad.push(text.slice(0, i) + '|' + text.slice(i));"
        "top = t.top; } });"
        "document.body.setAttribute('data-bad', bad.join(';') || 'none'); });</script>"
    )
    copy = tmp_path / "probe.html"
    copy.write_text(html.replace("</body>", probe + "</body>"), "utf-8")
    dom = browser._run("--window-size=900,1000", "--dump-dom", copy.resolve().as_uri()).stdout
    found = re.search(r'data-bad="([^"]*)"', dom)
    assert found, "the probe did not run"
    assert found.group(1) == "none", f"judge names broken mid-word: {found.group(1)}"


def test_the_report_counts_the_flags_the_summary_counts(tmp_path: Path) -> None:
    # a flagged headline (position) and, in its section only, Eq. 6 whose interval
    # excludes 0: the summary counted 1 flag, report.json's findings and
    # repr(recuse.audit(...)) counted 2 (llmbar-mtbench: 3 against 9)
    from recuse.api import Report

    findings = (
        _f("a", "position", 0.7, 0.66, 0.74, 200, dataset="d1"),
        _f("a", "verbosity_recall_gap", 0.21, 0.08, 0.31, 195, dataset="d1", headline=False),
    )
    prov = Provenance((Source("d1", "pairs", 200, judges=("a",)),), "0.1.0", None, {}, 0,
                      "2025-01-01T00:00:00", "3.11")  # fmt: skip
    result = AuditReport("Audit", (Section("all", "All", "intro", findings=findings),), (), (),
                         prov, 0.9)  # fmt: skip
    (row,) = result.summary()
    assert [f.bias.key for f in row.flagged] == ["position"]
    data = to_dict(result)
    in_json = [f for s in data["sections"] for f in s["findings"] if f["flagged"]]
    assert [f["bias"] for f in in_json] == ["position"]
    assert repr(Report(result)).endswith("2 findings, 1 flagged>")
    assert "not one of the summary's tests: not a flag" in findings[1].verdict
