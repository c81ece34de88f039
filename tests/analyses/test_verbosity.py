"""Verbosity: the number shown is Saito's Eq. 6 (a recall difference), as the unit says —
not the prefer-longer gap the old label described (they differ on the planted data)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analyses.conftest import BOOT, OPTIONS, Planted, audit_only
from recuse.analyses.base import AuditOptions
from recuse.analyses.verbosity import (
    ANALYSIS,
    LONGER_GAP,
    VERBOSITY,
    _align_caption,
    curve_title,
)
from recuse.metrics.verbosity import prefer_longer_gap, verbosity_bias
from recuse.report.export import write_tables


def test_finding_is_eq6_and_not_the_prefer_longer_gap(planted: Planted) -> None:
    (f,) = [f for f in planted.report.findings if f.bias is VERBOSITY and f.judge == "claude-v1"]
    ref = verbosity_bias(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert f.estimate == pytest.approx(ref.estimate)
    assert "Eq. 6" in VERBOSITY.unit and "recall" in VERBOSITY.unit
    # the quantity the old label named, by hand: P(judge picks longer) - P(human does)
    rows = planted.pairs[(planted.pairs["judge"] == "claude-v1") & planted.pairs["p_a"].notna()]
    rows = rows[rows["human"].isin([0.0, 1.0])]
    la = rows["response_a"].str.split().str.len().to_numpy(float)
    lb = rows["response_b"].str.split().str.len().to_numpy(float)
    keep = la != lb
    longer_a = (la > lb)[keep]
    p, h = rows["p_a"].to_numpy(float)[keep], rows["human"].to_numpy(float)[keep]
    gap = float(np.where(longer_a, p, 1 - p).mean() - np.where(longer_a, h, 1 - h).mean())
    assert abs(gap - f.estimate) > 0.02  # two different numbers: each needs its own name
    (g,) = [g for g in planted.report.findings if g.bias is LONGER_GAP and g.judge == "claude-v1"]
    assert g.estimate == pytest.approx(gap)
    ref = prefer_longer_gap(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert (g.estimate, g.ci_low, g.ci_high) == pytest.approx(
        (ref.estimate, ref.ci_low, ref.ci_high)
    )
    assert g.headline and not f.headline and "P(judge picks the longer answer)" in LONGER_GAP.unit


def test_deviation_is_table_only(planted: Planted) -> None:
    assert ANALYSIS.metrics["verbosity_deviation"] is None
    (section,) = [s for s in planted.report.sections if s.id == ANALYSIS.id]
    (table,) = [t for t in section.tables if t.name == "verbosity-sim-pairs"]
    assert set(table.frame["metric"]) == {
        "verbosity_bias",
        "verbosity_deviation",
        "verbosity_longer_gap",
    }


def test_agreement_curve_caption_says_what_a_point_band_and_last_bin_are() -> None:
    # llmbar-mtbench's gpt-3.5-turbo: its last bin, every pair 2.0 or more longer
    # (51 pairs, the largest), was drawn at x = 2.1 like a bin 0.2 wide, and a figure
    # per judge had no caption: no band level, no bin rule, no dashed line
    bins = pd.DataFrame(
        {"judge": "j", "bin_low": [-0.2, 0.0, 2.0], "bin_high": [0.0, 0.2, np.inf],
         "n": [13, 14, 51]}
    )  # fmt: skip
    text = _align_caption(bins, AuditOptions(level=0.8, min_n=7))
    assert (
        "(0.2 wide; bins of at least 7 pairs; the row n under the plot: each point's pairs); "
        "bands: "
        "80% intervals, each a Wilson score interval at the effective pairs" in text
    )
    assert "dashed line: 0.5" in text
    # the bins' numbers (0.2 wide, from 2 up) in the unit of the x axis, said in the text
    assert "bin of the length difference, (len human-preferred − len other) / len other (" in text
    assert text.endswith("The last point holds every pair from 2 up (51 pairs).")
    two = pd.concat([bins, bins.assign(judge="k", n=[5, 6, 49])])
    assert _align_caption(two, AuditOptions()).endswith("from 2 up (j 51, k 49 pairs).")
    assert "the rows n, one per judge: each point's pairs" in _align_caption(two, AuditOptions())
    closed = _align_caption(bins.iloc[:2], AuditOptions())
    assert "last point" not in closed


def test_every_agreement_curve_has_its_caption(planted: Planted) -> None:
    (section,) = [s for s in planted.report.sections if s.id == ANALYSIS.id]
    curves = [g for g in section.figures if g.id.startswith("align-")]
    tables = [t for t in section.tables if t.name.startswith("alignment-curve")]
    assert curves and tables
    for g in curves:
        assert g.caption.startswith("Each point: the mean share of the win the judge gives")
        assert f"bins of at least {OPTIONS.min_n} pairs" in g.caption
    for t in tables:
        top = t.frame[~np.isfinite(t.frame["bin_high"].astype(float))]
        for n in top["n"][top["n"] >= OPTIONS.min_n]:
            assert any(re.search(rf"[ (]{n:,} pairs|[ (]{n:,}, ", g.caption) for g in curves)


def test_the_curve_tables_say_what_their_numbers_are(planted: Planted) -> None:
    """The curves' CSVs have bare columns (bin_low, bin_high, mean); their titles (in
    report.json) said only "Human preference by length difference", not what x is nor
    that the mean is of +1 / -1 / 0. Now the title defines both, and the numbers are
    what it says: the human curve's means recomputed by hand from the pairs."""
    (section,) = [s for s in planted.report.sections if s.id == ANALYSIS.id]
    titles = {t.name: t for t in section.tables}
    human = titles["human-verbosity-curve-sim-pairs"]
    assert "(len a − len b) / len b" in human.title
    assert (
        "the mean human score 2h − 1, h the human label (+1: the human prefers a, −1: b, 0: a tie"
    ) in human.title
    # its ci_low / ci_high: the CSV says no level, the title does
    assert {"ci_low", "ci_high"} <= set(human.frame.columns)
    # a Wilson score interval at the bootstrap's effective pairs (share_interval), which
    # the title called a cluster-bootstrap interval
    assert human.title.endswith(
        ", with its 90% Wilson score interval at the effective pairs of the cluster bootstrap "
        "over prompts"
    )
    align = titles["alignment-curve-sim-pairs"].title
    assert "(len human-preferred − len other) / len other" in align
    assert "both orders averaged: 1 = it agrees in both, ½ for two firm picks" in align
    # its means are the share of the win given to the human's side, orders averaged
    lengths = planted.pairs[planted.pairs["human"].notna() & (planted.pairs["human"] != 0.5)]
    wa, wb = (lengths[f"response_{s}"].str.split().str.len() for s in "ab")
    a_won = lengths["human"] > 0.5
    rel = np.where(a_won, (wa - wb) / wb, (wb - wa) / wa)
    share = np.where(a_won, lengths["p_a"], 1 - lengths["p_a"])
    for row in titles["alignment-curve-sim-pairs"].frame.itertuples():
        inside = (lengths["judge"] == row.judge).to_numpy() & (rel >= row.bin_low)
        inside &= (rel < row.bin_high) | np.isnan(row.bin_high)  # empty: the open last bin
        if row.n:
            assert int(inside.sum()) == row.n
            assert share[inside].mean() == pytest.approx(row.mean)
    items = planted.pairs.drop_duplicates("item_id")
    items = items[items["human"].notna()]
    words_a, words_b = (items[f"response_{s}"].str.split().str.len() for s in "ab")
    x = (words_a - words_b) / words_b  # lengths in words, from the texts
    score = np.sign(items["human"] - 0.5)  # +1 a, -1 b, 0 tie
    for row in human.frame.itertuples():
        inside = (x >= row.bin_low) & ((x < row.bin_high) | np.isnan(row.bin_high))
        assert int(inside.sum()) == row.n
        assert score[inside].mean() == pytest.approx(row.mean)


