"""Self-preference ladder: the calibrated headline taken apart; the raw rungs, no finding."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analyses.conftest import OPTIONS, Planted
from recuse.analyses.base import Context
from recuse.analyses.self_preference_ladder import ANALYSIS, PARTS, _skip_parts
from recuse.data.inputs import Input
from recuse.driver import run_audit
from recuse.metrics.competence import CALIBRATED
from recuse.metrics.ladder import RUNGS
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.summary import PairwiseBias
from recuse.report import Finding, Source


def test_the_parts_are_findings_that_add_up_to_the_headline_and_are_never_flagged(
    planted: Planted,
) -> None:
    def gpt4(key: str) -> list[Finding]:
        return [
            f for f in planted.report.findings
            if f.bias.key == key and f.judge == "gpt-4" and f.dataset == "sim-pairs"
        ]  # fmt: skip

    (headline,) = gpt4("self_preference_calibrated")
    parts = [f for b in PARTS.values() for f in gpt4(b.key)]
    assert len(parts) == 3 and headline.estimate > 0.05  # planted: gpt-4 prefers its own
    assert sum(f.estimate for f in parts) == pytest.approx(headline.estimate, abs=1e-9)
    assert not any(f.significant or f.headline for f in parts)
    # the harmful-excess rung is in the raw ladder's table, never a finding
    assert not [f for f in planted.report.findings if "harmful" in f.bias.key]


def test_section_table_has_every_rung_per_judge(planted: Planted) -> None:
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    (table,) = [t for t in section.tables if t.name == "ladder-sim-pairs"]
    gpt4 = table.frame[table.frame["judge"] == "gpt-4"]
    assert list(gpt4["rung"]) == list(RUNGS)
    assert list(gpt4["definition"]) == list(RUNGS.values())


@pytest.mark.parametrize("order", ["first", "second"])
def test_one_order_ladder_says_its_verdicts_are_of_that_order(planted: Planted, order: str) -> None:
    """With --orders first (or second) the harmful rung's definition said 'averaged over
    the two orders: a split of two firm picks counts ½' and the split rungs read as if
    they could be estimated; each row now names the order its verdict is of, and a note
    says why the split rungs are empty."""
    options = replace(OPTIONS, only=(ANALYSIS.id,), orders=order)
    pairs = planted.pairs
    report = run_audit([Input("one", "pairs", pairs, Source("one", "pairs", len(pairs)))],
                       options=options, roster=planted.roster)  # fmt: skip
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (table,) = [t for t in section.tables if t.name == "ladder-one"]
    gpt4 = table.frame[table.frame["judge"] == "gpt-4"].set_index("rung")
    harmful = gpt4.loc["harmful", "definition"]
    assert "averaged over the two orders" not in harmful and "½" not in harmful
    assert harmful.endswith(f"(the {order} order's verdict alone)")
    assert gpt4.loc["legitimate", "definition"] == RUNGS["legitimate"]
    split = gpt4.loc["harmful_split"]
    assert np.isnan(split["estimate"]) and "both orders" in split["not estimated"]
    assert f"--orders {order}: every rung of the ladder of one reads the {order} order's" in (
        " ".join(section.notes)
    )


def test_the_two_ladders_say_whose_prompts_they_count(planted: Planted) -> None:
    """On llmbar-mtbench gpt-3.5-turbo's calibrated ladder read "own pairs 67, prompts 73"
    and the rung-by-rung table "n 67, prompts 46" for the same own pairs: the first is
    the prompts of all its pairs, which the competence model is fitted on and its
    interval resamples. Both tables now say what each column counts, and the counts
    are that: the calibrated prompts at least the own pairs' prompts, by hand."""
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    tables = {t.name: t for t in section.tables}
    cal, raw = tables["calibrated-ladder-sim-pairs"], tables["ladder-sim-pairs"]
    assert set(cal.columns) == set(cal.frame.columns)
    assert set(raw.columns) == set(raw.frame.columns)
    assert "all the judge's pairs, own and other" in cal.columns["prompts"]
    assert "the prompts of those pairs" in raw.columns["prompts"]
    pairs = planted.pairs[planted.pairs["judge"] == "gpt-4"]
    head = cal.frame[(cal.frame["judge"] == "gpt-4") & (cal.frame["rung"] == cal.frame["bias"])]
    own = raw.frame[(raw.frame["judge"] == "gpt-4") & (raw.frame["rung"] == "own_win_rate")]
    assert int(head["prompts"].iloc[0]) == pairs["prompt_id"].nunique()
    assert int(head["prompts"].iloc[0]) > int(own["prompts"].iloc[0])
    assert int(head["own pairs"].iloc[0]) == int(own["n"].iloc[0])


