"""Red means material: a significant but negligible finding is neutral everywhere; and
the compact summary (terminal table, notebook matrix) a person reads first."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from recuse.analyses import BIASES
from recuse.cli.audit import summary_line
from recuse.metrics.estimate import FEW_CLUSTERS
from recuse.report import AuditReport, Finding, NotEstimated, Provenance, Section, Source, to_dict
from recuse.report.html import render_html
from recuse.report.multiplicity import adjust_sections
from recuse.report.summary_table import reading, source_lines, summary_lines, summary_text

HOSTILE = "<b>x</b>&judge"


def _f(judge: str, bias: str, est: float, lo: float, hi: float, n: int, **kw: Any) -> Finding:
    kw.setdefault("material", BIASES[bias].material)
    return Finding(judge=judge, bias=BIASES[bias], estimate=est, ci_low=lo, ci_high=hi, n=n,
                   level=0.9, method="m", dataset=kw.pop("dataset", "d1"), **kw)  # fmt: skip


# "a": position 0.497 [0.494, 0.499] at n = 7,000 — its interval excludes 0.5 (significant)
# but lies within 0.5 ± 0.05 (negligible); verbosity +0.20 [0.10, 0.30] (material);
# family preference +0.03 [0.01, 0.06] (flagged, nearer than 0.05: small), with a warning.
# "b": verbosity −0.01 [−0.20, 0.18] (undetected, too wide to be negligible), agreement,
# self-preference not estimated. HOSTILE: nothing estimated and no bias to name.
NEGLIGIBLE = _f("a", "position", 0.497, 0.494, 0.499, 7000)
FINDINGS = (
    NEGLIGIBLE,
    _f("a", "verbosity_recall_gap", 0.2, 0.1, 0.3, 195),
    _f(
        "a",
        "family_preference_calibrated",
        0.03,
        0.01,
        0.06,
        80,
        material=0.05,
        warnings=("low n: only 7 pairs",),
    ),
    _f("b", "verbosity_recall_gap", -0.01, -0.2, 0.18, 150),
    _f("b", "agreement_accuracy", 0.71, 0.67, 0.75, 200),
)
SKIPS = (
    NotEstimated(
        "Self-preference",
        "no pairs with its own answer",
        "d1",
        "b",
        True,
        BIASES["self_preference_eo"],
    ),
    NotEstimated("Position", "one order only", "d1", HOSTILE, True, None),
)


@pytest.fixture(scope="module")
def report() -> AuditReport:
    sources = (Source("d1", "pairs", 7000, judges=("a", "b", HOSTILE)),)
    prov = Provenance(sources, "0.1.0", None, {}, 0, "2025-01-01T00:00:00", "3.11")
    section = Section("all", "All", "intro", findings=FINDINGS)
    return AuditReport("Audit", (section,), SKIPS, (), prov, 0.9)


def test_a_significant_but_negligible_finding_is_neither_red_nor_counted(
    report: AuditReport,
) -> None:
    f = NEGLIGIBLE
    # the interval excludes 0.5, and lies wholly within 0.5 ± 0.05
    assert f.significant and f.materiality == "negligible" and not f.flagged
    row = {r.judge: r for r in report.summary()}["a"]
    assert {x.bias.key for x in row.flagged} == {
        "verbosity_recall_gap",
        "family_preference_calibrated",
    }
    assert summary_line(row) == "a: 2 of 3 estimated biases flagged"
    verdicts = [(v.judges, v.finding.bias.key) for v in report.flagged_verdicts()]
    assert (("a",), "position") not in verdicts and (("a",), "verbosity_recall_gap") in verdicts
    (mrow,) = [r for r in report.matrix().rows if r.judge == "a"]
    assert (
        mrow.flagged == 2
        and not mrow.cells["position"].hit
        and mrow.cells["verbosity_recall_gap"].hit
    )
    d = to_dict(report)
    (pos,) = [x for r in d["summary"] for x in r["findings"] if x["bias"] == "position"]
    assert pos["significant"] is True and pos["flagged"] is False
    assert pos["materiality"] == "negligible"
    # the page: no red cell, no arrow, not in the flagged list, not bold among the findings
    page = render_html(report)
    cell = re.search(r'<tr data-judge="a">.*?<td data-bias="position"([^>]*)>(.*?)</td>', page,
                     flags=re.S)  # fmt: skip
    assert cell is not None and "hit" not in cell.group(1)
    assert 'class="est none"' in cell.group(2) and "&#9650;" not in cell.group(2)
    verb = re.search(
        r'<td data-bias="verbosity_recall_gap" class="hit">(.*?)</td>', page, flags=re.S
    )
    assert verb is not None and 'class="est up"' in verb.group(1)  # control: material is red
    flagged_list = page[page.index('id="flagged-verdicts"') : page.index('id="all-findings"')]
    assert "prefers the answer shown first" not in flagged_list
    assert "favours the longer" in flagged_list or "longer answer" in flagged_list


def test_readings_in_words(report: AuditReport) -> None:
    got = {(f.judge, f.bias.key): reading(f) for f in FINDINGS}
    assert got == {
        ("a", "position"): "negligible",
        ("a", "verbosity_recall_gap"): "▲ material",
        ("a", "family_preference_calibrated"): "▲ small",
        ("b", "verbosity_recall_gap"): "no detectable bias",
        ("b", "agreement_accuracy"): "quality score",
    }
    # a bias that declares no threshold reads "flagged" with its side
    no_threshold = _f("a", "position", 0.40, 0.35, 0.45, 90, material=None)
    assert reading(no_threshold) == "▼ flagged"
    # a number declared unadjusted (EO) is shown for what it is, never as a flag
    eo = _f("a", "self_preference_eo", 0.48, 0.22, 0.71, 51)
    assert eo.bias.unadjusted and reading(eo) == "unadjusted, not a flag"


def test_the_terminal_table_rows_by_hand(report: AuditReport) -> None:
    text = summary_text(report)
    lines = text.splitlines()
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    assert header == ["judge", "bias (unit · no-bias value)", "estimate [90% interval]", "n",
                      "reading"]  # fmt: skip
    cells = [[c.strip() for c in ln.split("|")[1:-1]] for ln in lines[2:9]]
    assert cells == [
        [HOSTILE, "—", "—", "", "nothing could be estimated (1 reason(s) in the report)"],
        ["a", "Family preference (family-pick rate − predicted · no bias = 0)",
         "+0.030 [0.010, 0.060]",
         "80", "▲ small [1]"],
        ["", f"{BIASES['verbosity_recall_gap'].label} (recall difference · no bias = 0)",
         "+0.20 [0.10, 0.30]", "195",
         "▲ material"],
        # significant: its high end is written off 0.5 (it read "0.50 [0.49, 0.50]")
        ["", "Position (share of win to first · no bias = 0.5)", "0.497 [0.494, 0.499]",
         "7,000", "negligible"],
        ["b", f"{BIASES['verbosity_recall_gap'].label} (recall difference · no bias = 0)",
         "−0.01 [−0.20, 0.18]", "150",
         "no detectable bias"],
        ["", "Agreement (share of pairs agreeing · chance = 0.5)", "0.71 [0.67, 0.75]", "200",
         "quality score"],
        ["", "Self-preference (EO) (recall difference · no bias = 0)", "—", "",
         "not estimated"],
    ]  # fmt: skip
    # every row is as wide as the header (an aligned table), the legend and the warning
    widths = {len(ln) for ln in lines[:9]}
    assert len(widths) == 1
    assert lines[9].startswith("estimate [90% interval]; n: comparisons or ratings.")
    assert lines[10] == "[1] a, Family preference: low n: only 7 pairs"
    assert len(lines) == 11


def test_a_data_column_only_with_several_datasets(report: AuditReport) -> None:
    two = Section("all", "All", "", findings=(*FINDINGS, _f("b", "position", 0.6, 0.55, 0.65,
                                                            100, dataset="d2")))  # fmt: skip
    other = AuditReport("Audit", (two,), SKIPS, (), report.provenance, 0.9)
    header = summary_text(other).splitlines()[0]
    assert [c.strip() for c in header.split("|")[1:-1]][2] == "data"
    assert "| data " not in summary_text(report).splitlines()[0]
    assert {ln.dataset for ln in summary_lines(other)} >= {"d1", "d2"}


def test_a_warning_several_rows_share_is_one_note(report: AuditReport) -> None:
    # a stray score warns under every coefficient of its fit: one note, its number on
    # each row, not a copy per row; a warning of one row still names its row
    stray = "dimension 'd': its top score 100 lies apart from the others"
    shared = Section("all", "All", "", findings=(
        _f("a", "position", 0.6, 0.55, 0.65, 100, warnings=(stray,)),
        _f("b", "position", 0.5, 0.45, 0.55, 100, warnings=("low n: 9", stray)),
        _f("c", "position", 0.5, 0.45, 0.55, 100, warnings=(stray,)),
    ))  # fmt: skip
    other = AuditReport("Audit", (shared,), (), (), report.provenance, 0.9)
    lines = summary_text(other).splitlines()
    readings = [ln.split("|")[-2].strip() for ln in lines[2:5]]
    assert readings == ["▲ material [1]", "no detectable bias [2] [1]", "no detectable bias [1]"]
    assert lines[-2:] == [f"[1] {stray}", "[2] b, Position: low n: 9"]


def test_a_pipe_in_a_name_stays_inside_its_cell(report: AuditReport) -> None:
    # a judge or dataset named with '|' (from the data) used to add a column to its row
    # of the pipe table: escaped as \|, as Markdown reads it, every row keeps the
    # header's cells and the name reads back whole
    piped = Section("all", "All", "", findings=(
        _f("j|k", "position", 0.6, 0.55, 0.65, 100, dataset="d|1"),
        _f("a", "position", 0.5, 0.45, 0.55, 100, dataset="d2"),
    ))  # fmt: skip
    other = AuditReport("Audit", (piped,), (), (), report.provenance, 0.9)
    lines = summary_text(other).splitlines()
    split = [re.split(r"(?<!\\)\|", ln)[1:-1] for ln in lines[:4]]
    assert {len(cells) for cells in split} == {6}
    row = next(cells for cells in split[2:] if cells[0].strip().startswith("j"))
    assert row[0].strip() == "j\\|k"
    assert row[2].strip() == "d\\|1"
    assert len({len(ln) for ln in lines[:4]}) == 1


def test_the_notebook_matrix(report: AuditReport) -> None:
    from recuse.api import Report as Audited

    page = Audited(report)._repr_html_()
    # one row per judge, escaped; columns carry unit and no-bias value
    assert HOSTILE not in page and "&lt;b&gt;x&lt;/b&gt;&amp;judge" in page
    assert page.count("<tr>") == 1 + len(report.summary())
    assert "share of win to first · no bias = 0.5" in page
    rows = dict(re.findall(r"<tr><th[^>]*>(.*?)</th>(.*?)</tr>", page))
    assert "0.497 [0.494, 0.499]" in rows["a"] and "<i>negligible</i>" in rows["a"]
    # the material cell is tinted, the negligible one is not
    tds = re.findall(r"<td([^>]*)>(.*?)</td>", rows["a"])
    tint = {("0.497 [" in body, "+0.20" in body): attr for attr, body in tds if body}
    assert "background" in tint[(False, True)] and tint[(True, False)] == ""
    escaped = "&lt;b&gt;x&lt;/b&gt;&amp;judge<br><i>nothing could be estimated</i>"
    assert escaped in rows


def test_an_interval_from_too_few_prompts_is_never_negligible() -> None:
    """With ``--min-n 1`` two prompts were enough for position 0.50 [0.50, 0.50] (no
    variation in the resamples) to read "negligible (interval within ±0.05 of no
    bias)" beside the warnings that the interval is unreliable and says nothing about
    uncertainty. From fewer than FEW_CLUSTERS prompts an interval rules nothing out: no
    materiality, read as undetected; a value fixed by construction is not such an
    interval, and reads as from more prompts. From FEW_CLUSTERS prompts a narrow interval that
    is not flat is negligible; a flat one only when its value is fixed by construction
    (this test used to read every flat interval from FEW_CLUSTERS prompts, or with no
    clusters given, as negligible: see test_a_zero_width_interval_rules_nothing_out)."""
    flat = _f("a", "position", 0.5, 0.5, 0.5, 2, clusters=2)
    assert flat.materiality == "" and not flat.flagged and reading(flat) == "no detectable bias"
    assert _f("a", "position", 0.5, 0.49, 0.51, 8, clusters=FEW_CLUSTERS - 1).materiality == ""
    # a value fixed by construction is no interval that few prompts make unreliable:
    # more prompts would not change it, so it reads as from many (it read "" here)
    assert _f("a", "position", 0.5, 0.5, 0.5, 2, clusters=2, fixed=True).materiality == (
        "negligible"
    )
    for clusters in (FEW_CLUSTERS, 60, None):
        f = _f("a", "position", 0.5, 0.49, 0.51, 180, clusters=clusters)
        assert f.materiality == "negligible", clusters
        fixed = _f("a", "position", 0.5, 0.5, 0.5, 180, clusters=clusters, fixed=True)
        assert fixed.materiality == "negligible", clusters


def test_a_zero_width_interval_rules_nothing_out() -> None:
    """A judge always right on 6 prompts: a difference of recalls (verbosity, Eq. 6)
    0.00 [0.00, 0.00] with its "no variation" warning read "negligible" (ruled out,
    neutral). A real difference of
    0.2 gives that sample often (all 3 pairs of the weaker group right: 0.8³ = 0.51),
    so the cell rules nothing out: no materiality, "no detectable bias", no
    "± detectable" from its zero standard error, in the JSON too. The same flat
    interval of a value fixed by construction (a reward model's position preference)
    stays negligible, and says so as data (``fixed_by_construction``)."""
    eo = _f("a", "verbosity_recall_gap", 0.0, 0.0, 0.0, 40, clusters=6, std_error=0.0,
            p_value=1.0, warnings=("no variation in the resamples: …",))  # fmt: skip
    assert 0.8**3 > 0.5  # the planted 0.2 difference gives this sample half the time
    assert eo.zero_width and not eo.informative
    assert eo.materiality == "" and not eo.flagged and reading(eo) == "no detectable bias"
    assert eo.detectable is None
    d = eo.to_dict()
    assert d["materiality"] == "" and d["fixed_by_construction"] is False
    assert d["detectable_with_80pct_power"] is None
    rm = _f("rm", "position", 0.5, 0.5, 0.5, 40, clusters=6, std_error=0.0, fixed=True)
    assert rm.informative and rm.materiality == "negligible"
    assert rm.to_dict()["fixed_by_construction"] is True
    # a narrow interval that is not flat reads negligible as before
    assert _f("a", "verbosity_recall_gap", 0.0, -0.01, 0.01, 40, clusters=6).materiality == (
        "negligible"
    )


def test_a_zero_width_interval_off_no_bias_reads_by_its_sign_test() -> None:
    """Position 1.00 [1.00, 1.00] (every prompt's pick went to the first answer): from
    20 prompts the sign test's p, 2 · 2^−20, flags it, material by its estimate; from 4
    it is 2 · 2^−4 = 0.125 and does not (the interval alone excluded 0.5, and read
    "material" from any 2 prompts with --no-fdr). With a q-value, the q decides as for
    any finding."""
    from recuse.metrics.estimate import sign_test_p

    def always_first(k: int, **kw: Any) -> Finding:
        return _f("a", "position", 1.0, 1.0, 1.0, 2 * k, clusters=k,
                  p_value=max(2 / 2001, sign_test_p(k)), **kw)  # fmt: skip

    # the exact binomial: all k prompts on one given side has probability 2^-k
    assert sign_test_p(20) == pytest.approx(2 * 0.5**20)
    many = always_first(20)
    assert many.significant and many.flagged and many.materiality == "material"
    assert reading(many) == "▲ material"
    few = always_first(FEW_CLUSTERS - 1)
    assert few.p_value == 0.125 and not few.significant and few.materiality == ""
    assert reading(few) == "no detectable bias"
    assert not always_first(20, q_value=0.2).significant
    assert always_first(20, q_value=0.01).significant


def test_a_zero_width_interval_its_own_p_left_unflagged_is_not_adjusted_away(
    report: AuditReport,
) -> None:
    """Position 1.00 [1.00, 1.00] from 4 prompts: its own p-value, the sign test's
    0.125 > 0.1, leaves it unflagged before any adjustment. With a q-value (0.25 after
    Benjamini–Hochberg) its cell said "excludes no bias before adjustment; q = 0.250 >
    0.1", read "unflagged after adjustment", its verdict blamed the adjustment and its
    matrix row did not hold no bias (the page: "no bias flagged after the
    false-discovery adjustment"): the adjustment is not why. Beside it, the same
    interval from 20 prompts (p = 2e-06, flagged before adjustment) that a q of 0.2
    unflags does carry the note."""
    from recuse.metrics.estimate import sign_test_p
    from recuse.report.verdict import NOT_AFTER_FDR, verdict

    few = _f("a", "position", 1.0, 1.0, 1.0, 8, clusters=4, p_value=sign_test_p(4),
             q_value=0.25)  # fmt: skip
    assert few.zero_width and not few.informative and not few.significant
    assert few.adjustment_note == "" and few.to_dict()["adjustment_note"] == ""
    assert not few.adjusted_away and not few.excludes_null
    assert reading(few) == "no detectable bias"
    assert NOT_AFTER_FDR not in verdict(few)
    many = _f("a", "position", 1.0, 1.0, 1.0, 40, clusters=20, p_value=sign_test_p(20),
              q_value=0.2)  # fmt: skip
    assert many.excludes_null and many.adjusted_away and not many.significant
    assert many.adjustment_note.startswith("excludes no bias before adjustment; q = 0.200")
    assert NOT_AFTER_FDR in verdict(many)

    def row(f: Finding) -> Any:
        section = Section("all", "All", "", findings=(f,))
        return AuditReport("Audit", (section,), (), (), report.provenance, 0.9).matrix().rows[0]

    assert row(few).holds_null and not row(many).holds_null


def test_an_interval_unflagged_by_the_adjustment_says_so_in_its_own_cell(
    report: AuditReport,
) -> None:
    """Claude-3-haiku on JudgeBench: +0.071 [0.011, 0.125], q = 0.197 > 0.10 after the
    Benjamini–Hochberg adjustment. Each cell showed an interval excluding 0 with no flag
    and "no detectable bias", the why only in the legend and the verdict sentence. Now
    the terminal row, the HTML matrix cell, the notebook's and the JSON finding and cell
    say it, from the finding's own q-value."""
    away = _f("c", "verbosity_longer_gap", 0.071, 0.011, 0.125, 340, q_value=0.197)
    note = "excludes no bias before adjustment; q = 0.197 > 0.1"
    assert away.adjusted_away and away.adjustment_note == note
    # the note is the finding's own q, not a fixed text; nothing to say elsewhere
    assert "q = 0.140 > 0.1" in _f("c", "verbosity_longer_gap", 0.07, 0.01, 0.12, 340,
                                   q_value=0.14).adjustment_note  # fmt: skip
    flagged = _f("c", "verbosity_longer_gap", 0.071, 0.011, 0.125, 340, q_value=0.05)
    holds = _f("d", "verbosity_longer_gap", 0.05, -0.01, 0.11, 340, q_value=0.6)
    raw = _f("c", "verbosity_longer_gap", 0.071, 0.011, 0.125, 340)  # --no-fdr
    quality = _f("c", "agreement_accuracy", 0.71, 0.67, 0.75, 200, q_value=0.9)
    for f in (flagged, holds, raw, quality):
        assert not f.adjusted_away and f.adjustment_note == ""
    assert reading(away) == "unflagged after adjustment"
    assert reading(holds) == "no detectable bias"
    section = Section("all", "All", "", findings=(away, holds))
    other = AuditReport("Audit", (section,), (), (), report.provenance, 0.9)
    lines = summary_text(other).splitlines()
    row = next(ln for ln in lines if "+0.07 [0.01, 0.12]" in ln)
    assert row.split("|")[-2].strip() == "unflagged after adjustment [1]"
    assert f"[1] c, {away.bias.label}: {note}" in lines
    page = render_html(other)
    cell = re.search(r'<tr data-judge="c">.*?<td data-bias="verbosity_longer_gap">(.*?)</td>',
                     page, flags=re.S)  # fmt: skip
    assert cell is not None
    mark = f'<span class="fdr" data-adjusted>&#9671;&#8201;{html.escape(note)}</span>'
    assert mark in cell.group(1)
    assert page.count("data-adjusted>") == 1  # the interval holding 0 has no note
    from recuse.report.summary_table import summary_html

    assert f"◇ {html.escape(note)}" in summary_html(other)
    d = to_dict(other)
    assert [r["findings"][0]["adjustment_note"] for r in d["summary"]] == [note, ""]
    rows = d["summary_matrix"]["rows"]
    cells = [r["cells"]["verbosity_longer_gap"]["estimates"][0] for r in rows]
    assert [c["adjustment_note"] for c in cells] == [note, ""]


@pytest.mark.parametrize(("rows", "said"), [(1, "1 row"), (2, "2 rows"), (7000, "7,000 rows")])
def test_a_sources_line_counts_its_rows_in_words(rows: int, said: str) -> None:
    """The data line of a one-row file read "(pairs, 1 rows)"."""
    prov = Provenance((Source("d1", "pairs", rows),), "0.1.0", None, {}, 0, "2025-01-01", "3.11")
    (line,) = source_lines(AuditReport("Audit", (), (), (), prov, 0.9))
    assert line.startswith(f"d1 (pairs, {said}): ")


@pytest.mark.parametrize(
    ("judges", "said"),
    [
        ("all", "verdicts of 3 judges —"),
        ("b", "verdicts of 3 judges, 1 of them chosen (--judge) —"),
        ("a, c", "verdicts of 3 judges, 2 of them chosen (--judge) —"),
        ("z", "verdicts of 3 judges, none of them chosen (--judge) —"),
    ],
)
def test_a_sources_line_says_how_many_of_its_judges_were_chosen(judges: str, said: str) -> None:
    """Under ``--judge`` the data line read "verdicts of 9 judges — 2 headline estimates"
    beside a table of one judge, and a dataset without the chosen judge "nothing
    estimated" with no word why: it counts the judges chosen (AuditOptions.to_dict's
    ``judges``) among its own."""
    src = Source("d1", "pairs", 10, judges=("a", "b", "c"))
    opts = {"judges": judges}
    prov = Provenance((src,), "0.1.0", None, opts, 0, "2025-01-01", "3.11")
    (line,) = source_lines(AuditReport("Audit", (), (), (), prov, 0.9))
    assert f"d1 (pairs, 10 rows): {said}" in line


def test_a_sources_line_counts_a_pooled_estimate_once_beside_its_rows() -> None:
    """A ratings table's family λ is one estimate shown in each member judge's row: the
    data line read "18 headline estimates in the table" for play-favorites' 9 self-biases
    and 4 family λs. By hand: judges a, b, c, each a self-bias (3 estimates); a and b
    share one λ, c has its own (2 estimates); 6 rows, 5 estimates, one of them in 2
    rows. The same key counts the multiple-testing family (5 tests)."""
    pooled = "λ pooled over the x family's judges"
    findings = (
        *(_f(j, "self_bias", 0.01 * k, 0.0, 0.02 * k + 0.01, 100, dataset="r", p_value=0.2)
          for k, j in enumerate("abc", 1)),
        *(_f(j, "family_bias", 0.03, 0.01, 0.05, 200, dataset="r", detail=pooled, p_value=0.01)
          for j in "ab"),
        _f("c", "family_bias", -0.02, -0.04, 0.0, 90, dataset="r",
           detail="λ pooled over the y family's judges", p_value=0.1),
    )  # fmt: skip
    src = Source("r", "ratings", 500, judges=("a", "b", "c"))
    prov = Provenance((src,), "0.1.0", None, {}, 0, "2025-01-01", "3.11")
    sections, note = adjust_sections([Section("fav", "Favoritism", "i", findings=findings)],
                                     level=0.9)  # fmt: skip
    report = AuditReport("Audit", tuple(sections), (), (), prov, 0.9)
    assert len(summary_lines(report)) == 6
    (line,) = source_lines(report)
    assert (
        "5 headline estimates in the table (6 rows: 1 pooled estimate of Family bias "
        "(ratings), in the row of every judge it pools)" in line
    ), line
    assert "across the summary's 5 tests" in note
    # each estimate its own where none is pooled: no rows said
    alone = AuditReport("Audit", (Section("fav", "F", "i", findings=findings[:3]),), (), (),
                        prov, 0.9)  # fmt: skip
    assert source_lines(alone)[0].endswith("3 headline estimates in the table")


@pytest.mark.parametrize("fdr", [True, False])
def test_the_legends_read_the_adjustment_from_the_options_label_the_audit_writes(
    report: AuditReport, fdr: bool
) -> None:
    """The summary's and the page's legends read whether flags were adjusted from the
    provenance's "multiple testing" option, by its label. The audit's label became
    "multiple testing (--fdr / fdr=)" while both still looked for "multiple testing
    (--fdr)": with the adjustment on (the default) the page said "Flags and intervals are
    not adjusted for the number of biases tested (--no-fdr)" and the summary's legend
    left out "after Benjamini–Hochberg adjustment". A report.json of an earlier recuse,
    labelled the old way, reads the same."""
    from recuse.analyses.base import AuditOptions

    options = AuditOptions(fdr=fdr).to_dict()
    old = {("multiple testing (--fdr)" if k.startswith("multiple testing") else k): v
           for k, v in options.items()}  # fmt: skip
    for said in (options, old):
        prov = Provenance(report.provenance.sources, "0.1.0", None, said, 0, "2025", "3.11")
        other = AuditReport("Audit", report.sections, (), (), prov, 0.9)
        assert ("after Benjamini–Hochberg adjustment" in summary_text(other)) == fdr
        page = render_html(other)
        assert ("Flags are adjusted for the number of tests" in page) == fdr
        assert ("are not adjusted for the number of biases tested (--no-fdr" in page) != fdr
