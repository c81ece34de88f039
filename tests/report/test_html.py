"""The page's words: skips grouped by cause, counts as integers, verdicts in plain words."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from recuse.report.html import _cell, skip_groups, verdict_words, warning_tag
from recuse.report.model import AuditReport, NotEstimated, Provenance


def _report(skipped: tuple[NotEstimated, ...], orders: str = "both: …") -> AuditReport:
    prov = Provenance((), "0", None, {"verdicts (--orders)": orders}, 0, "now", "3.11")
    return AuditReport("t", (), skipped, (), prov, 0.9)


def test_skips_are_grouped_by_cause() -> None:
    ratings = "needs a pairs table (pairwise verdicts); this is ratings"
    both = "no pairs judged in both orders"
    skipped = (
        *(NotEstimated(a, ratings, "play-favorites", "", True) for a in ("Position", "Verbosity")),
        NotEstimated("Position", both, "alpaca", "", True, metric="flip_rate"),
        NotEstimated("Position", both, "alpaca", "", True, metric="first_position_rate"),
        # a reason that only looks like "metric: cause" is not cut (it has no metric)
        NotEstimated("Verbosity", f"len_gap: {both}", "alpaca", "", True),
    )
    groups = skip_groups(_report(skipped))
    assert [(g.reason, g.analyses, g.datasets, g.rows) for g in groups] == [
        (ratings, ("Position", "Verbosity"), ("play-favorites",), 2),
        ("no pairs judged in both orders", ("Position",), ("alpaca",), 2),
        (f"len_gap: {both}", ("Verbosity",), ("alpaca",), 1),
    ]
    # each skip is shown with its metric, in the JSON as on the page
    assert skipped[2].said == skipped[2].to_dict()["reason"] == f"flip_rate: {both}"


def test_counts_print_as_integers_and_warnings_as_text() -> None:
    assert _cell(67.0, "n") == "67" and _cell(7099.0, "n_clusters") == "7,099"
    assert _cell(0.5, "estimate") == "0.500" and _cell(67.0, "estimate") == "67.00"
    tag = warning_tag("low n: only 8 pairs where the human prefers the other response")
    assert tag == "low n"
    assert verdict_words(_report(())).startswith("verdicts: each judge's preference averaged")
    first = replace(_report(()), provenance=replace(
        _report(()).provenance, options={"verdicts (--orders)": "first: the first …"}))  # fmt: skip
    assert verdict_words(first) == "verdicts: only the order with answer a shown first"
    assert isinstance(pd.DataFrame(), pd.DataFrame)


def test_a_findings_row_reads_as_the_sentence_beside_it() -> None:
    """The certification row of the HTML showed ``0.285 [0.233, 0.342]`` next to its
    sentence ``0.28 [0.23, 0.34]``, and a verdict's count read ``n=7013`` where every
    table writes 7,013: one value, one way of writing it (recuse.numbers, used by
    recuse.numbers' estimate_parts)."""
    from recuse.analyses import BIASES
    from recuse.report.html import render_html
    from recuse.report.model import Finding, Section

    f = Finding(judge="gpt-4", bias=BIASES["certified_coverage"], estimate=0.2849,
                ci_low=0.2331, ci_high=0.3421, n=7013, level=0.9, method="m",
                dataset="d")  # fmt: skip
    g = Finding(judge="gpt-4", bias=BIASES["position"], estimate=0.5123, ci_low=-0.0312,
                ci_high=0.0562, n=12, level=0.9, method="m", dataset="d")  # fmt: skip
    # a certified share is a percentage (Bias.percent), as the gate writes it: 28.5%
    assert f.parts == ("28.5%", "[23.3%, 34.2%]") and f.text == "28.5% [23.3%, 34.2%]"
    assert f.verdict.endswith(": 28.5% [23.3%, 34.2%], n=7,013")
    assert g.parts == ("0.51", "[\u22120.03, 0.06]")  # the minus as the summary tables write it
    section = Section("certification", "Certification", "intro", findings=(f, g))
    report = replace(_report(()), sections=(section,))
    page = render_html(report)
    assert '<td class="num">28.5%</td><td class="num">[23.3%, 34.2%]</td>' in page
    assert '<td class="num">0.51</td><td class="num">[\u22120.03, 0.06]</td>' in page
    assert "0.2849" not in page and "n=7013" not in page and "n=7,013" in page


def test_a_certified_share_is_one_percentage_in_the_findings_the_table_and_the_gate(
    tmp_path: Path,
) -> None:
    """The audit wrote a certified coverage as a share, 0.285 (and 1 of 2,500 pairs,
    0.0004 with an interval to 0.0149, as 0.000 [0.000, 0.015]: nothing certified),
    where ``recuse gate --certified`` writes 28.5% and 0.04%. The finding's cells and
    sentence, the section table's coverage columns and the gate's line now write the
    same percentage; the agreements stay shares, and the CSV keeps the exact shares."""
    from recuse.analyses import BIASES
    from recuse.report.export import write_tables
    from recuse.report.html import render_html
    from recuse.report.model import Finding, Section, Table

    f = Finding(judge="gpt-4", bias=BIASES["certified_coverage"], estimate=1 / 2500,
                ci_low=0.0, ci_high=0.0149, n=2500, level=0.9, method="m",
                dataset="d")  # fmt: skip
    assert f.parts == ("0.04%", "[0.0%, 1.5%]") and f.verdict.endswith(
        ": 0.04% [0.0%, 1.5%], n=2,500"
    )
    frame = pd.DataFrame({"judge": ["gpt-4", "gpt-4"], "coverage": [1 / 2500, 57 / 200],
                          "agreement": [1.0, 0.93], "coverage_low": [0.0, 0.2327]})  # fmt: skip
    table = Table("certification-d", "Certified coverage", frame,
                  percent=("coverage", "coverage_low"))  # fmt: skip
    section = Section("certification", "Certification", "intro", findings=(f,), tables=(table,))
    page = render_html(replace(_report(()), sections=(section,)))
    assert '<td class="num">0.04%</td><td class="num">[0.0%, 1.5%]</td>' in page
    for cells in ("0.04%", "1.000", "0.0%"), ("28.5%", "0.930", "23.3%"):
        row = "".join(f'<td class="num">{c}</td>' for c in cells)
        assert row in page, cells
    (csv,) = write_tables(replace(_report(()), sections=(section,)), tmp_path)
    assert pd.read_csv(csv)["coverage"].tolist() == [1 / 2500, 57 / 200]


def test_a_level_reads_with_the_decimals_it_needs() -> None:
    """A 99.5% level was written ``{:.0%}``: '100%' intervals, which would be the whole
    line. The page, the terminal's summary header and the metrics' method text write
    recuse.numbers.percent of the level."""
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.estimate import interval_method
    from recuse.report.html import render_html
    from recuse.report.summary_table import _legend

    for level, said in ((0.9, "90%"), (0.995, "99.5%"), (0.975, "97.5%")):
        report = replace(_report(()), level=level)
        page = render_html(report)
        assert f"{said} confidence intervals" in page and "100% confidence" not in page
        assert _legend(report).startswith(f"estimate [{said} interval]")
        assert interval_method(Resampling(level=level, n_boot=400), "percentile").startswith(said)


def test_small_numbers_keep_their_columns_precision_and_p_values_read_as_p_values() -> None:
    """The page wrote 0.000 (an exact 0) beside 3e-05 and 0.000754 beside 0.009 in one
    column (each float under 0.001 in ``.3g``), and a p-value of 0.0004 as 0.0004. Now a
    column holds one precision, set by its smallest non-zero number (two significant
    digits of it), never scientific below 1; a p- or q-value column writes "< 0.001"
    below 0.001; counts stay integers."""
    import re

    from recuse.report.html import render_html
    from recuse.report.model import Section, Table

    frame = pd.DataFrame(
        {
            "estimate": [0.0, 0.00003, 0.009, -0.4, 67.0],
            "ci_low": [0.0, 0.00001, 0.001, -0.5, 60.0],
            "p_value": [1.0, 0.0004, 0.0231, 0.001, 0.5],
            "heldout_kept": [51.0, 875.0, 0.0, 3.0, 4.0],
        }
    )
    section = Section("s", "S", "intro", tables=(Table("t", "T", frame),))
    report = replace(_report(()), sections=(section,))
    page = render_html(report)
    body = re.search(r'<table class="tidy" data-table="t">(.*?)</table>', page, flags=re.S)
    assert body is not None
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body[1])]
    columns = list(zip(*[r for r in rows if r], strict=True))
    # 3e-05 with two significant digits: 6 decimals for every number under 10
    assert columns[0] == ("0.000000", "0.000030", "0.009000", "−0.400000", "67.00")
    assert columns[1] == ("0.000000", "0.000010", "0.001000", "−0.500000", "60.00")
    assert columns[2] == ("1.000", "&lt; 0.001", "0.023", "0.001", "0.500")
    assert columns[3] == ("51", "875", "0", "3", "4")
    # nothing in scientific notation, and the exact values stay in the CSV/JSON
    assert not any(re.search(r"\de[−+-]\d", c) for col in columns for c in col)
    assert _cell(0.5, "estimate") == "0.500" and _cell(0.00075, "x", 5) == "0.00075"