def test_a_file_of_one_verdict_per_pair_is_not_said_to_average_two_orders(
    planted: Planted,
) -> None:
    """A file with first-order verdicts only, under the default --orders both: the
    harmful rung's definition said 'averaged over the two orders: a split of two firm
    picks counts ½' though no pair had a second verdict; it now says each pair has one.
    A judge with pairs in both orders keeps the averaging words."""
    pairs = planted.pairs.copy()
    one = pairs["judge"] == "gpt-4"
    pairs.loc[one, "p_a_second"] = np.nan
    pairs.loc[one, "p_a"] = pairs.loc[one, "p_a_first"]
    options = replace(OPTIONS, only=(ANALYSIS.id,))
    report = run_audit([Input("one", "pairs", pairs, Source("one", "pairs", len(pairs)))],
                       options=options, roster=planted.roster)  # fmt: skip
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (table,) = [t for t in section.tables if t.name == "ladder-one"]
    harmful = table.frame[table.frame["rung"] == "harmful"].set_index("judge")["definition"]
    assert "averaged over the two orders" not in harmful["gpt-4"]
    assert harmful["gpt-4"].endswith("no pair of the judge's was judged in both orders)")
    others = harmful.drop("gpt-4")
    assert len(others) > 0 and (others == RUNGS["harmful"]).all()


def test_judge_filter_keeps_the_ladder_and_its_eo_rung_as_the_finding(shared_data: Path) -> None:
    """The rung-by-rung ladder bootstraps one cluster set for all judges; with --judge
    it drew the chosen judges' prompts only, so with GPT-3.5's pairs of 10 prompts of
    llmbar-mtbench left out its ladder read other intervals than in the whole audit, and
    its EO rung another interval than its EO finding beside it (which the shared
    bootstrap makes from the whole table). It reads every judge's rows now."""
    from recuse.data.inputs import load_input
    from recuse.driver import AuditOptions
    from recuse.roster import Roster

    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    j, table = "gpt-3.5-turbo", inp.frame
    left = table["prompt_id"].isin(sorted(table["prompt_id"].unique())[:10])
    inp = replace(inp, frame=table[~(left & (table["judge"] == j))].reset_index(drop=True))
    only = ("self-preference", "self-preference-ladder")

    def run(judges: tuple[str, ...]) -> tuple[pd.DataFrame, dict[str, tuple[float, ...]]]:
        o = AuditOptions(judges=judges, n_boot=200, seed=1, only=only)
        report = run_audit([inp], options=o, roster=Roster.builtin())
        (ladder,) = [t.frame for s in report.sections for t in s.tables
                     if t.name.startswith("ladder-")]  # fmt: skip
        found = {f.bias.key: (f.estimate, f.ci_low, f.ci_high)
                 for f in report.findings if f.judge == j}  # fmt: skip
        return ladder[ladder["judge"] == j].reset_index(drop=True), found

    (every, _), (one, found) = run(()), run((j,))
    pd.testing.assert_frame_equal(one, every, check_exact=False, rtol=1e-12)
    eo = one.set_index("rung").loc["eo", ["estimate", "ci_low", "ci_high"]]
    assert tuple(eo) == pytest.approx(found["self_preference_eo"], abs=1e-12)