def test_the_agreement_curve_prints_each_bins_pairs_from_its_csv(
    planted: Planted, tmp_path: Path
) -> None:
    """Saito's Figure 5 prints each bin's sample size; the audit's curve drew none, so a
    point of 11 pairs looked as sure as one of 300. Each point has its n above it (the
    SVG's texts, its id naming series and point), and the numbers drawn are the
    counts of the alignment-curve CSV the audit writes, bin by bin, judge by judge."""
    report = audit_only(ANALYSIS.id, planted.pairs, planted.roster, figure_format="svg")
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (figure,) = [g for g in section.figures if g.id.startswith("align-")]
    texts = re.findall(r'<g id="n-(\d+)-(\d+)">\s*<text[^>]*>([^<]*)</text>', figure.data)
    drawn: dict[int, dict[int, int]] = {}
    for k, i, text in texts:
        drawn.setdefault(int(k), {})[int(i)] = int(text.replace(",", ""))
    got = [[points[i] for i in sorted(points)] for _, points in sorted(drawn.items())]
    (csv,) = [p for p in write_tables(report, tmp_path) if p.name.startswith("alignment-curve")]
    table = pd.read_csv(csv)
    kept = table[table["n"] >= OPTIONS.min_n]
    want = [g["n"].tolist() for _, g in kept.groupby("judge", sort=True) if len(g) >= 2]
    assert len(want) == 2 and got == want
    assert "the rows n, one per judge: each point's pairs" in figure.caption


