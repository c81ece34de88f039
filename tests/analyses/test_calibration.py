"""Calibration in the audit: ECE/Brier findings equal the metric functions on the
raw and the cross-fitted recalibrated probabilities; picks-only judges are skipped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses.conftest import BOOT, _input
from recuse.analyses.base import NUMBER_COLUMNS
from recuse.analyses.calibration import ANALYSIS, BRIER, ECE, ECE_ISOTONIC, ECE_PLATT
from recuse.driver import AuditOptions, run_audit
from recuse.metrics.calibration import brier_score, expected_calibration_error, recalibrate
from recuse.roster import Roster
from recuse.simulate import PlantedBias, simulate_pairs


@pytest.fixture(scope="module")
def audited() -> tuple[pd.DataFrame, object]:
    probs = simulate_pairs(judges={"gpt-4": PlantedBias(accuracy=0.7)}, n_prompts=150,
                           verdicts="prob", seed=1).pairs  # fmt: skip
    picks = simulate_pairs(judges={"claude-v1": PlantedBias(accuracy=0.7)}, n_prompts=150,
                           seed=1).pairs  # fmt: skip
    pairs = pd.concat([probs, picks], ignore_index=True)
    options = AuditOptions(n_boot=200, seed=0, min_n=10, robustness=(), only=("calibration",))
    return probs, run_audit([_input("mixed", "pairs", pairs)], options=options,
                            roster=Roster.builtin())  # fmt: skip


def test_findings_before_and_after_recalibration(audited: tuple[pd.DataFrame, object]) -> None:
    probs, report = audited
    by = {f.bias.key: f for f in report.findings if f.judge == "gpt-4"}  # type: ignore[attr-defined]
    assert by[ECE.key].estimate == pytest.approx(
        expected_calibration_error(probs, **BOOT).estimate  # type: ignore[arg-type]
    )
    assert by[BRIER.key].estimate == pytest.approx(brier_score(probs, **BOOT).estimate)  # type: ignore[arg-type]
    for bias, method in ((ECE_ISOTONIC, "isotonic"), (ECE_PLATT, "platt")):
        r = recalibrate(probs, method=method, seed=0)  # type: ignore[arg-type]
        ref = expected_calibration_error(r, column="p_a_recalibrated", **BOOT)  # type: ignore[arg-type]
        assert by[bias.key].estimate == pytest.approx(ref.estimate)
        assert by[bias.key].estimate < by[ECE.key].estimate  # the Beta verdicts are off
    assert not any(f.significant for f in report.findings)  # type: ignore[attr-defined]
    # quality scores: no p-value, in the metric functions, the findings or the table
    assert np.isnan(expected_calibration_error(probs, **BOOT).p_value)  # type: ignore[arg-type]
    assert np.isnan(brier_score(probs, **BOOT).p_value)  # type: ignore[arg-type]
    assert all(f.p_value is None for f in by.values()) and not ECE.tested
    (table,) = [t for t in report.tables if t.name.startswith("calibration")]  # type: ignore[attr-defined]
    assert "p_value" not in table.frame.columns and "chance_ece" in table.frame.columns
    # warnings as text ("" for none) as every estimates table writes them, not [] / False
    assert all(isinstance(w, str) for w in table.frame["warnings"])
    assert "fixed_by_construction" not in table.frame.columns
    # what its numbers are, as every estimates table says: errors at their floor 0
    frame = table.frame
    assert set(NUMBER_COLUMNS) <= set(frame.columns) and len(frame)
    assert (frame["null"] == 0).all() and (frame["null_bound"] == "floor").all()
    assert not frame["signed"].any() and not frame["absolute_value"].any()
    assert "calibrated judge's plug-in ECE" in by[ECE.key].detail
    # the plug-in ECE is the mean absolute gap (ℓ1), the estimate a root mean square (ℓ2):
    # the detail says which, as the root mean square can read above the plug-in
    plugin = expected_calibration_error(probs, **BOOT).components["ece_plugin"]  # type: ignore[arg-type]
    assert f"plug-in ECE {plugin:.3f} (ℓ1, the mean absolute gap; the estimate is ℓ2" in (
        by[ECE.key].detail
    )
    assert "10 equal-width" in ECE.unit and ECE.kind == "quality"
    assert not by[ECE.key].text.startswith("+")  # a quality score prints without a sign
    (section,) = report.sections  # type: ignore[attr-defined]
    assert [f.title for f in section.figures] == ["Reliability — gpt-4 — mixed"]
    assert "cross-fitted" in section.notes[0] or "folds" in section.notes[0]


def test_a_judge_that_gives_picks_is_skipped_with_the_reason(
    audited: tuple[pd.DataFrame, object],
) -> None:
    _, report = audited
    skips = [k for k in report.skipped if k.analysis == ANALYSIS.title]  # type: ignore[attr-defined]
    assert [(k.judge, k.bias) for k in skips] == [("claude-v1", ECE)]
    assert "picks" in skips[0].reason
    assert not [f for f in report.findings if f.judge == "claude-v1"]  # type: ignore[attr-defined]


def test_the_no_bias_sentence_is_not_said_of_a_miscalibrated_judge() -> None:
    """A judge with no bias but stated probabilities far off (human prefers a with
    probability 0.5 + (p - 0.5) / 3): its calibration error's interval excludes 0.
    The summary used to say of it "every interval includes no bias"; it now says that
    every *bias* interval does, and that quality scores are not flagged."""
    from recuse.report.html import render_html

    rng = np.random.default_rng(3)
    n = 600
    p = rng.uniform(0, 1, n)
    y = (rng.random(n) < 0.5 + (p - 0.5) / 3).astype(float)
    pairs = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                          "prompt_id": [f"q{i}" for i in range(n)],
                          "judge": "gpt-4", "human": y, "p_a": p,
                          "model_a": "m1", "model_b": "m2"})  # fmt: skip
    options = AuditOptions(n_boot=200, seed=0, min_n=10, robustness=(), only=("calibration",))
    report = run_audit([_input("off", "pairs", pairs)], options=options,
                       roster=Roster.builtin())  # fmt: skip
    ece = next(f for f in report.findings if f.bias.key == ECE.key)
    assert ece.ci_low > 0.1  # planted: sqrt(E[(p - 0.5)² (2/3)²]) = 0.19 less the in-bin spread
    html = render_html(report)
    assert "every interval includes" not in html
    assert "every bias&rsquo;s interval includes" in html and "never flagged" in html


def test_picks_with_a_tie_in_one_order_are_not_probabilities() -> None:
    """A judge that picks a, b or a tie in each order (JudgeBench's arena-hard judges):
    a pick in one order and a tie in the other average to p_a = 0.75 or 0.25. Those were
    read as stated probabilities, and the audit printed an ECE of picks (0.31 for
    Claude-3-haiku on JudgeBench) as "calibration error of the judge's probabilities".
    Its stated verdicts, order by order, are all 0, 0.5 or 1: it is skipped."""
    rng = np.random.default_rng(5)
    n = 300
    y = (rng.random(n) < 0.5).astype(float)
    first = np.where(rng.random(n) < 0.7, y, 1 - y)  # right 70% of the time
    second = np.where(rng.random(n) < 0.3, 0.5, first)  # a tie in the second order 30%
    pairs = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                          "prompt_id": [f"q{i}" for i in range(n)],
                          "judge": "claude-3-haiku-20240307", "human": y,
                          "p_a_first": first, "p_a_second": second,
                          "p_a": (first + second) / 2, "model_a": "m1",
                          "model_b": "m2"})  # fmt: skip
    options = AuditOptions(n_boot=200, seed=0, min_n=10, robustness=(),
                           only=("calibration", "agreement"))  # fmt: skip
    report = run_audit([_input("ties", "pairs", pairs)], options=options,
                       roster=Roster.builtin())  # fmt: skip
    averaged = (first + second) / 2
    assert {0.25, 0.75} <= set(averaged.tolist())  # the averaged p_a looks like probabilities
    assert not [f for f in report.findings if f.bias.key == ECE.key]
    skips = [k for k in report.skipped if k.analysis == ANALYSIS.title]
    assert skips and all("picks" in k.reason for k in skips)
    # one order with a stated probability is enough to be calibrated
    pairs.loc[0, ["p_a_first", "p_a"]] = [0.8, (0.8 + second[0]) / 2]
    report = run_audit([_input("ties", "pairs", pairs)], options=options,
                       roster=Roster.builtin())  # fmt: skip
    assert [f for f in report.findings if f.bias.key == ECE.key]


def test_the_calibration_tables_say_what_each_column_is(
    audited: tuple[pd.DataFrame, object],
) -> None:
    """The reliability table and the estimates table's plug-in columns had no words. Each
    column now has them, and the numbers are what they say, worked out with pandas: per
    tenth of the stated probability (1 in the last), the pairs, their mean probability and
    the share the human prefers a; the plug-in ECE Σ_b (n_b / n) |mean_b(p) − share_b|."""
    probs, report = audited
    tables = {t.name: t for t in report.tables}  # type: ignore[attr-defined]
    rel, est = tables["reliability-mixed"], tables["calibration-mixed"]
    for t in (rel, est):
        assert set(t.frame.columns) <= set(t.columns), t.name
    p = probs["p_a"].astype(float)
    y = probs["human"].astype(float)
    keep = (y != 0.5) & y.notna() & p.notna()
    p, y = p[keep], (y[keep] > 0.5).astype(float)
    tenth = np.minimum(np.floor(p * 10), 9)
    by_hand = (
        pd.DataFrame({"p": p, "y": y, "b": tenth})
        .groupby("b")
        .agg(n=("p", "size"), mean_p=("p", "mean"), observed=("y", "mean"))
    )
    stated = rel.frame[
        (rel.frame["judge"] == "gpt-4") & (rel.frame["probabilities"] == "as stated")
    ]
    stated = stated[stated["n"] > 0].set_index((stated["bin_low"] * 10).round().astype(float))
    assert len(by_hand) >= 5 and stated["n"].tolist() == by_hand["n"].tolist()
    assert np.allclose(stated["mean_p"], by_hand["mean_p"])
    assert np.allclose(stated["observed"], by_hand["observed"])
    plugin = float((by_hand["n"] * (by_hand["mean_p"] - by_hand["observed"]).abs()).sum() / len(p))
    row = est.frame[(est.frame["judge"] == "gpt-4") & (est.frame["metric"] == "calibration_ece")]
    assert float(row["ece_plugin"].iloc[0]) == pytest.approx(plugin)
    assert "label over 0.5" in rel.columns["observed"]
    assert "no evidence of miscalibration" in est.columns["chance_ece"]