def test_the_ladder_tables_interval_words_name_the_interval_of_each_rung(planted: Planted) -> None:
    """The rates' intervals are Wilson's at the bootstrap's effective pairs (not the
    bootstrap's own interval) and the differences' BCa; the table's ci_low said only "its
    interval at the report's level". The words now name both and which rungs are the
    differences: the rungs whose method is not Wilson's, as the metric computes them."""
    from recuse.analyses.self_preference_ladder import RUNG_COLUMNS
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.ladder import self_preference_ladder

    results, _ = self_preference_ladder(
        planted.pairs, boot=Resampling(n_boot=200, seed=1), selves=planted.roster.self_map()
    )
    differences = {r.metric for r in results if "Wilson score interval" not in r.method}
    assert differences == {"dp_difference", "eo", "harmful_excess"}
    words = RUNG_COLUMNS["ci_low"]
    assert "one rate (not dp_difference, eo or harmful_excess), the Wilson score" in words
    assert "a difference, the bootstrap's BCa interval" in words


def test_a_part_fixed_by_construction_reads_as_no_measurement(
    shared_data: Path, tmp_path: Path
) -> None:
    """LLMBar's MT-Bench pairs have no human tie, so the part of the calibrated
    self-preference on the tie rung is 0 by construction for every judge: it read
    "no detectable part ...: +0.000 [0.000, 0.000], n=67" in its section, 0.0 [0.0,
    0.0] in the calibrated ladder's table and p = 1 in report.json, like a measurement.
    It now reads "0, fixed by construction, not a measurement" in the finding's words
    (page and JSON), with no interval, standard error or p-value, and the table leaves
    its estimate and interval empty, the measured parts still adding up to the
    headline."""
    import json

    from recuse.data.inputs import load_input
    from recuse.driver import AuditOptions
    from recuse.report.export import write_report
    from recuse.report.model import FIXED_WORDS
    from recuse.roster import Roster

    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    assert inp.frame["human"].dropna().isin([0.0, 1.0]).all()  # no tie: the rung is empty
    o = AuditOptions(n_boot=200, seed=1, only=("self-preference", "self-preference-ladder"))
    report = run_audit([inp], options=o, roster=Roster.builtin())
    tie = PARTS["calibrated_rung_human_neither"].key
    (f,) = [f for f in report.findings if f.bias.key == tie and f.judge == "gpt-4"]
    assert f.fixed and f.estimate == 0.0
    assert f.text == f"0, {FIXED_WORDS}" and f.parts == (
        "0 by construction",
        "none: not a measurement",
    )
    assert FIXED_WORDS in f.verdict and "[" not in f.verdict
    out = write_report(report, tmp_path / "out")
    found = json.loads(out["json"].read_text(encoding="utf-8"))
    (d,) = [d for s in found["sections"] for d in s["findings"]
            if d["bias"] == tie and d["judge"] == "gpt-4"]  # fmt: skip
    assert d["fixed_by_construction"] and FIXED_WORDS in d["verdict"]
    assert (d["p_value"], d["std_error"], d["p_floor"]) == (None, None, None)
    (cal,) = [t.frame for s in report.sections for t in s.tables
              if t.name.startswith("calibrated-ladder-")]  # fmt: skip
    mine = cal[cal["judge"] == "gpt-4"].set_index("bias")
    assert mine.loc[tie, ["estimate", "ci_low", "ci_high"]].isna().all()
    assert mine.loc[tie, "fixed by construction"] == f"0, {FIXED_WORDS}"
    assert mine.loc[tie, "share of own pairs"] == 0.0
    measured = mine.drop(index=tie)
    assert (measured["fixed by construction"] == "").all()
    headline = measured.loc["self_preference_calibrated", "estimate"]
    parts = measured.drop(index="self_preference_calibrated")["estimate"]
    assert parts.sum() == pytest.approx(headline, abs=1e-9)
    page = out["html"].read_text(encoding="utf-8")
    assert "0 by construction" in page and "[0.000, 0.000]" not in page