def _drawn_counts(svg: str) -> list[tuple[str, float, float, float, float]]:
    """Each count drawn in an SVG curve (its gid ``n-K-I``): its series ``K`` and its box
    ``(x, y, width, height)`` in the SVG's units, from the anchor (the text's x and y, or
    its translate), its font size and its characters (0.6 em wide each, 1 em high)."""
    out = []
    pattern = r'<g id="n-(\d+)-\d+">\s*<text([^>]*)>([^<]*)</text>'
    for series, attrs, text in re.findall(pattern, svg):
        size = float(re.findall(r"font-size: ([\d.]+)px", attrs)[0])
        at = re.search(r'x="([-\d.]+)" y="([-\d.]+)"', attrs) or re.search(
            r"translate\(([-\d.]+)[ ,]([-\d.]+)\)", attrs
        )
        assert at is not None, attrs
        x, y = float(at.group(1)), float(at.group(2))
        width = 0.6 * size * len(text)
        left = x - width / 2 if "text-anchor: middle" in attrs else x
        out.append((series, left, y - size, width, size))
    return out


def test_the_counts_of_a_shared_curve_never_sit_on_each_other(planted: Planted) -> None:
    """Several judges on one agreement curve each wrote their counts above their points:
    where two curves met, two counts sat at one place (18 on 18 at the first bin of the
    planted judges, 16 over 26 further on), unreadable. Each judge's counts are a row of
    their own under the plot now: no two counts' boxes overlap, and each judge's counts
    share one row (one y), so a reader follows them across."""
    report = audit_only(ANALYSIS.id, planted.pairs, planted.roster, figure_format="svg")
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (figure,) = [g for g in section.figures if g.id.startswith("align-")]
    boxes = _drawn_counts(figure.data)
    assert len(boxes) >= 2 * 5
    for a, (_, x1, y1, w1, h1) in enumerate(boxes):
        for _, x2, y2, w2, h2 in boxes[a + 1 :]:
            apart = x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
            assert apart, ((x1, y1), (x2, y2))
    rows: dict[str, set[float]] = {}
    for series, _, y, _, _ in boxes:
        rows.setdefault(series, set()).add(y)
    assert len(rows) == 2 and all(len(ys) == 1 for ys in rows.values())