def test_a_detectable_bias_is_written_as_the_estimates_are() -> None:
    """The matrix wrote "±0.00 detectable" for a standard error of 0.001 (the template's
    '%.2f'); the estimates' rule gives it its digits."""
    from recuse.analyses import BIASES
    from recuse.report.model import Finding

    def f(se: float) -> Finding:
        return Finding(judge="j", bias=BIASES["position"], estimate=0.5, ci_low=0.49,
                       ci_high=0.51, n=10, level=0.9, method="m", std_error=se)  # fmt: skip

    assert f(0.001).detectable_text == "0.002"  # (1.645 + 0.842) × 0.001 = 0.00249
    assert f(0.0001).detectable_text == "0.00025"
    assert f(0.1).detectable_text == "0.25"


def test_a_tables_column_words_are_text_on_the_page(
    sample_report: AuditReport, payload: str
) -> None:
    """A table's columns and their definitions (Table.columns, under the table) are
    written as text, markup in them escaped: a column named after a judge or dataset
    (a pivot by judge), and words that quote one, come from the data."""
    from recuse.report import render_html
    from recuse.report.model import Table

    frame = pd.DataFrame({payload: [0.5], "n": [3]})
    table = Table(
        "hostile", "Hostile", frame, columns={payload: payload, "n": f"pairs of {payload}"}
    )
    section = replace(sample_report.sections[0], tables=(table,))
    page = render_html(replace(sample_report, sections=(section,)))
    under = re.search(r'<p class="muted" data-columns="hostile">(.*?)</p>', page, re.S)
    assert under is not None
    assert "<script>" not in under.group(1) and "<img" not in under.group(1)
    assert under.group(1).count("&lt;script&gt;") == 3