def test_a_part_fixed_by_construction_names_no_interval_in_its_method(
    shared_data: Path,
) -> None:
    """The tie part on LLMBar's MT-Bench pairs (no human tie) has no interval, as its
    finding says ("none: not a measurement"), but its method, in the same row of the
    page and in report.json, read "90% percentile interval, cluster bootstrap over
    prompts (200 resamples)". It names no interval now; a measured part keeps its
    interval's words."""
    from recuse.data.inputs import load_input
    from recuse.driver import AuditOptions
    from recuse.metrics.estimate import FIXED_METHOD
    from recuse.roster import Roster

    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    o = AuditOptions(n_boot=200, seed=1, only=("self-preference", "self-preference-ladder"))
    report = run_audit([inp], options=o, roster=Roster.builtin())
    tie = PARTS["calibrated_rung_human_neither"].key
    own = PARTS["calibrated_rung_human_prefers_own"].key
    (f,) = [f for f in report.findings if f.bias.key == tie and f.judge == "gpt-4"]
    (m,) = [f for f in report.findings if f.bias.key == own and f.judge == "gpt-4"]
    assert f.fixed and not m.fixed
    assert f.method.endswith(FIXED_METHOD) and "resamples" not in f.method, f.method
    assert "percentile interval" in m.method and FIXED_METHOD not in m.method


def test_a_part_fixed_by_construction_has_no_interval_rule_and_no_sample_size(
    shared_data: Path, tmp_path: Path
) -> None:
    """The tie part on LLMBar's MT-Bench pairs (no human tie) is fixed by construction,
    yet report.json gave it ``interval_rule`` "percentile" (no rule made an interval it
    has not), and its verdict ended "n=51": gpt-4's own pairs, none of which is on the
    tie part, read as the part's sample. It has no rule and no n in its verdict now; a
    measured part keeps both."""
    import json

    from recuse.data.inputs import load_input
    from recuse.driver import AuditOptions
    from recuse.report.export import write_report
    from recuse.roster import Roster

    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    o = AuditOptions(n_boot=200, seed=1, only=("self-preference", "self-preference-ladder"))
    report = run_audit([inp], options=o, roster=Roster.builtin())
    tie = PARTS["calibrated_rung_human_neither"].key
    own = PARTS["calibrated_rung_human_prefers_own"].key
    out = write_report(report, tmp_path / "out")
    found = json.loads(out["json"].read_text(encoding="utf-8"))
    mine = {d["bias"]: d for s in found["sections"] for d in s["findings"]
            if d["judge"] == "gpt-4"}  # fmt: skip
    fixed, measured = mine[tie], mine[own]
    assert fixed["fixed_by_construction"] and fixed["interval_rule"] is None
    assert "n=" not in fixed["verdict"], fixed["verdict"]
    assert not measured["fixed_by_construction"] and measured["interval_rule"] is not None
    assert f"n={measured['n']}" in measured["verdict"], measured["verdict"]
    page = out["html"].read_text(encoding="utf-8")
    # the page's n cell: the measured part's own pairs and prompts, none for the fixed one
    assert f'<td class="num">{measured["n"]} <span class="muted">(73 prompts)' in page
    assert '<td class="num">none: not a measurement</td><td class="num">none: not a' in page