def test_the_agreement_curve_says_which_orders_its_points_are_of() -> None:
    """With --orders first (or second) every point is that order's verdict alone, as
    the audit reads one order for every analysis, yet the caption and the table's title
    said 'both orders averaged … ½ for two firm picks that disagree', and the dashed
    line 'half of the verdicts agree', words for firm picks where the points may be a
    probability's share."""
    bins = pd.DataFrame(
        {"judge": "j", "bin_low": [-0.2, 0.0], "bin_high": [0.0, 0.2], "n": [13, 14]}
    )
    both = _align_caption(bins, AuditOptions())
    assert "both orders averaged" in both
    for order in ("first", "second"):
        options = AuditOptions(orders=order)
        title = curve_title("human_alignment_curve", dataset="d", level=0.9, orders=order)
        for text in (_align_caption(bins, options), title):
            assert "both orders averaged" not in text and "two firm picks" not in text
        # the audit's options name the flag; curve_title called from Python, its keyword
        flag, keyword = f"(--orders {order}): 1 = it agrees", f'(orders="{order}"): 1 = it'
        assert f"the {order} order's verdict alone {flag}" in _align_caption(bins, options)
        assert f"the {order} order's verdict alone {keyword}" in title
    assert "half of the verdicts agree" not in both
    assert "dashed line: 0.5, as much of the win to the other answer as to the " in both


def test_the_curve_tables_define_their_columns_and_the_open_last_bin(
    planted: Planted, tmp_path: Path
) -> None:
    """The three curve tables carried no column words in report.json or on the page,
    and the last bin's bin_high read inf in the CSV and null in report.json (JSON has no
    infinity): two values for one edge. Every column is now defined, and the open last
    bin's bin_high is one value, empty in the CSV and null in the JSON, said in its
    column's words; each row's pairs are those from bin_low (in) to bin_high (out),
    counted again here."""
    from recuse.metrics.verbosity import curve_columns
    from recuse.report.export import to_dict

    (section,) = [s for s in planted.report.sections if s.id == ANALYSIS.id]
    curves = [t for t in section.tables if "curve" in t.name]
    assert {t.name for t in curves} >= {
        "alignment-curve-sim-pairs",
        "human-verbosity-curve-sim-pairs",
    }
    words = curve_columns(OPTIONS.level)
    tables = to_dict(planted.report)["tables"]
    for table in curves:
        said = tables[table.name]["columns"]
        assert set(said) == set(table.frame.columns), table.name
        assert said == {c: words[c] for c in table.frame.columns}
        last = table.frame[table.frame["bin_low"] == table.frame["bin_low"].max()]
        assert len(last) and last["bin_low"].eq(2.0).all()  # the planted answers reach it
        assert last["bin_high"].isna().all()
        assert not np.isinf(table.frame["bin_high"].astype(float)).any()
        assert all(r["bin_high"] is None for r in tables[table.name]["rows"]
                   if r["bin_low"] == 2.0)  # fmt: skip
    for csv in write_tables(planted.report, tmp_path):
        if csv.stem in {t.name for t in curves}:
            lines = csv.read_text().splitlines()
            assert "inf" not in csv.read_text(), csv.name
            high = lines[0].split(",").index("bin_high")
            tops = [line.split(",") for line in lines[1:] if line.split(",")[high - 1] == "2.0"]
            assert tops and all(t[high] == "" for t in tops), csv.name
    assert words["bin_high"].endswith(
        "empty (null in JSON) for the last bin: no upper edge, the last bin is open — every "
        "pair from bin_low up"
    )
    assert f"{OPTIONS.level:.0%} interval" in words["ci_low"]
    # the bins' intervals use the normal quantile (share_interval): the words said Student's t
    assert "Student's t" not in words["ci_low"] and "normal quantile" in words["ci_low"]
    items = planted.pairs.drop_duplicates("item_id")
    items = items[items["human"].notna()]
    words_a, words_b = (items[f"response_{s}"].str.split().str.len() for s in "ab")
    x = (words_a - words_b) / words_b
    human = next(t.frame for t in curves if t.name == "human-verbosity-curve-sim-pairs")
    top = human[human["bin_high"].isna()].iloc[0]
    assert int((x >= top["bin_low"]).sum()) == top["n"]  # every pair from bin_low up


