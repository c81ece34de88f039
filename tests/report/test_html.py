"""The page's words: skips grouped by cause, counts as integers, verdicts in plain words."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

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
    report.verdict's estimate_parts / interval_text)."""
    from recuse.analyses import BIASES
    from recuse.report.html import render_html
    from recuse.report.model import Finding, Section

    f = Finding(judge="gpt-4", bias=BIASES["certified_coverage"], estimate=0.2849,
                ci_low=0.2331, ci_high=0.3421, n=7013, level=0.9, method="m",
                dataset="d")  # fmt: skip
    g = Finding(judge="gpt-4", bias=BIASES["position"], estimate=0.5123, ci_low=-0.0312,
                ci_high=0.0562, n=12, level=0.9, method="m", dataset="d")  # fmt: skip
    assert f.parts == ("0.28", "[0.23, 0.34]") and f.text == "0.28 [0.23, 0.34]"
    assert f.verdict.endswith(": 0.28 [0.23, 0.34], n=7,013")
    assert g.parts == ("0.51", "[\u22120.03, 0.06]")  # the minus as the summary tables write it
    section = Section("certification", "Certification", "intro", findings=(f, g))
    report = replace(_report(()), sections=(section,))
    page = render_html(report)
    assert '<td class="num">0.28</td><td class="num">[0.23, 0.34]</td>' in page
    assert '<td class="num">0.51</td><td class="num">[\u22120.03, 0.06]</td>' in page
    assert "0.285" not in page and "n=7013" not in page and "n=7,013" in page


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