def test_a_part_is_skipped_once_and_only_where_it_has_no_estimate(planted: Planted) -> None:
    """Where the calibrated headline was not estimated for a judge, each part it has no
    estimate of gets one skip, with the headline's reason in words (no other estimate's
    id: tests/analyses/test_skips_name_their_estimate.py): a judge named twice among the
    shared skips, or with one part estimated, read a part both made and not made, or
    skipped twice, when every part was skipped per skip of the headline."""
    made = MetricResult("calibrated_rung_human_neither", 0.01, -0.02, 0.04, 0.9, 20, 9,
                        "bca", judge="a")  # fmt: skip
    why = "no pairs holding the judge's own answer"
    shared = PairwiseBias(
        (made,),
        (Skipped(CALIBRATED, "a", why), Skipped(CALIBRATED, "a", "a second reason"),
         Skipped(CALIBRATED, "b", why), Skipped("self_preference_eo", "c", why)),
    )  # fmt: skip
    ctx = Context(OPTIONS, planted.roster)
    _skip_parts(ctx, Input("d", "pairs", planted.pairs, Source("d", "pairs", 1)), shared)
    said = [(k.judge, k.bias.key if k.bias else "", k.said) for k in ctx.skipped]
    keys = [b.key for b in PARTS.values()]
    words = f"the calibrated self-preference it is a part of was not estimated: {why}"
    assert said == [
        ("a", keys[0], f"{keys[0]}: {words}"),
        ("a", keys[2], f"{keys[2]}: {words}"),
        *(("b", k, f"{k}: {words}") for k in keys),
    ]
    assert not any(k.headline for k in ctx.skipped)


def test_a_part_fixed_by_construction_has_no_n_in_report_json(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tie part on LLMBar's MT-Bench pairs (no human tie) is fixed by construction:
    its verdict, the page and print(result) give it no n, but report.json wrote n 51
    (gpt-4's own pairs, none on the tie part) and clusters 73, a measurement's sample
    sizes. Both are null now, as the schema says they are for a fixed value (a fixed
    finding with its own pairs as n fails it); a measured part keeps the finding's
    counts; `recuse gate` reads the report and gates the fixed part on its value."""
    import json

    import jsonschema

    from recuse.cli import main
    from recuse.data.inputs import load_input
    from recuse.driver import AuditOptions
    from recuse.report.export import schema, write_report
    from recuse.roster import Roster

    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    o = AuditOptions(n_boot=200, seed=1, only=("self-preference", "self-preference-ladder"))
    report = run_audit([inp], options=o, roster=Roster.builtin())
    tie = PARTS["calibrated_rung_human_neither"].key
    own = PARTS["calibrated_rung_human_prefers_own"].key
    (m,) = [f for f in report.findings if f.bias.key == own and f.judge == "gpt-4"]
    out = write_report(report, tmp_path / "out")
    found = json.loads(out["json"].read_text(encoding="utf-8"))
    mine = {d["bias"]: d for s in found["sections"] for d in s["findings"]
            if d["judge"] == "gpt-4"}  # fmt: skip
    fixed, measured = mine[tie], mine[own]
    assert fixed["fixed_by_construction"] and (fixed["n"], fixed["clusters"]) == (None, None)
    assert (measured["n"], measured["clusters"]) == (m.n, m.clusters) and m.n > 0
    jsonschema.validate(found, schema(), cls=jsonschema.Draft202012Validator)
    finding = {"$defs": schema()["$defs"], "$ref": "#/$defs/finding"}
    check = jsonschema.Draft202012Validator(finding)
    check.validate(fixed)
    check.validate(measured)
    with pytest.raises(jsonschema.ValidationError, match="is not of type 'null'"):
        check.validate({**fixed, "n": m.n})  # the own pairs as n: what the audit wrote
    code = main(["gate", str(out["json"]), "--max", f"{tie}=0.1", "--max", f"{own}=0.5"])
    said = capsys.readouterr().out
    line = next(t for t in said.splitlines() if t.startswith("PASS: ") and f"{tie} " in t
                and " of gpt-4 " in t)  # fmt: skip
    assert code in (0, 1, 3) and "fixed by construction, not a measurement" in line, said