def test_the_human_curve_of_vote_shares_says_its_score_is_2_human_minus_1(
    shared_data: Path,
) -> None:
    """mt-bench-human's labels are shares of the experts' votes (0.25, 1/3, 0.75 ...):
    the human curve's mean is of 2h − 1, h the label (0.75 reads +0.5), where its title said
    "+1: the human prefers a, −1: b, 0: a tie", a score of three values: a bin's mean
    of the vote shares is not the mean of who won. A judge that always picks a is
    added so that the verbosity analysis runs."""
    from recuse.data.inputs import load_input
    from recuse.roster import Roster

    inp = load_input("mt-bench-human", data_dir=shared_data)
    frame = inp.frame.assign(judge="always-a", p_a_first=1.0, p_a_second=1.0, p_a=1.0)
    report = audit_only(ANALYSIS.id, frame, Roster.builtin())
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (human,) = [t for t in section.tables if t.name.startswith("human-verbosity-curve")]
    assert "2h − 1, h the human label" in human.title and "0.75 for a reads +0.5" in human.title
    from recuse.metrics.verbosity import response_lengths

    items = frame[frame["human"].notna()]
    la, lb, _ = response_lengths(items)  # the texts' words, as the audit counts them
    with np.errstate(divide="ignore"):  # llama-13b's empty answer to question 127: inf
        x = pd.Series((la - lb) / lb, index=items.index)
    shares = ~items["human"].isin([0.0, 0.5, 1.0])
    assert shares.sum() > 100  # vote shares, not three values
    differ = 0
    for row in human.frame.itertuples():
        inside = (x >= row.bin_low) & (x < row.bin_high)  # the open last bin: empty
        inside |= (x >= row.bin_low) & np.isnan(row.bin_high)
        h = items.loc[inside, "human"]
        assert row.mean == pytest.approx((2 * h - 1).mean())
        differ += abs(np.sign(h - 0.5).mean() - row.mean) > 0.01
    assert differ  # a mean of who won reads otherwise


def test_the_correctness_curves_score_is_a_formula_after_rewording(shared_data: Path) -> None:
    """JudgeBench's labels are correctness labels, and the report rewords every "human":
    the human curve's title read "the mean correctness-label score 2·correctness-label −
    1", a formula of no column. It names the label h; its means are 2h − 1 (here 0 or 1:
    ±1), recomputed from the labels by hand."""
    from recuse.data.inputs import load_input
    from recuse.driver import run_audit
    from recuse.metrics.verbosity import response_lengths
    from recuse.roster import Roster

    inp = load_input("judgebench", data_dir=shared_data)
    options = AuditOptions(level=0.9, n_boot=200, seed=0, min_n=10, robustness=(),
                           only=(ANALYSIS.id,))  # fmt: skip
    report = run_audit([inp], options=options, roster=Roster.builtin())
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (curve,) = [t for t in section.tables if t.name.startswith("human-verbosity-curve")]
    assert "2·correctness-label" not in curve.title
    assert "the mean correctness-label score 2h − 1, h the correctness label (+1: " in curve.title
    items = inp.frame.drop_duplicates("item_id")
    items = items[items["human"].notna()]
    la, lb, _ = response_lengths(items)
    x = (la - lb) / lb
    h = items["human"].to_numpy(float)
    for row in curve.frame.itertuples():
        inside = (x >= row.bin_low) & ((x < row.bin_high) | np.isnan(row.bin_high))
        assert row.mean == pytest.approx((2 * h[inside] - 1).mean())


