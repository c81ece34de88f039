"""The audit on simulated data with planted biases: the summary names exactly those."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recuse.data.inputs import Input
from recuse.driver import AuditOptions, load_input, run_audit
from recuse.errors import ConfigError, DatasetNotFoundError, InputError
from recuse.report import AuditReport, Source, to_dict
from recuse.roster import Entry, Roster
from recuse.simulate.pairs import PlantedBias, simulate_pairs
from recuse.simulate.ratings import simulate_ratings

# verbosity's headline is the prefer-longer gap, planted at verbosity/2 - 2 h (1 - accuracy)
# with h = 0.15 (humans prefer the longer answer): gpt-4 0 - 0.105 = -0.105 (flagged: an
# imperfect judge picks the longer answer less often than humans do), claude-v1
# 0.125 - 0.105 = +0.02 (within noise); claude-v1's planted Eq. 6 (+0.25) is beside it
PLANTED = {
    ("gpt-4", "self_preference_calibrated"),
    ("gpt-4", "verbosity_longer_gap"),
    ("claude-v1", "position"),
    ("j0", "self_bias"),
}
PAYLOAD = "<script>document.title='PWNED'</script>"


def _inputs() -> tuple[list[Input], Roster, Any]:
    sim = simulate_pairs(
        judges={
            "gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65),
            "claude-v1": PlantedBias(verbosity=0.25, position=0.1, accuracy=0.65),
        },
        models=("gpt-4", "gpt-3.5-turbo", "claude-v1", "vicuna-13b", "palm-2"),
        n_prompts=400,
        pairs_per_prompt=3,
        texts=True,
        unparsed_rate=0.03,
        seed=3,
    )
    pairs = sim.pairs.copy()
    pairs["prompt"] = "Say something."
    pairs.loc[0, "response_a"] = PAYLOAD + " " + str(pairs.loc[0, "response_a"])
    ratings = simulate_ratings(
        n_prompts=80,
        self_bias={"j0": 0.15, "j1": 0.0, "j2": 0.0, "j3": 0.0, "j4": 0.0},
        family_bias={"A": 0.0, "B": 0.0},
        seed=2,
    )
    roster = Roster.builtin()
    for j, f in ratings.families.items():
        roster.add(Entry(j, f))
    inputs = [
        Input("sim-pairs", "pairs", pairs, Source("sim-pairs", "pairs", len(pairs),
                   judges=("claude-v1", "gpt-4"))),
        Input("sim-ratings", "ratings", ratings.ratings,
                   Source("sim-ratings", "ratings", len(ratings.ratings),
                          judges=tuple(ratings.families))),
    ]  # fmt: skip
    return inputs, roster, ratings


@pytest.fixture(scope="module")
def planted() -> tuple[AuditReport, list[Input], Any]:
    inputs, roster, ratings = _inputs()
    options = AuditOptions(level=0.95, n_boot=400, seed=0, robustness=())
    return run_audit(inputs, options=options, roster=roster), inputs, ratings


def test_summary_names_the_planted_biases_and_no_others(planted: Any) -> None:
    report, _, _ = planted
    d = to_dict(report)
    flagged = {(r["judge"], f["bias"]) for r in d["summary"] for f in r["findings"]
               if f["significant"]}  # fmt: skip
    assert flagged == PLANTED
    # absent biases are present as findings with intervals covering 0, not left out
    gpt4 = next(r for r in d["summary"] if r["judge"] == "gpt-4")
    assert {f["bias"] for f in gpt4["findings"]} >= {
        "verbosity_longer_gap",
        "position",
        "family_preference_calibrated",
    }


def test_summary_matrix_flags_exactly_the_planted_biases(planted: Any) -> None:
    report, _, _ = planted
    m = to_dict(report)["summary_matrix"]
    assert [r["judge"] for r in m["rows"]] == [r.judge for r in report.summary()]
    flagged = {
        (r["judge"], bias)
        for r in m["rows"]
        for bias, cell in r["cells"].items()
        for e in cell["estimates"]
        if e["significant"]
    }
    assert flagged == PLANTED
    # familiarity (no perplexities), calibration (picks, no probabilities), the probes
    # and self-recognition (no probe table) are named as estimated for nobody
    assert sorted(a["analysis"] for a in m["not_estimated_anywhere"]) == [
        "Calibration",
        "Familiarity (perplexity)",
        "Probes (no labels needed)",
        "Self-recognition (no labels needed)",
    ]
    assert {b["bias"] for b in m["biases"]} >= {b for _, b in PLANTED}


def test_planted_sizes_fall_in_their_intervals(planted: Any) -> None:
    report, _, ratings = planted
    by = {(f.judge, f.bias.key): f for f in report.findings}
    assert (
        by[("gpt-4", "self_preference_eo")].ci_low
        <= 0.3
        <= by[("gpt-4", "self_preference_eo")].ci_high
    )
    assert (
        by[("claude-v1", "verbosity_recall_gap")].ci_low
        <= 0.25
        <= by[("claude-v1", "verbosity_recall_gap")].ci_high
    )
    assert by[("claude-v1", "position")].ci_low <= 0.6 <= by[("claude-v1", "position")].ci_high
    sb = by[("j0", "self_bias")]
    assert sb.ci_low > 0.05 and sb.n == int((ratings.ratings["judge"] == "j0").sum())


#: a pair with one order unparsed: left out of position, which needs both orders (it
#: read "the other order's verdict is used" under the analysis "position", where the
#: pair is not used at all: palm-2's n there is its pairs with both orders)
ONE_ORDER = (
    "one order unparsed or failed: left out of position, which needs both orders (the other "
    "analyses use the other order's verdict)"
)


def test_skips_and_exclusions_are_reported_not_zeroed(planted: Any) -> None:
    report, inputs, _ = planted
    d = to_dict(report)
    fam = [k for k in d["skipped"] if k["analysis"] == "Familiarity (perplexity)"]
    assert fam and "ppl_a" in fam[0]["reason"]
    assert not [f for f in report.findings if f.bias.key == "familiarity"]
    pairs = inputs[0].frame
    for judge in ("gpt-4", "claude-v1"):
        rows = pairs[pairs["judge"] == judge]
        bad = rows["status_first"].eq("unparsed") | rows["status_second"].eq("unparsed")
        expected = {
            "verdict unparsed or failed in every judged order": int(
                (bad & rows["p_a"].isna()).sum()
            ),
            ONE_ORDER: int((bad & rows["p_a"].notna()).sum()),
            "human tie": int(((rows["human"] == 0.5) & rows["p_a"].notna()).sum()),
        }
        got = {e.reason: e.count for e in report.exclusions if e.judge == judge}
        for reason, count in expected.items():
            assert got.get(reason, 0) == count
        assert expected[ONE_ORDER] > 0
        # and so it is: position's n counts the pairs judged in both orders only
        (pos,) = [f for f in report.findings if f.judge == judge and f.bias.key == "position"]
        assert pos.n == int((rows["p_a_first"].notna() & rows["p_a_second"].notna()).sum())
        assert pos.n == int(rows["p_a"].notna().sum()) - expected[ONE_ORDER]
        assert expected["human tie"] > 0
    # every number of the summary is in the JSON, and the tables are tidy frames
    assert d["tables"]["favoritism-sim-ratings"]["rows"]
    assert d["provenance"]["seed"] == 0 and d["provenance"]["options"]["level"] == 0.95


def test_human_only_and_ratings_inputs_skip_what_they_cannot_support(planted: Any) -> None:
    _, inputs, _ = planted
    human_only = inputs[0].frame.drop_duplicates("item_id").assign(
        judge=None, p_a_first=float("nan"), p_a_second=float("nan"), p_a=float("nan"),
        status_first=None, status_second=None,
    )  # fmt: skip
    inp = Input("humans", "pairs", human_only, Source("humans", "pairs", len(human_only)))
    report = run_audit([inp], options=AuditOptions(n_boot=200))
    assert report.findings == []
    reasons = {k.analysis: k.reason for k in report.skipped}
    assert "no judge verdicts" in reasons["Self-preference"]
    assert "ratings" in reasons["Favoritism regression (ratings)"]


FAM = "Familiarity (perplexity)"
FAM_OPTIONS = AuditOptions(n_boot=200, seed=0, min_n=10, level=0.9)
FAM_BOOT = {"boot": FAM_OPTIONS.resampling, "min_n": 10}


def _familiar(judges: dict[str, Any]) -> tuple[AuditReport, Any]:
    """The audit of a simulated pairs table with familiarity planted in its judges."""
    from recuse.simulate.familiarity import simulate_familiarity

    sim = simulate_familiarity(judges, human_slope=-0.5, n_prompts=150, seed=3)
    roster = Roster.builtin()
    for name in {*sim.pairs["model_a"], *sim.pairs["model_b"], *judges}:
        roster.add(Entry(str(name), str(name)))
    inp = Input(
        "fam", "pairs", sim.pairs, Source("fam", "pairs", len(sim.pairs), judges=tuple(judges))
    )
    return run_audit([inp], options=FAM_OPTIONS, roster=roster), sim


def _fam_section(report: AuditReport) -> Any:
    (section,) = [s for s in report.sections if s.id == "familiarity"]
    return section


def test_familiarity_runs_when_perplexities_are_present() -> None:
    from recuse.metrics.familiarity import perplexity_curve
    from recuse.simulate.familiarity import PlantedFamiliarity

    report, sim = _familiar({"j": PlantedFamiliarity(judge_slope=-1.5)})
    (f,) = [f for f in report.findings if f.bias.key == "familiarity"]
    assert f.judge == "j" and f.significant and f.ci_low <= sim.true_value("j") <= f.ci_high
    assert f.verdict.startswith("prefers low-perplexity")
    # Figure 3 is drawn; Figures 4 and 5 need the judge's own answers, which "j" has none of
    section = _fam_section(report)
    tables = {t.name: t.frame for t in section.tables}
    assert set(tables) == {"perplexity-curve-fam"}
    from recuse.metrics.verbosity import for_files

    direct = perplexity_curve(sim.pairs, judge="j", **FAM_BOOT)  # its open edges empty:
    pd.testing.assert_frame_equal(tables["perplexity-curve-fam"], for_files(direct))
    assert {g.id for g in section.figures} == {"coef-familiarity-bias-fam", "ppl-curve-fam-j"}
    why = {k.reason.split(":")[0]: k for k in report.skipped if k.analysis == FAM}
    assert set(why) == {
        "perplexity curve by own response (Figure 4)",
        "own vs others' log-perplexity (Figure 5)",
    }
    assert all(k.judge == "j" and not k.headline for k in why.values())
    assert "own response" in why["perplexity curve by own response (Figure 4)"].reason
    assert "never the judge itself" in why["own vs others' log-perplexity (Figure 5)"].reason
    # figure skips are not listed as missing estimates in the one-screen summary
    (row,) = [r for r in report.summary() if r.judge == "j"]
    assert not [m for m in row.not_estimated if m.analysis == FAM]


def test_familiarity_curves_equal_the_metric_functions() -> None:
    from recuse.metrics.familiarity import (
        log_perplexity_by_model,
        own_perplexity_gap,
        perplexity_curve,
        perplexity_curve_by_self,
    )
    from recuse.metrics.verbosity import for_files
    from recuse.simulate.familiarity import PlantedFamiliarity

    report, sim = _familiar({"m1": PlantedFamiliarity(judge_slope=-1.5, own_gap=-0.4)})
    section = _fam_section(report)
    tables = {t.name: t.frame for t in section.tables}
    pairs = sim.pairs
    for name, fn in (
        ("perplexity-curve-fam", perplexity_curve),
        ("perplexity-curve-by-self-fam", perplexity_curve_by_self),
        ("log-perplexity-by-model-fam", log_perplexity_by_model),
    ):
        # the tables as their files write them: the open bins' edges empty
        pd.testing.assert_frame_equal(tables[name], for_files(fn(pairs, judge="m1", **FAM_BOOT)))
    (gap,), skipped = own_perplexity_gap(pairs, judge="m1", **FAM_BOOT)
    assert not skipped
    (row,) = tables["own-perplexity-gap-fam"].to_dict("records")
    assert (row["estimate"], row["ci_low"], row["ci_high"], row["n"]) == (
        gap.estimate, gap.ci_low, gap.ci_high, gap.n,
    )  # fmt: skip
    assert row["mean_log_ppl_own"] == gap.components["mean_log_ppl_own"]
    # the planted truths show: own answers more familiar (own_gap -0.4) ...
    assert gap.ci_high < 0 and row["mean_log_ppl_own"] < row["mean_log_ppl_other"]
    # ... and the judge's win rate falls with d (slope -1.5) much faster than the humans' (-0.5)
    curve = tables["perplexity-curve-fam"]
    judge, human = (curve[curve["rater"] == r] for r in ("judge", "human"))
    drop = {k: float(v["mean"].iloc[0] - v["mean"].iloc[-1]) for k, v in (("j", judge),
                                                                         ("h", human))}  # fmt: skip
    assert drop["j"] > drop["h"] + 0.3
    assert judge["n"].sum() == human["n"].sum() == len(pairs)  # every pair in one bin
    # own pairs are oriented own-first: per bin, n own + n other <= all pairs
    split = tables["perplexity-curve-by-self-fam"]
    own = split[(split["subset"] == "own") & (split["rater"] == "judge")]
    other = split[(split["subset"] == "other") & (split["rater"] == "judge")]
    n_own = int((pairs["model_a"].eq("m1") | pairs["model_b"].eq("m1")).sum())
    assert own["n"].sum() == n_own and other["n"].sum() == len(pairs) - n_own
    assert {g.id for g in section.figures} == {
        "coef-familiarity-bias-fam", "ppl-curve-fam-m1", "ppl-curve-self-fam-m1",
        "ppl-by-model-fam-m1",
    }  # fmt: skip
    assert not [k for k in report.skipped if k.analysis == FAM]
    # the note writes the gap as every table does (U+2212), not with an ASCII hyphen
    assert any("gap \u22120.3" in n or "gap \u22120.4" in n for n in section.notes)


def test_constant_perplexities_are_skipped_not_zeroed(planted: Any) -> None:
    _, inputs, _ = planted
    frame = inputs[0].frame.assign(ppl_a=3.0, ppl_b=4.0)
    inp = replace_frame(inputs[0], frame)
    report = run_audit([inp], options=AuditOptions(n_boot=200), roster=Roster.builtin())
    assert not [f for f in report.findings if f.bias.key == "familiarity"]
    fam = [k for k in report.skipped if k.analysis == "Familiarity (perplexity)"]
    assert fam and all(k.reason.startswith("familiarity_bias:") for k in fam)


def replace_frame(inp: Input, frame: pd.DataFrame) -> Input:
    from dataclasses import replace

    return replace(inp, frame=frame)


def test_unknown_judge_and_bad_options_are_clear_errors(planted: Any) -> None:
    _, inputs, _ = planted
    with pytest.raises(ConfigError, match="judges present"):
        run_audit(inputs[:1], options=AuditOptions(judges=("nobody",)))
    with pytest.raises(ConfigError, match="level"):
        run_audit(inputs[:1], options=AuditOptions(level=1.5))
    with pytest.raises(InputError, match="nothing to audit"):
        run_audit([])


def test_load_input_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="known datasets"):
        load_input("no-such-dataset")
    with pytest.raises(InputError, match="missing required column"):
        load_input(Path(__file__).parent / "malformed" / "pairs_missing_column.csv")
    with pytest.raises(InputError, match="not found"):
        load_input(tmp_path / "absent.csv")


def test_ratings_file_is_recognised(tmp_path: Path) -> None:
    sim = simulate_ratings(n_prompts=10, seed=0)
    path = tmp_path / "r.csv"
    sim.ratings.to_csv(path, index=False)
    inp = load_input(path, unknown_models="keep")
    assert inp.table == "ratings" and inp.source.rows == len(sim.ratings)


def test_judge_filter_keeps_one_judge(planted: Any) -> None:
    _, inputs, _ = planted
    report = run_audit(inputs[:1], options=AuditOptions(judges=("gpt-4",), n_boot=200),
                       roster=Roster.builtin())  # fmt: skip
    assert {f.judge for f in report.findings} == {"gpt-4"}
    # the roster's aliases and another case name the same judge, as in `recuse metrics`:
    # its position finding (claude-v1's, planted 0.1 off, differs; the whole audit once a
    # name took most of this test's time)
    position = [f.estimate for f in report.findings if f.section == "position"]
    assert position
    for name in ("GPT-4", "gpt4", " Gpt-4 "):
        only = AuditOptions(judges=(name,), n_boot=200, only=("position",))
        again = run_audit(inputs[:1], options=only, roster=Roster.builtin())
        assert [f.estimate for f in again.findings] == position
    # another snapshot of the line is another model, never read as this one
    with pytest.raises(ConfigError, match="'gpt-4-0613' is not in the data"):
        run_audit(inputs[:1], options=AuditOptions(judges=("gpt-4-0613",)),
                  roster=Roster.builtin())  # fmt: skip


def test_judge_filter_resamples_the_whole_table_as_metrics_pairs_does(planted: Any) -> None:
    """``recuse audit --judge gpt-4`` dropped the rows with a human label and no judge
    before its shared bootstrap, which ``recuse metrics pairs --judge gpt-4`` resamples
    (their prompts are drawn too): the same judge's position and verbosity intervals
    differed between the two from the same seed (on llmbar-mtbench with 60 such rows,
    GPT-4's first-position rate read [0.485, 0.536] against [0.491, 0.542]). The audit
    resamples the whole table now; the estimates were and are the same."""
    from dataclasses import replace

    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.summary import pairwise_bias

    _, inputs, _ = planted
    table = inputs[0].frame
    humans = (
        table[table["judge"] == "gpt-4"]
        .head(90)
        .assign(judge=None, p_a=float("nan"), p_a_first=float("nan"), p_a_second=float("nan"))
    )
    humans["prompt_id"] = [f"human-only-{i}" for i in range(len(humans))]
    whole = pd.concat([table, humans], ignore_index=True)
    options = AuditOptions(judges=("gpt-4",), n_boot=200, seed=1, only=("position", "verbosity"))
    report = run_audit([replace(inputs[0], frame=whole)], options=options, roster=Roster.builtin())
    got = {f.bias.key: (f.estimate, f.ci_low, f.ci_high) for f in report.findings}
    metrics = {"position": "first_position_rate", "verbosity_longer_gap": "verbosity_longer_gap"}
    boot = Resampling(n_boot=200, seed=1)
    direct = pairwise_bias(whole, Roster.builtin(), judges=["gpt-4"],
                           metrics=list(metrics.values()), boot=boot)  # fmt: skip
    for bias, metric in metrics.items():
        r = direct.get(metric, "gpt-4")
        assert got[bias] == pytest.approx((r.estimate, r.ci_low, r.ci_high), abs=1e-12), bias


def test_judge_filter_reports_the_whole_favoritism_fit() -> None:
    """``recuse audit play-favorites --judge gpt-4o`` fitted the regression on gpt-4o's
    ratings alone: γ +0.032 [0.024, 0.040] where the whole audit and ``recuse
    favoritism`` read +0.031 [0.023, 0.039], and λ +0.023 "pooled over the gpt family's
    judges" from one judge. The fit holds every judge's ratings now (its dimension
    effects and a family's λ are shared); --judge picks the findings reported."""
    from recuse.regression import fit_favoritism

    inputs, roster, _ = _inputs()
    ratings = inputs[1]
    options = {"n_boot": 200, "robustness": (), "only": ("favoritism",)}
    whole = run_audit([ratings], options=AuditOptions(**options), roster=roster)
    one = run_audit([ratings], options=AuditOptions(judges=("j1",), **options), roster=roster)
    fit = fit_favoritism(ratings.frame, roster)

    def found(report: AuditReport) -> dict[tuple[str, str], tuple[float, float, float, int]]:
        return {(f.judge, f.bias.key): (f.estimate, f.ci_low, f.ci_high, f.n)
                for f in report.findings}  # fmt: skip

    got, every = found(one), found(whole)
    assert set(got) == {("j1", "self_bias"), ("j1", "family_bias")}
    for key, value in got.items():
        assert value == pytest.approx(every[key], abs=1e-12), key
    sb = fit.self_bias().set_index("judge")
    assert got["j1", "self_bias"][:3] == pytest.approx(
        tuple(sb.loc["j1", ["estimate", "lower", "upper"]]), abs=1e-12
    )


def test_judge_filter_keeps_a_judges_agreement_interval(planted: Any) -> None:
    """The agreement analysis bootstrapped the prompts of the chosen judges' rows only:
    a judge that did not judge every prompt read another interval with ``--judge`` than
    in the whole audit (o1-mini on judgebench: accuracy [0.741, 0.801] against [0.741,
    0.800]). It resamples every judge's prompts now, as the whole audit does."""
    from dataclasses import replace

    _, inputs, _ = planted
    table = inputs[0].frame
    prompts = sorted(table["prompt_id"].unique())[:40]
    fewer = table[~((table["judge"] == "claude-v1") & table["prompt_id"].isin(prompts))]
    inp = replace(inputs[0], frame=fewer.reset_index(drop=True))
    kw = {"n_boot": 200, "seed": 2, "only": ("agreement",)}

    def agreement(judges: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
        o = AuditOptions(judges=judges, **kw)  # type: ignore[arg-type]
        report = run_audit([inp], options=o, roster=Roster.builtin())
        return {f.bias.key: (f.estimate, f.ci_low, f.ci_high)
                for f in report.findings if f.judge == "claude-v1"}  # fmt: skip

    every, one = agreement(()), agreement(("claude-v1",))
    assert set(every) == {"agreement_accuracy", "agreement_kappa"}
    for key in every:
        assert one[key] == pytest.approx(every[key], abs=1e-12), key


def test_judge_filter_keeps_a_judges_brier_interval() -> None:
    """The calibration analysis bootstrapped the Brier scores over the chosen judges'
    prompts only: a judge missing some prompts read another interval with ``--judge``
    (qwen's Brier [0.2363, 0.2477] against [0.2375, 0.2489] in the whole audit, on the
    MT-Bench familiarity example's pairs with its first 8 prompts left out for qwen). It
    resamples the prompts of every judge that gives probabilities now."""
    from dataclasses import replace

    inp = load_input(Path(__file__).parents[1] / "examples/output/familiarity_mtbench_pairs.csv")
    qwen = "qwen2.5-coder-0.5b-instruct"
    table = inp.frame
    left = table["prompt_id"].isin(sorted(table["prompt_id"].unique())[:8])
    inp = replace(inp, frame=table[~(left & (table["judge"] == qwen))].reset_index(drop=True))

    def calibration(judges: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
        o = AuditOptions(judges=judges, n_boot=200, seed=1, only=("calibration",))
        report = run_audit([inp], options=o, roster=Roster.builtin())
        return {f.bias.key: (f.estimate, f.ci_low, f.ci_high)
                for f in report.findings if f.judge == qwen}  # fmt: skip

    every, one = calibration(()), calibration((qwen,))
    assert "calibration_brier" in every and set(one) == set(every)
    for key in every:
        assert one[key] == pytest.approx(every[key], abs=1e-12), key


GOLDEN = Path(__file__).parent / "golden" / "audit_planted_summary.json"
CI = ("ci_low", "ci_high")


def _golden_view(report: AuditReport) -> dict[str, Any]:
    """The JSON summary reduced to what must not drift: per judge, each finding's bias,
    dataset, n, flag and rounded estimate and interval, and the not-estimated reasons."""

    def finding(f: dict[str, Any]) -> dict[str, Any]:
        keep = {k: f[k] for k in ("bias", "dataset", "n", "significant")}
        est = round(float(f["estimate"]), 3)
        return keep | {"estimate": est, "ci": [round(float(f[k]), 3) for k in CI]}

    rows = {}
    for row in to_dict(report)["summary"]:
        findings = sorted(map(finding, row["findings"]), key=lambda f: (f["bias"], f["dataset"]))
        reasons = sorted(x["reason"] for x in row["not_estimated"])
        rows[row["judge"]] = {"findings": findings, "not_estimated": reasons}
    return rows


def test_summary_json_matches_the_golden_file(planted: Any) -> None:
    """Golden test: the planted-bias audit's JSON summary, numbers rounded to 3 places
    (compared within 2e-3 so a last-digit rounding flip on another BLAS does not fail).
    Regenerate deliberately with RECUSE_UPDATE_GOLDEN=1 and review the diff."""
    import json
    import os

    got = _golden_view(planted[0])
    if os.environ.get("RECUSE_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", "utf-8")
    want = json.loads(GOLDEN.read_text("utf-8"))
    assert sorted(got) == sorted(want)
    for judge, expected in want.items():
        g = got[judge]
        assert g["not_estimated"] == expected["not_estimated"], judge
        assert len(g["findings"]) == len(expected["findings"]), judge
        for a, b in zip(g["findings"], expected["findings"], strict=True):
            assert {k: a[k] for k in ("bias", "dataset", "n", "significant")} == {
                k: b[k] for k in ("bias", "dataset", "n", "significant")
            }, judge
            assert a["estimate"] == pytest.approx(b["estimate"], abs=2e-3), (judge, a["bias"])
            assert a["ci"] == pytest.approx(b["ci"], abs=2e-3), (judge, a["bias"])
    # the golden file itself flags exactly the planted biases
    flagged = {(j, f["bias"]) for j, v in want.items() for f in v["findings"] if f["significant"]}
    assert flagged == PLANTED


def test_a_dataset_whose_label_is_not_human_says_so(shared_data: Path, planted: Any) -> None:
    """JudgeBench's label is correctness: the report tells the reader how to read 'human'."""
    jb = load_input("judgebench", data_dir=shared_data)
    assert jb.source.label.startswith("objective correctness")
    assert load_input("mt-bench-human", data_dir=shared_data).source.label == "human preference"
    few = jb.frame[jb.frame["judge"] == jb.frame["judge"].iloc[0]].head(60)
    report = run_audit([replace_frame(jb, few)], options=AuditOptions(n_boot=100))
    (note,) = [n for n in report.notes if "judgebench" in n]
    assert "objective correctness" in note and "not a human judgment" in note
    assert to_dict(report)["provenance"]["sources"][0]["label"] == jb.source.label
    # files of unknown provenance (the planted simulation) get no such note
    assert not [n for n in planted[0].notes if "reference label" in n]


def test_report_carries_the_correction(planted: Any) -> None:
    """The debiased-score table is debias_effect on the audit's own fit; the planted
    self-bias of j0 (0.15 on its own completions, 1 of 5 judges) comes out of its mean."""
    from recuse.mitigation import debias_effect
    from recuse.regression import fit_favoritism

    report, _inputs, ratings = planted
    (table,) = [t for t in report.tables if t.name.startswith("debiased")]
    roster = Roster.builtin()
    for j, f in ratings.families.items():
        roster.add(Entry(j, f))
    res = fit_favoritism(ratings.ratings, roster, level=0.95)
    direct = debias_effect(ratings.ratings, res, roster)
    pd.testing.assert_frame_equal(table.frame.reset_index(drop=True), direct.table)
    j0 = direct.table.set_index("model").loc["j0"]
    assert j0["change"] == pytest.approx(-0.15 / 5, abs=0.015)
    (note,) = [n for s in report.sections for n in s.notes if "debiasing subtracts" in n]
    assert f"{direct.rank_correlation_after:.2f}" in note


def test_two_inputs_with_the_same_name_are_told_apart(tmp_path: Path) -> None:
    """Two files both called pairs.csv (different folders) used to share the dataset
    name: their findings were indistinguishable in the summary, the second input's
    figures pooled both inputs' findings, and the HTML had duplicate figure ids."""
    sim = simulate_pairs(n_prompts=60, seed=5).pairs
    flipped = sim.copy()
    for c in ("p_a_first", "p_a_second", "p_a"):
        flipped[c] = 1 - flipped[c]
    paths = []
    for folder, frame in (("first", sim), ("second", flipped)):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "pairs.csv")
        frame.to_csv(paths[-1], index=False)
    roster = Roster.builtin()
    inputs = [load_input(str(p), roster=roster) for p in (*paths, paths[0])]
    report = run_audit(inputs, options=AuditOptions(n_boot=100, robustness=()), roster=roster)
    names = [s.name for s in report.provenance.sources]
    assert len(set(names)) == 3, names
    assert names == ["first/pairs.csv", "second/pairs.csv", "first/pairs.csv (2)"]
    position = [f for f in report.findings if f.bias.key == "position" and f.judge == "gpt-4"]
    assert sorted(f.dataset for f in position) == sorted(names)
    for s in report.sections:
        ids = [f.id for f in s.figures]
        assert len(ids) == len(set(ids)), (s.id, ids)


def test_each_csv_row_is_named_by_its_report_json_key(planted: Any, tmp_path: Path) -> None:
    """The estimates tables name each row by its estimator (``metric``: verbosity_bias,
    family_preference_eo, first_position_rate) and by the key its finding has in
    report.json (``bias``: verbosity_recall_gap, family_preference_eo, position); a row is
    matched to its finding by dataset, judge and estimate, read back from the files."""
    import json

    from recuse.report.export import write_json, write_tables

    report = planted[0]
    paths = write_tables(report, tmp_path / "tables")
    data = json.loads(write_json(report, tmp_path / "report.json").read_text("utf-8"))
    findings = {
        (f["dataset"], f["judge"], f["bias"]): f["estimate"]
        for s in data["sections"]
        for f in s["findings"]
    }
    named: dict[str, str] = {}
    matched = set()
    for path in paths:
        frame = pd.read_csv(path, keep_default_na=False)
        if "metric" in frame.columns:
            assert "bias" in frame.columns, path.name  # every metric row says its key
        if "bias" not in frame.columns:
            continue
        for row in frame.itertuples():
            if not row.bias:
                continue
            key = (getattr(row, "dataset", "sim-pairs"), row.judge, row.bias)
            assert key in findings, (path.name, key)
            assert float(row.estimate) == pytest.approx(findings[key], rel=1e-12), key
            matched.add(key)
            if "metric" in frame.columns:
                named[row.metric] = row.bias
    # the ids that differ from their keys, mapped (and the family EO's, its key since it
    # was `family_preference`); every pairwise finding has its row
    assert {m: named[m] for m in ("verbosity_bias", "family_preference_eo",
                                  "first_position_rate", "agreement_alpha_ordinal")} == {
        "verbosity_bias": "verbosity_recall_gap",
        "family_preference_eo": "family_preference_eo",
        "first_position_rate": "position",
        "agreement_alpha_ordinal": "agreement_alpha",
    }  # fmt: skip
    pairwise = {k for k in findings if k[0] == "sim-pairs" and not k[2].startswith("bt_")}
    pairwise -= {k for k in pairwise if k[2].startswith("certified")}
    assert pairwise <= matched, sorted(pairwise - matched)


def test_the_analyses_run_on_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit's analyses run on one BLAS thread whatever the caller's setting
    (:func:`recuse.driver.run_audit`: on a shared 2-core machine the demo audit
    took 31.8 s on two and 18.3 s on one), and the caller's setting is back after it."""
    from threadpoolctl import threadpool_info, threadpool_limits

    import recuse.driver as driver

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    seen: list[set[int]] = []
    audit_input = driver._audit_input

    def spied(*args: Any, **kwargs: Any) -> None:
        seen.append(blas_threads())
        audit_input(*args, **kwargs)

    monkeypatch.setattr(driver, "_audit_input", spied)
    sim = simulate_pairs(n_prompts=30, seed=1).pairs
    inputs = [Input("sim", "pairs", sim, Source("sim", "pairs", len(sim)))]
    options = AuditOptions(n_boot=100, only=("position",))
    with threadpool_limits(limits=2, user_api="blas"):
        run_audit(inputs, options=options)
        assert blas_threads() == {2}
    assert seen == [{1}]


def test_judge_filter_writes_no_table_of_the_judges_not_chosen() -> None:
    """With ``--judge`` on ratings, the fit holds every judge's ratings (above), and its
    tables were written whole: ``recuse audit play-favorites --judge gpt-4o`` wrote the
    32 coefficients of all 9 judges (claude-2.1's γ_j and its p among them), the 308
    robustness rows of every judge and family, the 81-cell score matrix and a correction
    table subtracting every judge's biases from every judge's ratings — where before
    the merge of 7dd88328 each held gpt-4o's alone (5 coefficients, 41 robustness rows,
    9 cells). Now each table holds the chosen judge's rows and its family's, as in the
    whole audit, and the shared terms; the correction is its ratings' with its γ̂ and
    its family's λ̂ (the whole fit's) taken out."""
    from recuse.regression import fit_favoritism

    inputs, roster, sim = _inputs()
    ratings = inputs[1]
    options = {"n_boot": 200, "robustness": ("length",), "only": ("favoritism",)}
    whole = run_audit([ratings], options=AuditOptions(**options), roster=roster)
    one = run_audit([ratings], options=AuditOptions(judges=("j1",), **options), roster=roster)
    family = sim.families["j1"]
    others = sorted(set(sim.families) - {"j1"})
    other_families = sorted(set(sim.families.values()) - {family})
    assert others and other_families

    def table(report: AuditReport, start: str) -> pd.DataFrame:
        (found,) = [t.frame for t in report.tables if t.name.startswith(start)]
        return found.reset_index(drop=True)

    # the coefficients: j1's intercept, slope and γ, its family's λ, the shared terms
    words = table(one, "favoritism").iloc[:, 0].astype(str)
    every = table(whole, "favoritism")
    named = [w for w in words if any(f"judge {j}" in w for j in others)]
    named += [w for w in words if any(f"family {f} " in w for f in other_families)]
    assert named == []
    theirs = [*(f"judge {j}(?: |$)" for j in others), *(f"family {f} " for f in other_families)]
    mine = every[~every.iloc[:, 0].astype(str).str.contains("|".join(theirs))]
    mine = mine.reset_index(drop=True)
    assert len(mine) < len(every)
    pd.testing.assert_frame_equal(table(one, "favoritism"), mine)
    # the robustness rows: j1's γ and its family's λ under each variant, as in the whole
    rob, rob_every = table(one, "robustness"), table(whole, "robustness")
    assert set(rob["label"]) == {"j1", family}
    pd.testing.assert_frame_equal(
        rob, rob_every[rob_every["label"].isin(["j1", family])].reset_index(drop=True)
    )
    # the score matrix: j1's row
    cells, cells_every = table(one, "score-matrix"), table(whole, "score-matrix")
    assert set(cells["judge"]) == {"j1"}
    pd.testing.assert_frame_equal(
        cells, cells_every[cells_every["judge"] == "j1"].reset_index(drop=True)
    )
    # the correction: j1's ratings less the whole fit's γ̂_j1 of its own model's answers
    # and λ̂_F of its family's other models; the other models' means unchanged
    fit = fit_favoritism(ratings.frame, roster)
    gamma = fit.self_bias().set_index("judge").loc["j1", "estimate"]
    lam = fit.family_bias().set_index("family").loc[family, "estimate"]
    change = table(one, "debiased").set_index("model")["change"]
    expected = {
        m: -gamma if m == "j1" else -lam if sim.families.get(m) == family else 0.0
        for m in change.index
    }
    assert change.to_dict() == pytest.approx(expected, abs=1e-12)


def test_judge_filter_writes_no_note_of_the_judges_not_chosen() -> None:
    """The fit's notes on a judge's terms (``self-bias of j0 not estimable: it rates only
    its own completions``, a term without a standard error, one the correction does not
    subtract) were written for every judge of the whole fit under --judge too. With
    j0 rating only its own model's answers, the whole audit says so of j0; ``--judge
    j1`` says nothing of j0, and its correction names no term of j0."""
    inputs, roster, _ = _inputs()
    ratings = inputs[1]
    frame = ratings.frame
    frame = frame[(frame["judge"] != "j0") | (frame["model"] == "j0")].reset_index(drop=True)
    ratings = Input(ratings.name, "ratings", frame, ratings.source)
    options = {"n_boot": 200, "robustness": (), "only": ("favoritism",)}

    def notes(judges: tuple[str, ...]) -> list[str]:
        report = run_audit([ratings], options=AuditOptions(judges=judges, **options), roster=roster)
        return [n for s in report.sections for n in s.notes]

    whole, one = notes(()), notes(("j1",))
    assert any(n.endswith("self-bias of j0 not estimable: it rates only its own completions")
               for n in whole)  # fmt: skip
    assert [n for n in one if "j0" in n] == []
    assert any("debiasing subtracts" in n for n in one)


@pytest.mark.parametrize("caller_holds_a_limit", [True, False])
def test_audits_in_two_threads_leave_blas_its_threads(caller_holds_a_limit: bool) -> None:
    """Two audits run at once in threads, the second entering while the first runs
    and leaving after it: each runs on one BLAS thread and BLAS has its threads back
    afterwards. Before, each kept its own ``threadpool_limits``: the second saved the
    first's 1 and put it back last, so every BLAS call of the process ran on one thread
    from then on (fails: {1} after); and with the main thread inside its own
    ``threadpool_limits``, threadpoolctl 3.8 ignored the audits' threads' limit (fails:
    {2} inside)."""
    import contextlib
    import threading

    import threadpoolctl
    from threadpoolctl import threadpool_info, threadpool_limits

    import recuse.driver as driver

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    audit_input = driver._audit_input
    sim = simulate_pairs(n_prompts=30, seed=1).pairs
    inputs = [Input("sim", "pairs", sim, Source("sim", "pairs", len(sim)))]
    options = AuditOptions(n_boot=100, only=("position",))
    seen: dict[str, set[int]] = {}

    def first() -> None:
        def held(*args: Any, **kwargs: Any) -> None:
            first_in.set()
            second_in.wait(60)
            audit_input(*args, **kwargs)

        driver_run(held)
        first_out.set()

    def second() -> None:
        first_in.wait(60)

        def held(*args: Any, **kwargs: Any) -> None:
            second_in.set()
            first_out.wait(60)
            seen["second, the first done"] = blas_threads()
            audit_input(*args, **kwargs)

        driver_run(held)

    calls: dict[int, Any] = {}

    def by_thread(*args: Any, **kwargs: Any) -> None:
        calls[threading.get_ident()](*args, **kwargs)

    def driver_run(held: Any) -> None:
        calls[threading.get_ident()] = held
        run_audit(inputs, options=options)

    if caller_holds_a_limit:  # the main thread inside its own limit
        held: Any = threadpool_limits(limits=2, user_api="blas")
    else:  # two threads set, and no thread holding them (a fresh process's case)
        set_once = threadpool_limits(limits=2, user_api="blas")
        held = contextlib.ExitStack()
        held.callback(set_once.restore_original_limits)
        clear = getattr(threadpoolctl, "OpenBLASController", None)
        if clear is not None:
            clear.clear_controlling_thread(force=True)
    with held, pytest.MonkeyPatch.context() as mp:
        before = blas_threads()
        mp.setattr(driver, "_audit_input", by_thread)
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert (seen, blas_threads()) == ({"second, the first done": {1}}, before)


@pytest.mark.parametrize("landing", [2, 3], ids=["setting the limit", "putting it back"])
def test_a_ctrl_c_in_the_blas_limit_leaves_blas_its_threads(
    landing: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt (Ctrl-C in a notebook) raised as one_blas_thread sets its
    limit (after the limit is set, before the caller is counted) or as it puts the
    threads back (``landing``: the call of ``_release_openblas`` that raises) leaves
    BLAS the caller's threads, and a later audit saves those. Before, the limiter was
    kept with no caller counted: BLAS stayed on one thread, and the next block saved 1
    as the threads to put back (fails on the old code: {1} after, both cases)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from recuse.metrics import bootstrap

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    release = bootstrap._release_openblas
    calls = [0]

    def interrupted() -> None:
        calls[0] += 1
        if calls[0] == landing:
            raise KeyboardInterrupt
        release()

    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == {2}
        with monkeypatch.context() as mp:
            mp.setattr(bootstrap, "_release_openblas", interrupted)
            with pytest.raises(KeyboardInterrupt), bootstrap.one_blas_thread():
                assert blas_threads() == {1}
        assert calls[0] >= landing
        assert blas_threads() == {2}
        with bootstrap.one_blas_thread():
            assert blas_threads() == {1}
        assert blas_threads() == {2}


def test_a_label_of_evenly_split_votes_is_excluded_under_its_own_name() -> None:
    """Where a human label is the share of several votes (``human_votes`` > 1), the
    exclusion of the labels 0.5 says "tied or evenly split votes", with pandas' count of
    the judged rows at 0.5; the same table with single votes keeps "human tie"."""
    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(accuracy=0.7)},
        models=("gpt-4", "claude-v1", "vicuna-13b"),
        n_prompts=60,
        seed=5,
    )
    pairs = sim.pairs.copy()
    pairs.loc[pairs.index[::7], "human"] = 0.5
    tied = int(((pairs["human"] == 0.5) & pairs["p_a"].notna()).sum())
    assert tied > 0
    split_name = "human label 0.5 (tied or evenly split votes)"
    options = AuditOptions(n_boot=100, only=("verbosity",))
    for votes, name in ((1, "human tie"), (2, split_name)):
        frame = pairs.assign(human_votes=votes)
        src = Source("votes", "pairs", len(frame), judges=("gpt-4",))
        report = run_audit([Input("votes", "pairs", frame, src)], options=options)
        got = {e.reason: e.count for e in report.exclusions}
        assert got.get(name) == tied
        assert (split_name if votes == 1 else "human tie") not in got


def test_profile_gives_no_line_that_prints_as_no_time() -> None:
    """``--profile``'s lines for an analysis's build (``_time_the_rest``), by hand: one
    timing no step gets a line of its whole build (0.3 s) unless it prints as 0.00 s
    (0.004 s: counted, no line); one whose steps took 0.19 of 0.2 s adds 0.01 s without a
    line (under ``REST_LINE_S``), 0.5 of 1.0 s with one; steps longer than the build
    (0.2 of 0.1 s) add nothing, never a negative rest. The per-analysis list leaves out
    an analysis of 0.004 s and keeps one of 0.006 s (0.01 s). (Before: ``0.00 s
    Family preference`` and ``0.00 s ... (agreement)`` lines of a quick audit.)"""
    from types import SimpleNamespace

    from recuse.analyses.base import Context
    from recuse.analyses.certification import ANALYSIS as A
    from recuse.driver import REST_LINE_S, _time_the_rest, profile_lines

    ctx = Context(AuditOptions(), Roster.load())
    _time_the_rest(ctx, A, "t.csv", 0.004, 0.0)
    assert ctx.timings == [] and ctx.part(A).seconds == pytest.approx(0.004)
    _time_the_rest(ctx, A, "t.csv", 0.3, 0.0)
    assert ctx.timings == [(f"{A.title} (t.csv)", pytest.approx(0.3))]
    _time_the_rest(ctx, A, "t.csv", 0.2, 0.19)
    _time_the_rest(ctx, A, "t.csv", 0.1, 0.2)
    assert len(ctx.timings) == 1 and ctx.part(A).seconds == pytest.approx(0.314)
    assert 0.01 < REST_LINE_S < 0.5
    _time_the_rest(ctx, A, "t.csv", 1.0, 0.5)
    assert ctx.timings[1] == (f"{A.title}: the rest, outside the steps above (t.csv)", 0.5)
    sections = [SimpleNamespace(seconds=s, title=t, id=t.lower()) for s, t in
                [(0.004, "Quick"), (0.006, "Less quick"), (None, "Untimed")]]  # fmt: skip
    lines = profile_lines(SimpleNamespace(timings=(), sections=sections))  # type: ignore[arg-type]
    assert lines[1:] == [
        "per analysis (its whole build and its share of the shared bootstrap):",
        "    0.01 s  Less quick (less quick)",
    ]