def test_a_lower_bound_beside_its_target_reads_under_it() -> None:
    """The certification table's own-answer row at target 0.70 whose Clopper–Pearson
    bound is 0.69973 (42 of 51 agreeing at δ' = 0.0333: not certified, "the guarantee
    holds where it is at least target") read ``0.700 | 0.700 | False``: a bound
    written on the target it misses. A lower bound is written rounded down, as
    ``recuse certify`` writes it; the other columns round to nearest."""
    from scipy.stats import beta

    from recuse.report.html import render_html
    from recuse.report.model import Section, Table

    bound = float(beta.ppf(0.1 / 3, 42, 51 - 42 + 1))
    assert 0.6995 < bound < 0.7
    frame = pd.DataFrame({"target": [0.7, 0.8], "agreement": [42 / 51, 0.83996],
                          "lower_bound": [bound, 0.8372], "certified": [False, True]})  # fmt: skip
    section = Section("s", "S", "intro", tables=(Table("t", "T", frame),))
    page = render_html(replace(_report(()), sections=(section,)))
    body = re.search(r'<table class="tidy" data-table="t">(.*?)</table>', page, flags=re.S)
    assert body is not None
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body[1])]
    assert [r for r in rows if r] == [["0.700", "0.824", "0.699", "False"],
                                      ["0.800", "0.840", "0.837", "True"]]  # fmt: skip
    assert _cell(bound, "lower_bound", 4) == "0.6997" and _cell(float("nan"), "lower_bound") == ""