def _labels_only(seed: int = 2, prompts: int = 150) -> pd.DataFrame:
    """Human-labelled pairs with lengths and no judge: the longer answer preferred 65%
    of the time, 1–2 pairs per prompt."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(prompts):
        for k in range(int(rng.integers(1, 3))):
            la, lb = (int(x) for x in rng.integers(5, 80, size=2))
            longer = rng.random() < 0.65
            rows.append({"item_id": f"p{p}-{k}", "prompt_id": f"p{p}", "len_a": la, "len_b": lb,
                         "human": float(longer == (la > lb))})  # fmt: skip
    frame = pd.DataFrame(rows)
    for col in ("model_a", "model_b", "judge", "p_a_first", "p_a_second", "p_a"):
        frame[col] = None
    return frame


def test_labels_only_give_the_humans_length_preference_and_no_finding(tmp_path: Path) -> None:
    """A pairs table of human labels and lengths, no judge (hh-rlhf): the audit gives the
    humans' length preference — one number with its interval, as
    human_prefers_longer computes it with the audit's bootstrap, in the verbosity
    section's ``baselines`` (report.json: definition, unit, no-preference value) with
    Figure 4's curve, its table and the number's table, every column said — and no
    finding: no summary row, nothing for ``recuse gate``, whose verbosity line is
    "not measured". The terminal's data line says the number in place of "nothing to
    estimate". Before, the table gave nothing (no baseline, no section)."""
    from recuse.cli import main
    from recuse.metrics.verbosity import HUMAN_LONGER_UNIT, human_prefers_longer
    from recuse.report.export import to_dict, write_report
    from recuse.report.html import render_html
    from recuse.report.summary_table import source_lines
    from recuse.roster import Roster
    from recuse.tables import validate_pairs

    frame = _labels_only()
    report = audit_only("verbosity", frame, Roster.builtin())
    want = human_prefers_longer(validate_pairs(frame), boot=OPTIONS.resampling, min_n=10)
    (base,) = report.baselines
    got = base.result
    assert (got.estimate, got.ci_low, got.ci_high, got.n) == (
        want.estimate, want.ci_low, want.ci_high, want.n,
    )  # fmt: skip
    assert 0.55 < got.estimate < 0.75 and got.null == 0.5
    assert report.findings == [] and report.summary() == ()
    data = to_dict(report)
    assert data["summary"] == [] and data["flagged_verdicts"] == []
    (section,) = data["sections"]
    (said,) = section["baselines"]
    assert said["definition"] == want.definition and said["unit"] == HUMAN_LONGER_UNIT
    assert said["null"] == 0.5 and said["estimate"] == want.estimate
    assert section["findings"] == []
    assert {"human-length-preference-planted", "human-verbosity-curve-planted"} <= set(
        section["tables"]
    )
    for name in section["tables"]:
        table = data["tables"][name]
        assert set(table["columns"]) == set(table["rows"][0]), name
    assert [f["id"] for f in section["figures"]] == ["human-length-planted"]
    (line,) = source_lines(report)
    assert f"humans' preference for the longer answer: {base.text} (90% interval" in line
    assert "no preference = 0.5" in line and "nothing to estimate" not in line
    assert 'data-baseline="planted"' in render_html(report)
    write_report(report, tmp_path / "r")
    assert main(["gate", str(tmp_path / "r" / "report.json"), "--max", "verbosity=0.05",
                 "--json"]) == 3  # fmt: skip


def test_a_judged_table_keeps_its_section_without_a_baseline(planted: Planted) -> None:
    """Where the table has judges the humans' curve is in the section already and the
    judges' prefer-longer gaps hold the humans' share over their pairs: no baseline."""
    assert planted.report.baselines == []
    assert all("baselines" not in s for s in to_dict_sections(planted))


def to_dict_sections(planted: Planted) -> list[dict[str, object]]:
    from recuse.report.export import to_dict

    return list(to_dict(planted.report)["sections"])


def test_labels_only_with_too_few_unequal_pairs_say_why_there_is_no_baseline() -> None:
    """Under ``min_n`` (10 here) labelled pairs of unequal length: no number, a note
    saying why, and the data line's "nothing to estimate" as before."""
    from analyses.conftest import _input
    from recuse.driver import run_audit
    from recuse.report.summary_table import source_lines
    from recuse.roster import Roster

    frame = _labels_only(prompts=4).head(6)
    report = run_audit([_input("planted", "pairs", frame)], options=OPTIONS,
                       roster=Roster.builtin())  # fmt: skip
    assert report.baselines == [] and report.findings == []
    (section,) = report.sections
    assert section.id == "verbosity" and not section.figures  # no bin of 10 pairs
    assert any(
        "humans' preference for the longer answer not estimated" in n
        and "pairs of unequal length with a human label" in n
        for n in section.notes
    ), section.notes
    (line,) = source_lines(report)
    assert "nothing to estimate from it" in line


def test_validate_names_the_baseline_the_audit_gives_a_labels_only_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``recuse validate`` on a labels-only table with lengths (hh-rlhf) said
    "verbosity: no — run a judge on it first" and nothing more, while ``recuse audit`` on
    the same file printed the humans' preference for the longer answer (hh-rlhf 0.44
    [0.42, 0.46]): the one door denied the number the other gave. Its reason now ends
    with what the audit still gives, and only where it gives it (without lengths, no
    such words; the audit then refuses ``--only verbosity``)."""
    import json

    from recuse.cli import main

    def verbosity_of(frame: pd.DataFrame, name: str) -> tuple[dict[str, object], list[str]]:
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        assert main(["validate", str(path), "--json"]) == 0
        said = {a["analysis"]: a for a in json.loads(capsys.readouterr().out)["analyses"]}
        code = main(["audit", str(path), "--only", "verbosity", "--n-boot", "200",
                     "--out", str(tmp_path / name)])  # fmt: skip
        err = capsys.readouterr().err
        if code:  # nothing to run: the audit refuses --only verbosity, with its reason
            assert code == 2 and "no chosen analysis applies" in err
            return said["verbosity"], []
        report = json.loads((tmp_path / name / "report.json").read_text("utf-8"))
        bases = [b["title"] for s in report["sections"] for b in s.get("baselines", [])]
        return said["verbosity"], bases

    said, bases = verbosity_of(_labels_only(), "lengths")
    assert bases == ["humans' preference for the longer answer"]
    assert said["supported"] is False
    why = str(said["why_not"])
    assert "run a judge on it first" in why
    assert "the audit gives the humans' preference for the longer answer" in why
    assert "no judge's bias" in why
    said, bases = verbosity_of(_labels_only().drop(columns=["len_a", "len_b"]), "none")
    assert bases == [] and "the audit gives" not in str(said["why_not"])
    # `recuse analyses`, the third door, said verbosity needs judge verdicts, no more
    assert main(["analyses"]) == 0
    listed = " ".join(capsys.readouterr().out.split())
    needs = listed.split("verbosity — Verbosity (pairs) needs: ", 1)[1].split(" verbosity_")[0]
    assert (
        "without verdicts, human labels and lengths give the humans' preference for "
        "the longer answer alone (a baseline of the labels, no judge's bias)" in needs
    )


def test_mt_bench_humans_exclusions_say_what_each_leaves_out(shared_data: Path) -> None:
    """mt-bench-human has human votes and no judge: its exclusions said all 910 rows
    were left out of "all" analyses, "nothing to assess", beside the humans' length
    preference from 693 of them. The no-judge exclusion now applies to the judges'
    analyses and says the human baselines read the labels; the baseline's own
    exclusions (equal lengths, ties dropped) count the rest, by hand from the texts."""
    from recuse.data.inputs import load_input
    from recuse.driver import run_audit
    from recuse.roster import Roster

    inp = load_input("mt-bench-human", data_dir=shared_data)
    options = AuditOptions(level=0.9, n_boot=200, seed=0, min_n=10, robustness=(),
                           only=(ANALYSIS.id,))  # fmt: skip
    report = run_audit([inp], options=options, roster=Roster.builtin())
    assert all("nothing to assess" not in e.reason for e in report.exclusions)
    (no_judge,) = [e for e in report.exclusions if "no judge verdict" in e.reason]
    assert (no_judge.count, no_judge.total) == (910, 910)
    assert no_judge.analysis.startswith("every analysis of a judge's verdicts; not the ")
    assert "human baselines, which read their labels" in no_judge.analysis
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (base,) = section.baselines
    own = {e.reason: e for e in report.exclusions if e is not no_judge}
    assert all(e.analysis == "verbosity: the humans' preference for the longer answer "
               "(a baseline, no judge)" and e.total == 910 for e in own.values())  # fmt: skip
    # by hand: words from the texts, as the audit counts them
    frame = inp.frame
    wa, wb = (frame[f"response_{s}"].fillna("").str.split().str.len() for s in "ab")
    equal = int((wa == wb).sum())
    tied = int(((wa != wb) & (frame["human"] == 0.5)).sum())
    said = {why.split(" (")[0].split(":")[0]: e.count for why, e in own.items()}
    assert said == {"the two answers of equal length": equal,
                    "tied or evenly split human votes": tied}  # fmt: skip
    assert (equal, tied, base.result.n) == (31, 186, 693)
    assert base.result.n + equal + tied == 910


@pytest.mark.parametrize(("level", "kept"), [(0.999, 4), (0.9, 0)])
def test_a_deviation_row_whose_interval_differs_is_kept_with_its_own_warning(
    shared_data: Path, level: float, kept: int
) -> None:
    """LLMBar MT-Bench at 99.9%: every judge's Eq. 6 is positive with an interval that
    holds 0 (gpt-3.5-turbo [−0.053, 0.443]), so |Eq. 6|'s is [0, 0.443] — and its
    extrapolated ends differ (the signed low end is no end of it). The table dropped the
    deviation row on its estimate alone, with it the only place its interval and record
    were said. Now such a row stays, ci_low 0, its page text from its own record
    (llama-2-70b-chat: the signed low end alone extrapolated, |Eq. 6|'s interval none);
    at 90% every interval excludes 0 and the deviation rows, repeats, are dropped."""
    import recuse

    rep = recuse.audit(
        "llmbar-mtbench", only="verbosity", level=level, data_dir=shared_data, figures="png"
    )
    (section,) = [s for s in rep.result.sections if s.id == ANALYSIS.id]
    (table,) = [t for t in section.tables if t.name == "verbosity-llmbar-mtbench"]
    f = table.frame
    dev = f[f["metric"] == "verbosity_deviation"]
    assert len(dev) == kept
    signed = f[f["metric"] == "verbosity_bias"].set_index("judge")
    for _, row in dev.iterrows():
        s = signed.loc[row["judge"]]
        assert s["ci_low"] < 0 < s["ci_high"] and row["ci_low"] == 0.0
        assert row["ci_high"] == pytest.approx(max(-s["ci_low"], s["ci_high"]))
        assert row["estimate"] == pytest.approx(abs(s["estimate"]))
    texts = dict(zip(f["metric"] + " " + f["judge"], table.texts["warnings"], strict=True))
    for said, row in zip(table.texts["warnings"], f.itertuples(), strict=True):
        if "beyond the 2,000 resamples" in row.warnings:  # its own record, in a line
            assert "extrapolated past the 2,000 resamples" in said and "Student" not in said
        else:  # each page text is its own row's warnings
            assert said == row.warnings
    if kept:
        assert texts["verbosity_deviation llama-2-70b-chat"] == ""
        assert texts["verbosity_bias llama-2-70b-chat"].startswith("99.9% low end extrapolated")
        assert texts["verbosity_deviation gpt-3.5-turbo"].startswith("99.9% high end extrapolated")


def test_a_judged_tables_human_curve_says_which_items_it_leaves_out(planted: Planted) -> None:
    """A table with judges draws the human score by length difference (Figure 4) from
    the labelled items whose lengths give a relative difference; the items it left out
    (no label, a length unknown or both answers empty) were in no exclusion, so its
    bins' pairs fell short of the table's items with nothing said. Counted by hand."""
    from recuse.analyses.verbosity import HUMAN_CURVE_EXCLUDED

    frame = planted.pairs.copy()
    assert frame["human"].notna().all()
    items = frame["item_id"].drop_duplicates().tolist()
    unlabelled, unknown = items[:3], items[3:5]
    frame.loc[frame["item_id"].isin(unlabelled), "human"] = np.nan
    gone = frame["item_id"].isin(unknown)
    for col in ("len_a", "len_b", "response_a", "response_b"):  # whichever the table gives
        if col in frame.columns:
            frame.loc[gone, col] = np.nan if col.startswith("len") else ""
    report = audit_only(ANALYSIS.id, frame, planted.roster)
    said = {e.reason: e for e in report.exclusions if e.analysis == HUMAN_CURVE_EXCLUDED}
    assert {r: (e.count, e.total) for r, e in said.items()} == {
        "no human label": (3, len(items)),
        "a length unknown, or both answers empty: no relative length difference": (2, len(items)),
    }
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (curve,) = [t for t in section.tables if t.name.startswith("human-verbosity-curve")]
    assert int(curve.frame["n"].sum()) == len(items) - 5