def test_a_lower_bound_as_a_percentage_is_rounded_down_as_certify_writes_it() -> None:
    """The certification table writes its lower bound as a percentage beside the row's
    target (``Table.percent``, ``Table.beside``): it was rounded to nearest there, so
    gpt-3.5-turbo's bound on llmbar-mtbench's other stratum, 53 of 57 at δ/3 =
    0.836705 (scipy), read 83.7% on the audit's page and 83.6% in ``recuse certify``'s
    table. Rounded down, as certify writes it, on its side of the target: a bound of
    0.855779 that meets 0.8555 reads 85.57%."""
    from scipy.stats import beta

    bound = float(beta.ppf(0.1 / 3, 53, 57 - 53 + 1))
    assert 0.8367 < bound < 0.8368
    assert _cell(bound, "lower_bound", 3, True, 0.6) == "83.6%"
    assert _cell(bound, "lower_bound", 3, True, 0.85) == "83.6%"
    assert _cell(0.855779, "lower_bound", 3, True, 0.8555) == "85.57%"
    assert _cell(0.6997, "lower_bound", 3, True, 0.7) == "69.9%"
    assert _cell(0.83996, "agreement", 3, True, 0.84) == "83.996%"  # the others: nearest


def test_an_agreement_beside_its_rows_target_reads_on_its_own_side() -> None:
    """The certification table's held-out agreement of 0.79996 (of a fold check) wrote
    ``0.800`` in a row whose target is 0.80, which it misses; the pooled agreement of
    0.8999 read ``0.900`` beside 0.90. A column the table reads against its row's
    threshold (``Table.beside``) takes the decimals that keep it on its side; a value on
    no side of it, or far from it, is written as the column's other numbers."""
    from recuse.report.html import render_html
    from recuse.report.model import Section, Table

    frame = pd.DataFrame({"target": [0.8, 0.9, 0.95], "agreement": [0.8, 0.8999, 0.97],
                          "heldout_agreement": [0.79996, 0.93, float("nan")]})  # fmt: skip
    against = {"agreement": "target", "heldout_agreement": "target"}
    section = Section("s", "S", "intro", tables=(Table("t", "T", frame, beside=against),))
    page = render_html(replace(_report(()), sections=(section,)))
    body = re.search(r'<table class="tidy" data-table="t">(.*?)</table>', page, flags=re.S)
    assert body is not None
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body[1])]
    assert [r[1:] for r in rows if r] == [["0.800", "0.79996"], ["0.8999", "0.930"],
                                          ["0.970", ""]]  # fmt: skip
    with pytest.raises(ValueError, match="target2"):
        Table("t", "T", frame, beside={"agreement": "target2"})


def test_a_named_datasets_files_are_said_to_be_its_download() -> None:
    """A named dataset's provenance lists its whole download (sources.toml), of which
    its reader may open only some — llmbar-mtbench: the 108 files of LLMBar and
    MT-Bench, 12 read — while the page said "108 file(s): …" under what was read. It
    now says "in its download"; a file input's one file is what was read."""
    from recuse.data.inputs import Source
    from recuse.report.html import render_html

    named = Source("llmbar-mtbench", "pairs", 10, location="/d", upstream="github.com/a/b@1",
                   files=("a/x.json", "a/y.json", "b/z.json"))  # fmt: skip
    mine = Source("mine.csv", "pairs", 10, location="/tmp/mine.csv", files=("mine.csv",))
    report = _report(())
    prov = replace(report.provenance, sources=(named, mine))
    page = render_html(replace(report, provenance=prov))
    assert "3 file(s) in its download: a/x.json, a/y.json, b/z.json" in page
    assert "1 file(s): mine.csv" in page
