"""`recuse gate` through the real CLI: exit 0 / 1 / 3, and 2 on bad input;
`recuse audit --fail-on` once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recuse.cli import main
from recuse.simulate.pairs import PlantedBias, simulate_pairs

#: how a gate line names an estimate beside its analysis's headline: what it is, and
#: which key the headline is (the JSON key self_preference_eo is not the report's
#: self-preference)
EO = (
    "self_preference_eo (Self-preference (equal opportunity), unadjusted; the "
    "self-preference headline is self_preference_calibrated)"
)
RECALL = (
    "verbosity_recall_gap (Verbosity: recall difference (Saito Eq. 6); the verbosity "
    "headline is verbosity_longer_gap)"
)
ALPHA = (
    "agreement_alpha (Krippendorff's alpha among the judges; the agreement headline is "
    "agreement_accuracy)"
)


def _finding(bias: str, judge: str, est: float, lo: float, hi: float, **more: object) -> dict:
    return {"bias": bias, "judge": judge, "dataset": "d", "estimate": est, "ci_low": lo,
            "ci_high": hi, "null": 0.0, "level": 0.9, "n": 100, **more}  # fmt: skip


def _report(tmp_path: Path, findings: list[dict], **more: object) -> Path:
    path = tmp_path / "report.json"
    sections = [{"id": "self_preference", "findings": findings}]
    path.write_text(json.dumps({"schema_version": 1, "sections": sections, **more}), "utf-8")
    return path


def _sources(**judges: list[str]) -> dict:
    """A report's provenance: ``dataset=[judges]``, pairs tables."""
    return {"sources": [{"name": d, "table": "pairs", "judges": js} for d, js in judges.items()],
            "options": {"judges": "all", "analyses": "all",
                        "analyses skipped on request": "none"}}  # fmt: skip


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def test_pass_fail_and_inconclusive_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inside = _finding("self_preference_eo", "j1", 0.01, -0.02, 0.04)
    outside = _finding("self_preference_eo", "j2", 0.2, 0.12, 0.28)
    straddle = _finding("self_preference_eo", "j3", 0.04, 0.01, 0.07)
    position = _finding("position", "j1", 0.56, 0.53, 0.58, null=0.5)
    path = _report(tmp_path, [inside, position])
    code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05,position=0.1"], capsys)
    assert code == 0 and out.count("PASS") == 2 and "gate passed" in out
    # the analysis id is a shorthand for its headline bias (self-preference -> the
    # calibrated estimate)
    calibrated = _finding("self_preference_calibrated", "j1", 0.01, -0.02, 0.04)
    with_cal = _report(tmp_path, [inside, calibrated, position])
    for alias in ("self-preference", "self_preference"):
        code, out = _run(["gate", str(with_cal), "--max", f"{alias}=0.05"], capsys)
        assert code == 0 and "self_preference_calibrated of j1" in out
    path = _report(tmp_path, [inside, outside, straddle])
    code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05"], capsys)
    assert code == 1 and f"FAIL: {EO} of j2" in out
    path = _report(tmp_path, [inside, straddle])
    code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05"], capsys)
    assert code == 3 and f"INCONCLUSIVE: {EO} of j3" in out
    # half-width 0.03, gap |0.04| - 0.05 = 0.01: n * (0.03 / 0.01)^2 = 900
    assert "roughly 900 comparisons (now 100)" in out
    # position's null is 0.5: 0.53..0.58 lies within 0.5 ± 0.1, not within 0 ± 0.1
    path = _report(tmp_path, [position])
    assert _run(["gate", str(path), "--max", "position=0.05"], capsys)[0] == 3
    code, out = _run(["gate", str(path), "--max", "position=0.02"], capsys)
    assert code == 1


def test_min_bound_for_quality_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    acc = _finding("agreement_accuracy", "j", 0.74, 0.71, 0.77, null=0.5)
    path = _report(tmp_path, [acc])
    assert _run(["gate", str(path), "--min", "agreement_accuracy=0.7"], capsys)[0] == 0
    assert _run(["gate", str(path), "--min", "agreement_accuracy=0.8"], capsys)[0] == 1
    assert _run(["gate", str(path), "--min", "agreement=0.75"], capsys)[0] == 3
    # a bound between the interval's low end and the estimate: the estimate clears it,
    # the interval does not, so INCONCLUSIVE (a gate reading the estimate says PASS)
    code, out = _run(["gate", str(path), "--min", "agreement_accuracy=0.72"], capsys)
    assert code == 3 and "INCONCLUSIVE: agreement_accuracy of j" in out and "PASS" not in out
    # --min on a bias would pass a judge whose bias is large: refused with the fix
    path = _report(tmp_path, [_finding("self_preference_eo", "j", 0.3, 0.2, 0.4)])
    code, out = _run(["gate", str(path), "--min", "self_preference_eo=0.1"], capsys)
    assert code == 2 and "--max self_preference_eo=0.1" in out and "PASS" not in out


def test_a_bound_that_would_reward_a_worse_judge_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--max on a score measured from chance (accuracy 0.74 [0.71, 0.77]) failed the judge
    for being better than chance (|0.74 - 0.5| > 0.1); --min on a calibration error (0 is
    perfect) would pass a badly calibrated judge. Both are refused with the bound to use;
    --max on a calibration error stays (ECE at most x)."""
    acc = _finding("agreement_accuracy", "j", 0.74, 0.71, 0.77, null=0.5)
    ece = _finding("calibration_ece", "j", 0.04, 0.02, 0.06)
    path = _report(tmp_path, [acc, ece])
    code, out = _run(["gate", str(path), "--max", "agreement_accuracy=0.1"], capsys)
    assert code == 2 and "--min agreement_accuracy=" in out and "FAIL" not in out
    code, out = _run(["gate", str(path), "--min", "calibration_ece=0.01"], capsys)
    assert code == 2 and "--max calibration_ece=" in out and "PASS" not in out
    assert _run(["gate", str(path), "--max", "calibration_ece=0.1"], capsys)[0] == 0


def test_a_negative_floor_is_read_where_the_score_can_go_below_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--min agreement_kappa=-0.2` was refused as "a number of 0 or more", though κ
    runs from −1: a floor is read as any number and checked against the score's span;
    a --max is a distance, 0 or more."""
    kappa = _finding("agreement_kappa", "j", 0.1, -0.05, 0.25)
    acc = _finding("agreement_accuracy", "j", 0.74, 0.71, 0.77, null=0.5)
    path = _report(tmp_path, [kappa, acc], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(path), "--min", "agreement_kappa=-0.2"], capsys)
    assert code == 0 and "PASS" in out and "Traceback" not in out
    code, out = _run(["gate", str(path), "--min", "agreement_kappa=0.2"], capsys)
    assert code == 3 and "straddles the bound 0.2" in out  # [−0.05, 0.25]: undecided
    code, out = _run(["gate", str(path), "--min", "agreement_accuracy=-0.1"], capsys)
    assert code == 2 and "so this floor passes every judge" in out
    code, out = _run(["gate", str(path), "--max", "position=-0.1"], capsys)
    assert code == 2 and "a number of 0 or more" in out


def test_a_bound_beyond_the_values_an_estimate_can_take_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--min agreement_accuracy=1.5` was accepted and failed every judge (an accuracy is
    at most 1), and `--max position=0.6` passed every judge (a share lies within 0.5 of
    0.5). Each is refused with the flag, the bias, its span and the fix; exit 2, no gate
    line. A bound at the span's end stays (accuracy 1: only a perfect judge passes), and
    an unbounded estimate takes any bound."""
    acc = _finding("agreement_accuracy", "j", 0.74, 0.71, 0.77, null=0.5)
    pos = _finding("position", "j", 0.56, 0.53, 0.58, null=0.5)
    eo = _finding("self_preference_eo", "j", 0.01, -0.02, 0.04)
    fam = _finding("familiarity", "j", 0.3, -0.5, 1.1)
    path = _report(tmp_path, [acc, pos, eo, fam], provenance=_sources(d=["j"]))
    refused = {
        ("--min", "agreement_accuracy=1.5"): "takes values in [0, 1], so this floor fails",
        ("--min", "agreement_kappa=1.2"): "takes values in [−1, 1]",
        ("--min", "agreement_alpha=2"): "takes values in (−∞, 1]",
        ("--max", "position=0.6"): "never more than 0.5 from its no-bias value 0.5",
        ("--max", "self_preference_eo=1.5"): "never more than 1 from its no-bias value 0",
        ("--max", "self-preference=1.01"): "self_preference_calibrated (own-pick rate",
        ("--max", "calibration_ece=1.2"): "never more than 1 from its best value 0",
    }
    for (flag, spec), says in refused.items():
        for more in ([], ["--json"]):
            code, out = _run(["gate", str(path), flag, spec, *more], capsys)
            assert code == 2 and says in out, (spec, out)
            assert f"{flag} {spec}:" in out and "PASS" not in out and "FAIL" not in out
            assert "give a" in out and "Traceback" not in out
    code, out = _run(["gate", str(path), "--min", "agreement_accuracy=1.5"], capsys)
    assert "e.g. --min agreement_accuracy=0.75" in out
    code, out = _run(["gate", str(path), "--max", "position=0.6"], capsys)
    assert "give a distance from 0 to 0.5" in out
    # at the end of the span: in range, and gated as asked
    assert _run(["gate", str(path), "--min", "agreement_accuracy=1"], capsys)[0] == 1
    assert _run(["gate", str(path), "--max", "position=0.5"], capsys)[0] == 0
    assert _run(["gate", str(path), "--max", "self_preference_eo=1"], capsys)[0] == 0
    assert _run(["gate", str(path), "--max", "familiarity=50"], capsys)[0] == 0
    # audit --fail-on: refused before the work, nothing written
    data = tmp_path / "pairs.csv"
    simulate_pairs(n_prompts=20, seed=5).pairs.to_csv(data, index=False)
    out_dir = tmp_path / "never"
    code, out = _run(["audit", str(data), "--out", str(out_dir), "--fail-on", "position=0.7"],
                     capsys)  # fmt: skip
    assert code == 2 and "--fail-on position=0.7:" in out and "[0, 1]" in out, out
    assert not out_dir.exists()


def test_bad_input_is_exit_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _report(tmp_path, [_finding("position", "j", 0.5, 0.45, 0.55, null=0.5)])
    code, out = _run(["gate", str(path), "--max", "self_preferenc_eo=0.05"], capsys)  # a typo
    assert code == 2 and "no bias 'self_preferenc_eo'" in out and "position" in out
    code, out = _run(["gate", str(path), "--max", "position=abc"], capsys)
    assert code == 2 and "BIAS=NUMBER" in out
    code, out = _run(["gate", str(path)], capsys)
    assert code == 2 and "at least one threshold" in out
    other = tmp_path / "other.json"
    other.write_text('{"name": "not a report"}', "utf-8")
    code, out = _run(["gate", str(other), "--max", "position=0.1"], capsys)
    assert code == 2 and "not a recuse audit report" in out and "Traceback" not in out
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1, "sections": [', "utf-8")
    code, out = _run(["gate", str(broken), "--max", "position=0.1"], capsys)
    assert code == 2 and "not JSON" in out
    bad = _report(tmp_path, [{"bias": "position", "judge": "j", "estimate": "high"}])
    code, out = _run(["gate", str(bad), "--max", "position=0.1"], capsys)
    assert code == 2 and "finding 1 of section 1" in out
    code, out = _run(["gate", str(tmp_path / "missing.json"), "--max", "position=0.1"], capsys)
    assert code == 2 and "cannot read the report" in out


def test_the_audits_out_folder_is_read_as_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse gate report/` (the folder the audit wrote) read 'file not found'."""
    folder = tmp_path / "report"
    folder.mkdir()
    _report(folder, [_finding("position", "j", 0.75, 0.73, 0.78, null=0.5)])
    code, out = _run(["gate", str(folder), "--max", "position=0.1"], capsys)
    assert code == 1 and "FAIL: position of j" in out and "0.75 [0.73, 0.78]" in out
    code, out = _run(["gate", str(tmp_path), "--max", "position=0.1"], capsys)
    assert code == 2 and "a folder without a report.json" in out and "Traceback" not in out


def test_audit_fail_on_gates_the_report_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65)},
                         models=("gpt-4", "claude-v1", "vicuna-13b"), n_prompts=100,
                         pairs_per_prompt=2, seed=5)  # fmt: skip
    data = tmp_path / "pairs.csv"
    sim.pairs.to_csv(data, index=False)
    out = tmp_path / "report"
    args = ["audit", str(data), "--out", str(out), "--n-boot", "200", "--only", "self-preference"]
    code, text = _run([*args, "--fail-on", "self_preference_eo=0.05"], capsys)
    assert code == 1 and f"FAIL: {EO} of gpt-4" in text
    assert (out / "report.json").is_file()  # the report is written before the gate
    code, text = _run([*args, "--fail-on", "self_preference_eo=0.9"], capsys)
    assert code == 0 and "gate passed" in text
    code, text = _run([*args, "--fail-on", "self_preference_eo"], capsys)
    assert code == 2 and "BIAS=NUMBER" in text


def test_audit_fail_on_with_an_unknown_or_refused_key_stops_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo'd --fail-on key, or a bound the gate refuses, is found before the audit
    runs: exit 2, no report written, the message names --fail-on. Before, the whole
    audit ran and wrote its report, then the gate said '--max nosuch: no bias'."""
    data = tmp_path / "pairs.csv"
    simulate_pairs(n_prompts=20, seed=5).pairs.to_csv(data, index=False)
    for key, message in (("nosuch=0.1", "no bias 'nosuch'"),
                         ("agreement_accuracy=0.1", "measured from chance")):  # fmt: skip
        out = tmp_path / key
        code, text = _run(["audit", str(data), "--out", str(out), "--fail-on", key], capsys)
        assert code == 2 and message in text and "--fail-on" in text, text
        assert not out.exists()
    # an analysis id names its headline bias, as in recuse gate
    code, _ = _run(["audit", str(data), "--out", str(tmp_path / "ok"), "--n-boot", "100",
                    "--only", "position", "--fail-on", "position=0.5"], capsys)  # fmt: skip
    assert code == 0


def _audit_three_judges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list]:
    """An audit (real CLI) where llama-2-70b-chat judges but wrote no answer: its
    self-preference cannot be estimated; gpt-4's and claude-v1's can."""
    sim = simulate_pairs(
        judges={j: PlantedBias(accuracy=0.7) for j in ("gpt-4", "claude-v1", "llama-2-70b-chat")},
        models=("gpt-4", "claude-v1", "vicuna-13b"), n_prompts=60, pairs_per_prompt=2, seed=5,
    )  # fmt: skip
    data = tmp_path / "pairs.csv"
    sim.pairs.to_csv(data, index=False)
    args = ["audit", str(data), "--out", str(tmp_path / "r"), "--n-boot", "100", "--only",
            "self-preference,position"]  # fmt: skip
    assert _run(args, capsys)[0] == 0
    return tmp_path / "r" / "report.json", args


def test_a_judge_whose_bias_was_not_estimated_is_listed_and_makes_the_gate_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, args = _audit_three_judges(tmp_path, capsys)
    report = json.loads(path.read_text("utf-8"))
    (skip,) = [s for s in report["skipped"] if s["bias"] == "self_preference_eo"]
    assert skip["judge"] == "llama-2-70b-chat"
    gate = ["gate", str(path), "--max", "self_preference_eo=0.9"]  # wide: the others pass
    code, out = _run(gate, capsys)
    assert code == 3
    assert out.count(f"PASS: {EO} of") == 2
    # the skip starts with the metric's name, which the line names already
    assert skip["reason"].startswith("self_preference_eo: ")
    why = skip["reason"].removeprefix("self_preference_eo: ")
    line = f"NOT MEASURED: {EO} of llama-2-70b-chat (pairs.csv): {why}"
    assert line in out and "gate inconclusive: 1 not measured" in out
    code, out = _run([*gate, "--skip-unmeasured"], capsys)
    assert code == 0 and line + " — skipped (--skip-unmeasured)" in out
    assert "gate passed (1 not measured, skipped" in out
    # position is measured for all three: nothing to skip
    code, out = _run(["gate", str(path), "--max", "position=0.45"], capsys)
    assert code == 0 and out.count("PASS: position of") == 3 and "NOT MEASURED" not in out
    # the same through audit --fail-on
    code, out = _run([*args, "--fail-on", "self_preference_eo=0.9"], capsys)
    assert code == 3 and line in out
    code, out = _run([*args, "--fail-on", "self_preference_eo=0.9", "--skip-unmeasured"], capsys)
    assert code == 0 and "gate passed" in out
    code, out = _run([*args, "--skip-unmeasured"], capsys)  # nothing to skip without a gate
    assert code == 2 and "--skip-unmeasured goes with --fail-on" in out


def test_a_bias_estimated_for_no_judge_lists_every_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _audit_three_judges(tmp_path, capsys)
    # verbosity: not run (--only); every judge is named, and a gate that measured nothing
    # is inconclusive even with --skip-unmeasured
    for extra in ([], ["--skip-unmeasured"]):
        code, out = _run(["gate", str(path), "--max", "verbosity=0.1", *extra], capsys)
        assert code == 3 and out.count("NOT MEASURED: verbosity_longer_gap of") == 3
        assert "did not run the Verbosity analysis (--only/--skip)" in out
        assert "nothing was measured" in out
    # with another bias measured, --skip-unmeasured lets the gate pass on what it measured
    code, out = _run(["gate", str(path), "--max", "verbosity=0.1,position=0.45"], capsys)
    assert code == 3
    code, out = _run(["gate", str(path), "--max", "verbosity=0.1,position=0.45",
                      "--skip-unmeasured"], capsys)  # fmt: skip
    assert code == 0 and "gate passed (3 not measured" in out
    # a bias skipped for all judges of a dataset, with the reason the report gives
    skipped = [{"analysis": "Self-preference", "dataset": "d", "judge": "all 2 judges",
                "reason": "no judge wrote answers in the data",
                "bias": "self_preference_eo"}]  # fmt: skip
    crafted = _report(tmp_path, [_finding("position", "j1", 0.5, 0.45, 0.55, null=0.5)],
                      skipped=skipped, provenance=_sources(d=["j1", "j2"]))  # fmt: skip
    code, out = _run(["gate", str(crafted), "--max", "self_preference_eo=0.1"], capsys)
    assert code == 3
    for j in ("j1", "j2"):
        assert f"NOT MEASURED: {EO} of {j} (d): no judge wrote answers" in out
    # and position: j2 has no finding and no reason; it is still named
    code, out = _run(["gate", str(crafted), "--max", "position=0.1"], capsys)
    assert code == 3 and "PASS: position of j1 (d)" in out
    assert "NOT MEASURED: position of j2 (d): the report holds no finding and no reason" in out


def test_judges_are_accounted_per_dataset_and_pooled_biases_per_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = {**_finding("position", "j1", 0.5, 0.45, 0.55, null=0.5), "dataset": "d1"}
    alpha = {**_finding("agreement_alpha", "all 2 judges", 0.6, 0.5, 0.7), "dataset": "d1"}
    path = _report(tmp_path, [a, alpha], provenance=_sources(d1=["j1"], d2=["j1", "j2"]))
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 3 and "PASS: position of j1 (d1)" in out
    assert "NOT MEASURED: position of j1 (d2)" in out and "position of j2 (d2)" in out
    code, out = _run(["gate", str(path), "--min", "agreement_alpha=0.4"], capsys)
    assert code == 3 and f"PASS: {ALPHA} of all 2 judges (d1)" in out
    assert f"NOT MEASURED: {ALPHA} of all 2 judges (d2)" in out
    assert out.count("NOT MEASURED") == 1  # one pooled estimate per dataset, not per judge
    # audited with --judge j1: j2 is not accounted for
    sources = _sources(d1=["j1"], d2=["j1", "j2"])
    sources["options"]["judges"] = "j1"
    path = _report(tmp_path, [a, {**a, "dataset": "d2"}], provenance=sources)
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 0 and "j2" not in out
    # a report whose datasets hold no judge (human labels only) measured nothing
    path = _report(tmp_path, [], provenance=_sources(humans=[]))
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 3
    assert "NOT MEASURED: position: no dataset of the report (humans) has a judge" in out
    assert "nothing was measured" in out
    # a bias of ratings tables on a report of pairs tables
    code, out = _run(["gate", str(path), "--max", "favoritism=0.1"], capsys)
    assert code == 3 and "self_bias: no dataset of the report is a ratings table" in out


def test_crafted_reports_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _finding("position", "j", 0.5, 0.45, 0.55, null=0.5)
    huge = "1" + "0" * 400  # 10^400: an integer JSON allows and no float holds
    bad_findings = {
        "estimate": {**good, "estimate": "HUGE"},
        "ci_high": {**good, "ci_high": "HUGE"},
        "'null'": {**good, "null": "HUGE"},
        "'n'": {**good, "n": "HUGE"},
        "'level'": {**good, "level": "HUGE"},
        "lacks 'null'": {k: v for k, v in good.items() if k != "null"},
        "ci_low 0.6 is above ci_high 0.55": {**good, "ci_low": 0.6},
        # as written: ``:g`` read "ci_low 0.55 is above ci_high 0.55"
        "ci_low 0.5500001 is above ci_high 0.55": {**good, "ci_low": 0.5500001},
        "'std_error'": {**good, "std_error": "0.1"},
        # read as "unknown" (no prompt-count check) where it is damaged
        "'clusters' is not a finite number >= 0 (got nan)": {**good, "clusters": "NAN"},
        "'clusters' is not a finite number >= 0 (got -3)": {**good, "clusters": -3},
        "is not an object": ["position"],
    }
    for message, finding in bad_findings.items():
        path = tmp_path / "report.json"
        text = json.dumps({"schema_version": 1, "sections": [{"findings": [finding]}]})
        path.write_text(text.replace('"HUGE"', huge).replace('"NAN"', "NaN"), "utf-8")
        code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
        assert code == 2 and message in out and "finding 1 of section 1" in out, (message, out)
        assert len(out.strip().splitlines()) == 1 and "Traceback" not in out
    deep = "[" * 100_000 + "]" * 100_000
    documents = {
        "nested too deeply": '{"schema_version": 1, "sections": ' + deep + "}",
        "schema_version 3 is not one this recuse reads (1 or 2)": '{"schema_version": 3, '
        '"sections": []}',
        "schema_version '1' is not one": '{"schema_version": "1", "sections": []}',
        "schema_version True is not one": '{"schema_version": true, "sections": []}',
        "'skipped' is not a list": '{"schema_version": 1, "sections": [], "skipped": {}}',
        "provenance source 1 lacks": '{"schema_version": 1, "sections": [], '
        '"provenance": {"sources": [{"name": "d", "table": "pairs", "judges": [1]}]}}',
    }
    for message, text in documents.items():
        path = tmp_path / "report.json"
        path.write_text(text, "utf-8")
        code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
        assert code == 2 and message in out, (message, out)
        assert len(out.strip().splitlines()) == 1 and "Traceback" not in out


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        (["gate"], ["0 every named bias", "1 some interval", "3 inconclusive", "2 bad input"]),
        (["audit"], ["0 the report was written", "2 bad input", "1 some", "3 inconclusive"]),
        (["judge"], ["0 every judgment ok, unparsed", "1 some judgments failed", "2 bad"]),
        (["probe"], ["0 when every judgment", "1 when some failed", "2 on bad input"]),
    ],
)
def test_help_states_the_exit_codes(
    command: list[str], codes: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run([*command, "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "Exit codes:" in text
    for c in codes:
        assert c in text, c


def test_an_interval_wider_than_a_float_is_inconclusive_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finite bounds of ±1e308 (hi - lo overflows) or a standard error of 1e308 made the
    n-needed estimate ceil(inf): an OverflowError traceback and exit 1, which CI reads
    as a failed gate."""
    wide = _finding("position", "j1", 0.6, -1e308, 1e308, null=0.5)
    big_se = _finding("position", "j2", 0.6, 0.0, 1.0, null=0.5, std_error=1e308)
    path = _report(tmp_path, [wide, big_se])
    code, out = _run(["gate", str(path), "--max", "position=0.2"], capsys)
    assert code == 3 and "Traceback" not in out
    assert out.count("too wide to say how much data would decide it") == 2
    # an ordinary straddling interval keeps its number: n (h / g)^2 = 100 (0.1 / 0.05)^2
    normal = _finding("position", "j3", 0.65, 0.55, 0.75, null=0.5)
    code, out = _run(["gate", str(_report(tmp_path, [normal])), "--max", "position=0.2"], capsys)
    assert code == 3 and "roughly 400 comparisons (now 100)" in out


def test_a_judge_whose_name_holds_a_comma_is_accounted_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report writes the audited judges (--judge) as one text "a, b"; split at
    ", ", a judge named "judge, v2" was lost, so without a finding it was not listed and
    the gate passed (exit 0) instead of exit 3."""
    sources = _sources(d=["judge, v2", "j1", "other"])
    sources["options"]["judges"] = "judge, v2, j1"  # audited with -j "judge, v2" -j j1
    found = {**_finding("position", "j1", 0.5, 0.45, 0.55, null=0.5), "dataset": "d"}
    path = _report(tmp_path, [found], provenance=sources)
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 3 and "NOT MEASURED: position of judge, v2 (d)" in out
    assert "other" not in out  # not audited: not accounted for


def test_gate_json_matches_the_text_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`gate --json`: the same lines, outcome and exit code as the text gate."""
    import json as _json

    from recuse.simulate import PlantedBias, simulate_pairs

    sim = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.15)}, n_prompts=80, seed=4)
    data = tmp_path / "p.csv"
    sim.pairs.to_csv(data, index=False)
    out = tmp_path / "r"
    assert main(["audit", str(data), "--only", "position", "--n-boot", "200", "--out",
                 str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    args = ["gate", str(out / "report.json"), "--max", "position=0.05"]
    code = main(args)
    text = capsys.readouterr().out.splitlines()
    assert main([*args, "--json"]) == code == 1  # 0.65 is beyond 0.5 ± 0.05
    got = _json.loads(capsys.readouterr().out)
    assert got["exit_code"] == 1 and got["outcome"] == "failed"
    assert [x["text"] for x in got["lines"]] == text[:-1] and got["verdict"] == text[-1]
    assert got["lines"][0]["judge"] == "gpt-4" and got["lines"][0]["outcome"] == "fail"


def test_a_findings_caveats_follow_its_gate_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit's caveats on a number (e.g. the calibrated estimate's 'extrapolated
    competence') are printed under its gate line and kept in --json; before, the gate
    showed the number alone. A report whose warnings are not a list of texts is refused."""
    pairs = Path(__file__).resolve().parents[2] / "examples/output/familiarity_judgebench_pairs.csv"
    out = tmp_path / "r"
    assert main(["audit", str(pairs), "--only", "self-preference", "--n-boot", "200",
                 "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    args = ["gate", str(out / "report.json"), "--max", "self-preference=0.5"]
    code, text = _run(args, capsys)
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if "of smollm2-135m-instruct" in x)
    assert lines[at + 1].startswith("  ! extrapolated competence: its own pairs are 1.03–1.17")
    qwen = next(i for i, x in enumerate(lines) if "of qwen2.5-coder-0.5b-instruct" in x)
    assert not lines[qwen + 1].startswith("  !")
    assert main([*args, "--json"]) == code
    got = json.loads(capsys.readouterr().out)
    by_judge = {x["judge"]: x["warnings"] for x in got["lines"]}
    assert by_judge["qwen2.5-coder-0.5b-instruct"] == []
    assert by_judge["smollm2-135m-instruct"][0].startswith("extrapolated competence")
    bad = _finding("self_preference_eo", "j1", 0.01, -0.02, 0.04, warnings="careful")
    code, text = _run(["gate", str(_report(tmp_path, [bad])), "--max", "self_preference_eo=0.1"],
                      capsys)  # fmt: skip
    assert code == 2 and "'warnings' is not a list of texts" in text


def test_gate_json_on_bad_input_is_still_one_json_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--json` promises one JSON object for scripts: on bad input (exit 2) it is
    {"outcome": "error", "exit_code": 2, "error": the stderr line's message}; before,
    stdout was empty and a script's json.loads failed."""
    import json as _json

    bad = tmp_path / "report.json"
    bad.write_text("{")
    assert main(["gate", str(bad), "--max", "position=0.1", "--json"]) == 2
    captured = capsys.readouterr()
    got = _json.loads(captured.out)
    assert got["outcome"] == "error" and got["exit_code"] == 2
    assert "not JSON" in got["error"] and got["error"] in captured.err
    # without --json, stdout stays empty
    assert main(["gate", str(bad), "--max", "position=0.1"]) == 2
    assert capsys.readouterr().out == ""


def test_verbosity_gates_the_prefer_longer_gap_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--max verbosity=X` gates the verbosity headline (the prefer-longer gap), not
    Eq. 6's recall difference; Eq. 6 has a key that says what it is. Before, the gate
    looked up the bias key `verbosity` (Eq. 6) first: FAIL on a judge whose headline is
    within the bound."""
    gap = _finding("verbosity_longer_gap", "j", 0.01, -0.02, 0.04)
    recall = _finding("verbosity_recall_gap", "j", 0.3, 0.2, 0.4)
    path = _report(tmp_path, [gap, recall], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(path), "--max", "verbosity=0.05"], capsys)
    assert code == 0 and "PASS: verbosity_longer_gap of j" in out, out
    code, out = _run(["gate", str(path), "--max", "verbosity_recall_gap=0.05"], capsys)
    assert code == 1 and f"FAIL: {RECALL} of j" in out
    # an older report carries Eq. 6 under `verbosity`: read as verbosity_recall_gap, with
    # a note, and `verbosity` still means the headline
    old = _report(tmp_path, [gap, {**recall, "bias": "verbosity"}], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(old), "--max", "verbosity=0.05"], capsys)
    assert code == 0 and "PASS: verbosity_longer_gap of j" in out, out
    code, out = _run(["gate", str(old), "--max", "verbosity_recall_gap=0.05"], capsys)
    assert code == 1 and f"FAIL: {RECALL} of j" in out
    assert "older report, where `verbosity` named Saito's Eq. 6" in out
    # an older report with no prefer-longer gap at all says why it is not measured
    older = _report(tmp_path, [{**recall, "bias": "verbosity"}], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(older), "--max", "verbosity=0.05"], capsys)
    assert code == 3 and "NOT MEASURED: verbosity_longer_gap of j" in out
    assert "older recuse, which did not estimate the prefer-longer gap" in out


def test_audit_fail_on_and_material_verbosity_mean_the_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse audit --fail-on verbosity=X --material verbosity=Y` both act on the
    prefer-longer gap (the headline), as `recuse gate --max verbosity=X` does."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(verbosity=0.4, accuracy=0.7)},
                         models=("gpt-4", "claude-v1", "vicuna-13b"), n_prompts=150,
                         pairs_per_prompt=2, seed=7)  # fmt: skip
    data = tmp_path / "pairs.csv"
    sim.pairs.to_csv(data, index=False)
    out = tmp_path / "report"
    args = ["audit", str(data), "--out", str(out), "--n-boot", "200", "--only", "verbosity",
            "--judge", "gpt-4", "--material", "verbosity=0.5"]  # fmt: skip
    code, text = _run([*args, "--fail-on", "verbosity=0.9"], capsys)
    assert "verbosity_longer_gap of gpt-4" in text and "verbosity_recall_gap" not in text
    found = {
        f["bias"]: f
        for s in json.loads((out / "report.json").read_text("utf-8"))["sections"]
        for f in s["findings"]
    }
    assert found["verbosity_longer_gap"]["material"] == 0.5  # --material verbosity=
    assert found["verbosity_recall_gap"]["material"] == 0.05  # its own default
    assert code == 0, text
    # the gate's numbers read as the audit's: its line and the finding's sentence
    (line,) = [t for t in text.splitlines() if t.startswith("PASS: verbosity_longer_gap")]
    numbers = line.split(": ", 2)[2].split(" (90% interval)")[0]
    assert numbers in found["verbosity_longer_gap"]["verdict"], (numbers, line)
    assert "[" in numbers and "e-" not in numbers and "-" not in numbers


def test_the_comparisons_needed_are_written_with_thousands_separators(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """LLMBar's PaLM-2 position read 'roughly 226053 comparisons (now 192)', a number
    the audit's own tables would write 226,053."""
    near = _finding("position", "j1", 0.595, 0.56, 0.63, null=0.5, n=1500)
    # half-width 0.035, gap 0.1 - 0.095 = 0.005: 1500 * (0.035 / 0.005)^2 = 73,500
    code, out = _run(["gate", str(_report(tmp_path, [near])), "--max", "position=0.1"], capsys)
    assert code == 3 and "roughly 73,500 comparisons (now 1,500) would decide it" in out


def test_a_line_too_close_to_decide_keeps_its_projection_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """LLMBar's PaLM-2 position (0.599 against 0.5 + 0.1, n = 192) said roughly 226,053
    comparisons would decide it: the line now says the estimate sits too close to the
    bound, and --json keeps the projection, the distance and the flag."""
    palm = _finding("position", "palm-2", 0.599, 0.566, 0.636, null=0.5, n=192)
    llama = _finding("position", "llama", 0.615, 0.576, 0.655, null=0.5, n=200)
    path = _report(tmp_path, [palm, llama])
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 3
    (palm_line,) = [t for t in out.splitlines() if "palm-2" in t]
    assert "the estimate, 0.599, sits 0.001 below the bound 0.6" in palm_line
    assert "too close to the bound for more data to decide it" in palm_line
    # llama: h = 0.0395, g = 0.015: 200 (0.0395 / 0.015)^2 = 1,386.8 -> 1,387
    assert "roughly 1,387 comparisons (now 200) would decide it" in out
    code, out = _run(["gate", str(path), "--max", "position=0.1", "--json"], capsys)
    lines = {x["judge"]: x for x in json.loads(out)["lines"]}
    assert lines["palm-2"]["too_close"] is True and not lines["llama"]["too_close"]
    assert abs(lines["palm-2"]["n_needed"] - 235_200) <= 1  # 192 (0.035 / 0.001)^2
    assert abs(lines["palm-2"]["distance_to_bound"] - 0.001) < 1e-12
    assert abs(lines["llama"]["distance_to_bound"] - 0.015) < 1e-12


def test_json_lines_carry_the_estimate_interval_level_and_no_bias_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each --json line holds the numbers its text writes (before, only inside the text):
    the planted finding's estimate, interval, level and no-bias value; a judge without a
    finding has none of them."""
    fail = _finding("position", "j1", 0.72, 0.66, 0.78, null=0.5, level=0.95)
    near = _finding("position", "j3", 0.595, 0.56, 0.63, null=0.5, n=1500)
    path = _report(tmp_path, [fail, near], provenance=_sources(d=["j1", "j2", "j3"]))
    code, out = _run(["gate", str(path), "--max", "position=0.1", "--json"], capsys)
    lines = {x["judge"]: x for x in json.loads(out)["lines"]}
    assert code == 1 and [lines[j]["outcome"] for j in ("j1", "j2", "j3")] == [
        "fail", "not measured", "inconclusive"]  # fmt: skip
    numbers = ("estimate", "ci_low", "ci_high", "level", "null")
    assert [lines["j1"][k] for k in numbers] == [0.72, 0.66, 0.78, 0.95, 0.5]
    assert [lines["j3"][k] for k in numbers] == [0.595, 0.56, 0.63, 0.9, 0.5]
    assert all(lines["j2"][k] is None for k in numbers)
    # the text says the same numbers, rounded as the audit prints them (the fields keep
    # the report's: 0.595 reads 0.59 in the text)
    assert "0.72 [0.66, 0.78] (95% interval)" in lines["j1"]["text"], lines["j1"]["text"]
    assert "0.59 [0.56, 0.63] (90% interval)" in lines["j3"]["text"], lines["j3"]["text"]


def test_ci_gate_md_shows_what_the_gate_prints_on_llmbar(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/ci-gate.md's example is the gate's output on the real LLMBar MT-Bench pairs
    (PaLM-2's position, 0.599 against 0.6, is the line too close to decide), and `recuse
    gate --help` says what a line holds."""
    import re

    doc = (Path(__file__).parents[2] / "docs" / "ci-gate.md").read_text("utf-8")
    section = doc[doc.index("### What it prints") :]
    shown = re.search(r"```text\n(.*?)```", section, flags=re.S)
    assert shown is not None
    out = tmp_path / "report"
    audit = ["audit", "llmbar-mtbench", "--only", "position", "--out", str(out),
             "--data-dir", str(shared_data)]  # fmt: skip
    assert main(audit) == 0
    capsys.readouterr()
    code, printed = _run(["gate", str(out / "report.json"), "--max", "position=0.1"], capsys)
    assert code == 1 and printed == shown.group(1)
    assert "palm-2" in printed and "too close to the bound" in printed
    code, text = _run(["gate", "--help"], capsys)
    text = " ".join(text.split())
    assert code == 0 and "the estimate and interval as the audit prints them" in text
    assert "too close for more data to decide it" in text


def test_a_judge_name_with_a_newline_cannot_forge_a_gate_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate's output is read line by line in CI: a judge named "x\\nPASS: ..." (a
    name is any text in the data) printed its FAIL line as two lines, the second a PASS
    of a judge it made up. Each finding is one line, the newline written as ``\\n``; the
    --json output keeps the name as read."""
    forged = "x\nPASS: self_preference_eo of gpt-4 (d): +0.01 [−0.02, +0.04]"
    failing = _finding("self_preference_eo", forged, 0.2, 0.12, 0.28,
                       warnings=["low n\nPASS: forged caveat"])  # fmt: skip
    path = _report(tmp_path, [failing], provenance=_sources(d=[forged]))
    code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05"], capsys)
    assert code == 1, out
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("PASS")] == [], out
    assert f"FAIL: {EO} of x\\nPASS: self_preference_eo of gpt-4 (d)" in lines[0]
    assert lines[1] == "  ! low n\\nPASS: forged caveat"
    code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05", "--json"], capsys)
    (line,) = json.loads(out)["lines"]
    assert code == 1 and line["judge"] == forged
    # Python's splitlines (and JavaScript) also end a line at U+2028/U+2029
    for sep in ("\u2028", "\u2029", "\x85", "\x1e"):
        named = forged.replace("\n", sep)
        failing = _finding("self_preference_eo", named, 0.2, 0.12, 0.28)
        path = _report(tmp_path, [failing], provenance=_sources(d=[named]))
        code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05"], capsys)
        assert code == 1 and len(out.splitlines()) == 2, (sep, out)
        code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.05", "--json"],
                         capsys)  # fmt: skip
        assert json.loads(out)["lines"][0]["judge"] == named and len(out.splitlines()) > 5


def test_a_gate_without_thresholds_suggests_the_calibrated_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its example named self_preference_eo, which fails any strong judge, biased or not."""
    path = _report(tmp_path, [_finding("position", "j1", 0.5, 0.48, 0.52, null=0.5)])
    code, out = _run(["gate", str(path)], capsys)
    assert code == 2
    assert "--max self-preference=0.05" in out and "self_preference_eo" not in out


def test_a_bad_fail_on_is_named_as_fail_on_not_max(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse audit --fail-on position=nan` said '--max: cannot read ...', an option the
    user had not typed; it names --fail-on, in its message and its example."""
    data = tmp_path / "p.csv"
    data.write_text("item_id,prompt_id,judge,p_a_first\n1,p,j,A\n", encoding="utf-8")
    for bad, said in (
        ("position=nan", "--fail-on: cannot read 'position=nan'"),
        ("position=0.1,position=0.2", "--fail-on: position is given twice"),
    ):
        code, out = _run(["audit", str(data), "--fail-on", bad, "--out", str(tmp_path / "o")],
                         capsys)  # fmt: skip
        assert code == 2 and said in out, out
        assert "--max" not in out
        assert not (tmp_path / "o").exists()


def test_an_absolute_value_is_gated_unsigned_and_its_flag_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finding whose report says it is an absolute value (``absolute_value``: never
    below 0, e.g. Saito's Eq. 5) prints as the audit prints it, without a '+'; the
    signed one beside it keeps its sign. A flag that is not true or false is refused
    (exit 2, naming the field), as any other damaged field is."""
    signed = _finding("verbosity_recall_gap", "s", 0.2, 0.1, 0.3)
    folded = {**_finding("verbosity_recall_gap", "a", 0.2, 0.1, 0.3), "absolute_value": True}
    path = _report(tmp_path, [signed, folded], provenance=_sources(d=["s", "a"]))
    code, out = _run(["gate", str(path), "--max", "verbosity_recall_gap=0.5"], capsys)
    assert code == 0, out
    assert "of s (d): +0.20 [0.10, 0.30]" in out and "of a (d): 0.20 [0.10, 0.30]" in out
    bad = {**folded, "absolute_value": "yes"}
    code, out = _run(["gate", str(_report(tmp_path, [bad])), "--max", "verbosity=0.1"], capsys)
    assert code == 2 and "'absolute_value' is not true or false (got 'yes')" in out


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"absolute_value": None}, "'absolute_value' is not true or false (got None)"),
        ({"fixed_by_construction": None}, "'fixed_by_construction' is not true or false"),
        ({"absolute_value": 1}, "'absolute_value' is not true or false (got 1)"),
        ({"absolute_value": "true"}, "'absolute_value' is not true or false (got 'true')"),
        # an absolute value below 0, or of a statistic whose no-bias value is not 0
        ({"absolute_value": True}, "got null 0.0, estimate -0.03, ci_low -0.09"),
        ({"absolute_value": True, "null": 0.5, "estimate": 0.6, "ci_low": 0.55,
          "ci_high": 0.65}, "got null 0.5, estimate 0.6, ci_low 0.55"),
    ],
)  # fmt: skip
def test_a_hand_edited_absolute_value_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict, said: str
) -> None:
    """report.json's ``absolute_value`` and ``fixed_by_construction`` are true or false
    (the schema's booleans; an older report lacks them, and is read, but never writes
    null), and an absolute value is of a statistic whose no-bias value is 0, never below
    0: a signed finding marked absolute (−0.03 [−0.09, 0.04]) printed without its '+' and
    was gated as read. Each is refused with exit 2, the field and the values named."""
    signed = _finding("verbosity_longer_gap", "j", -0.03, -0.09, 0.04)
    path = _report(tmp_path, [{**signed, **edit}], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(path), "--max", "verbosity=0.1"], capsys)
    assert code == 2 and said in out, out
    assert "PASS" not in out and "INCONCLUSIVE" not in out
    # the same finding without the keys, as an older report writes it, is read
    code, out = _run(["gate", str(_report(tmp_path, [signed], provenance=_sources(d=["j"]))),
                      "--max", "verbosity=0.1"], capsys)  # fmt: skip
    assert (
        code == 0 and "PASS: verbosity_longer_gap of j (d): \u22120.030 [\u22120.090, 0.040]" in out
    )


def test_gate_json_is_strict_json_whatever_a_line_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate reads only finite numbers from a report (a NaN is refused, exit 2), but
    its --json printed with Python's default, which writes a NaN or an infinity that
    reached a line as bare NaN / Infinity, not JSON; every JSON recuse writes is
    strict (null there). Planted: a line whose estimate is NaN and distance infinite."""
    import math

    from recuse.report import gate as gate_module
    from recuse.report.gate import GateLine, GateResult

    planted = GateLine("position", "j", "d", "inconclusive", "INCONCLUSIVE: …",
                       gap=math.inf, estimate=math.nan, interval=(0.1, math.inf), level=0.9,
                       null=0.5)  # fmt: skip
    monkeypatch.setattr(gate_module, "gate_report", lambda *a, **k: GateResult((planted,)))
    path = _report(tmp_path, [_finding("position", "j", 0.5, 0.4, 0.6, null=0.5)])
    code, out = _run(["gate", str(path), "--max", "position=0.1", "--json"], capsys)

    def refuse(constant: str) -> float:
        raise AssertionError(f"{constant} is not JSON")

    (line,) = json.loads(out, parse_constant=refuse)["lines"]
    assert code == 3 and line["estimate"] is None and line["distance_to_bound"] is None
    assert (line["ci_low"], line["ci_high"], line["level"]) == (0.1, None, 0.9)


def test_a_ratings_bias_bound_of_a_whole_scale_or_more_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """γ and λ are in units of the dimension's top score (0.05 = 5% of the scale): `--max
    self_bias=5`, meant as 5%, passed every judge ('the whole interval lies within ±5')
    with nothing said, where a pairs bias's bound beyond its span is refused. A bound of a
    whole scale or more is refused; 0.05 is read."""
    g = _finding("self_bias", "j", 0.02, 0.01, 0.03)
    lam = _finding("family_bias", "f", 0.2, 0.15, 0.25)
    sources = {"sources": [{"name": "d", "table": "ratings", "judges": ["j"]}]}
    path = _report(tmp_path, [g, lam], provenance=sources)
    for bound in ("self_bias=5", "favoritism=5", "family_bias=1"):
        code, out = _run(["gate", str(path), "--max", bound], capsys)
        assert code == 2 and "in units of the dimension's top score" in out and "PASS" not in out
    code, out = _run(["gate", str(path), "--max", "self_bias=0.05"], capsys)
    assert code == 0 and "PASS: self_bias of j" in out
    # the audit's --fail-on is refused before the work, its fix written as --fail-on
    # (it said '--max self_bias=0.05', an option the audit does not take)
    code, out = _run(["audit", str(tmp_path / "none.csv"), "--fail-on", "self_bias=5"], capsys)
    assert code == 2 and "e.g. --fail-on self_bias=0.05" in " ".join(out.split())


def test_a_finding_whose_null_is_not_its_biass_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate measures a bound from the finding's ``null``; the audit writes its
    bias's, so another value is a hand-edited report. Position's no-bias value is 0.5:
    [0.32, 0.38] lies wholly outside 0.5 ± 0.1 (FAIL), but measured from an edited 0.3
    it lay within 0.3 ± 0.1 and passed."""
    position = _finding("position", "j", 0.35, 0.32, 0.38, null=0.5)
    path = _report(tmp_path, [position], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 1 and "FAIL: position of j" in out
    path = _report(tmp_path, [{**position, "null": 0.3}], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert code == 2 and "PASS" not in out, out
    assert "'null' as 0.3, where position's is 0.5" in out and str(path) in out


def test_each_gate_line_names_the_estimate_it_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.json's key ``family_preference_eo`` is the unadjusted equal-opportunity
    difference; the report's headline family-preference is the calibrated one
    (``family_preference_calibrated``), which ``--max family-preference`` gates. Both
    lines read "family_preference of j", so a user gating the key read the EO number as
    the headline. The EO line now says what it is and which key the headline is, in the
    text and in --json; the headline's line names its own key. The EO key was
    ``family_preference``, so ``--max family_preference`` gated the EO number while
    ``--max self_preference`` gated the calibrated headline: it is ``family_preference_eo``
    now (as ``self_preference_eo``), and ``family_preference`` gates the headline."""
    eo = _finding("family_preference_eo", "j", 0.3, 0.2, 0.4)  # fails a 0.1 bound
    cal = _finding("family_preference_calibrated", "j", 0.01, -0.02, 0.04)  # passes it
    path = _report(tmp_path, [eo, cal])
    named = (
        "family_preference_eo (Family preference (equal opportunity), unadjusted; the "
        "family-preference headline is family_preference_calibrated)"
    )
    code, out = _run(["gate", str(path), "--max", "family_preference_eo=0.1"], capsys)
    assert code == 1 and out.startswith(f"FAIL: {named} of j (d): +0.30 [0.20, 0.40]")
    for key in ("family-preference", "family_preference"):
        code, out = _run(["gate", str(path), "--max", f"{key}=0.1"], capsys)
        assert code == 0 and out.startswith("PASS: family_preference_calibrated of j (d): +0.01")
        assert "equal opportunity" not in out
    code, out = _run(["gate", str(path), "--max", "family_preference_eo=0.1", "--json"], capsys)
    (line,) = json.loads(out)["lines"]
    assert line["bias"] == "family_preference_eo"
    assert line["text"].startswith(f"FAIL: {named} of j")


def test_an_older_reports_family_preference_key_is_read_as_the_eo_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report written before the rename keys the EO difference ``family_preference``
    (its finding and its skips): the gate reads them as ``family_preference_eo`` and says
    so beside the line, and ``--max family_preference`` gates the headline there too."""
    eo = _finding("family_preference", "j", 0.3, 0.2, 0.4)
    cal = _finding("family_preference_calibrated", "j", 0.01, -0.02, 0.04)
    skipped = [{"analysis": "Family preference", "dataset": "d", "judge": "k",
                "reason": "family_preference_eo: no pairs holding a family member's answer",
                "bias": "family_preference"}]  # fmt: skip
    path = _report(tmp_path, [eo, cal], skipped=skipped, provenance=_sources(d=["j", "k"]))
    code, out = _run(["gate", str(path), "--max", "family_preference_eo=0.1"], capsys)
    assert code == 1 and out.startswith("FAIL: family_preference_eo (Family preference (equal")
    assert "where `family_preference` named the unadjusted equal-opportunity family" in out
    assert "NOT MEASURED: family_preference_eo (" in out
    assert "of k (d): no pairs holding a family member's answer" in out, out
    code, out = _run(["gate", str(path), "--max", "family_preference=0.1"], capsys)
    assert out.startswith("PASS: family_preference_calibrated of j (d): +0.01"), out
    # an older report without the calibrated headline: the line says why, and the key
    # that gates the number it holds (it read "the report holds no finding and no reason")
    (tmp_path / "alone").mkdir()
    alone = _report(tmp_path / "alone", [eo], provenance=_sources(d=["j"]))
    code, out = _run(["gate", str(alone), "--max", "family_preference=0.1"], capsys)
    said = "NOT MEASURED: family_preference_calibrated of j (d): this report is from an older"
    assert code == 3 and said in out, out
    assert "gated now as family_preference_eo where the report holds it" in out


def test_a_value_fixed_by_construction_is_gated_as_no_measurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part of the calibrated self-preference on a rung none of the judge's own pairs
    is on is 0 by construction; its gate line read "+0.000 [0.000, 0.000] (90%
    interval)", a measurement's. It reads as the audit's finding does now: the value,
    fixed by construction, not a measurement, and no interval."""
    part = "self_preference_part_human_neither"
    fixed = _finding(part, "j", 0.0, 0.0, 0.0, clusters=73, fixed_by_construction=True)
    path = _report(tmp_path, [fixed])
    code, out = _run(["gate", str(path), "--max", f"{part}=0.1"], capsys)
    assert code == 0, out
    assert out.startswith(
        f"PASS: {part} (Self-preference, the part where the human calls a tie or gave no "
        "label; a part of the self-preference headline self_preference_calibrated) of j "
        "(d): 0, fixed by construction, not a measurement (no interval); the value lies "
        "within ±0.1"
    ), out
    assert "[0.000" not in out


def test_a_fixed_value_has_no_interval_in_the_gate_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse gate --json` wrote a fixed value's ends 0 and 0 beside its text's "no
    interval": they are null now, and the line says it is fixed by construction; a
    measured finding keeps its ends and false."""
    part = "self_preference_part_human_neither"
    fixed = _finding(part, "j", 0.0, 0.0, 0.0, clusters=73, fixed_by_construction=True)
    measured = _finding(part, "k", 0.02, -0.01, 0.05, clusters=73, fixed_by_construction=False)
    path = _report(tmp_path, [fixed, measured])
    code, out = _run(["gate", str(path), "--max", f"{part}=0.1", "--json"], capsys)
    lines = {x["judge"]: x for x in json.loads(out)["lines"]}
    assert code == 0, out
    assert "no interval" in lines["j"]["text"]
    assert (lines["j"]["ci_low"], lines["j"]["ci_high"]) == (None, None)
    assert lines["j"]["fixed_by_construction"] is True and lines["j"]["estimate"] == 0.0
    assert (lines["k"]["ci_low"], lines["k"]["ci_high"]) == (-0.01, 0.05)
    assert lines["k"]["fixed_by_construction"] is False


def test_a_fixed_value_from_few_prompts_is_not_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value fixed by construction from 3 prompts (under the 5 a cluster bootstrap
    needs) read "INCONCLUSIVE … add prompts", though more prompts never change it: it
    is gated on its value. A measured zero-width interval from 3 prompts stays
    inconclusive."""
    part = "self_preference_part_human_neither"
    fixed = _finding(part, "j", 0.0, 0.0, 0.0, clusters=3, fixed_by_construction=True)
    path = _report(tmp_path, [fixed])
    code, out = _run(["gate", str(path), "--max", f"{part}=0.1"], capsys)
    assert code == 0 and out.startswith(f"PASS: {part} "), out
    assert "add prompts" not in out and "fixed by construction, not a measurement" in out
    measured = _finding(part, "j", 0.0, 0.0, 0.0, clusters=3, fixed_by_construction=False)
    code, out = _run(["gate", str(_report(tmp_path, [measured])), "--max", f"{part}=0.1"],
                     capsys)  # fmt: skip
    assert code == 3 and "add prompts" in out, out


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        # the flag alone on a measured zero-width interval (its warning says so)
        ({"fixed_by_construction": True},
         "'fixed_by_construction' is true, but its warning says 'no variation in the "
         "resamples'"),
        # the flag on an interval with width
        ({"fixed_by_construction": True, "estimate": 0.05, "ci_low": -0.3, "ci_high": 0.4,
          "warnings": []},
         "'fixed_by_construction' is true, but its interval [-0.3, 0.4] is not its "
         "estimate 0.05"),
    ],
)  # fmt: skip
def test_a_hand_edited_fixed_by_construction_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict, said: str
) -> None:
    """A judge always right on 6 prompts: EO 0.00 [0.00, 0.00], the resamples never
    varied, inconclusive against ±0.05. Marking it ``fixed_by_construction`` by hand
    made it PASS as "0, fixed by construction, not a measurement"; on a wide interval
    the flag was dropped without a word. The audit writes neither (a fixed value's ends
    are the value, and its warning says why it is fixed): both are refused, exit 2."""
    warned = ["no variation in the resamples: the interval says nothing"]
    flat = _finding("self_preference_eo", "j", 0.0, 0.0, 0.0, n=12, clusters=6,
                    std_error=0.0, fixed_by_construction=False, warnings=warned)  # fmt: skip
    code, out = _run(["gate", str(_report(tmp_path, [flat])), "--max",
                      "self_preference_eo=0.05"], capsys)  # fmt: skip
    assert code == 3 and "INCONCLUSIVE" in out, out
    path = _report(tmp_path, [{**flat, **edit}])
    code, out = _run(["gate", str(path), "--max", "self_preference_eo=0.5"], capsys)
    assert code == 2 and said in out, out
    assert "PASS" not in out and "Traceback" not in out
    # a fixed value whose ends differ from it by rounding (0 and 1e-17) is
    # what the audit may write: read as fixed, with no interval
    part = "self_preference_part_human_neither"
    fixed = _finding(part, "j", 1e-17, 0.0, 1e-17, clusters=73, fixed_by_construction=True,
                     warnings=["none of its own pairs is on this rung"])  # fmt: skip
    code, out = _run(["gate", str(_report(tmp_path, [fixed])), "--max", f"{part}=0.1"], capsys)
    assert code == 0 and "not a measurement (no interval)" in out, out


@pytest.mark.parametrize(
    ("key", "null", "given", "said"),
    [
        ("self_preference_eo", 0.0, "-0.1", "--max self_preference_eo=0.1 "),
        ("self_preference_eo", 0.0, "0.05", "--max self_preference_eo=0.05 "),
        ("position", 0.5, "0.6", "--max position=0.1 "),
        ("position", 0.5, "0.4", "--max position=0.1 "),
    ],
)  # fmt: skip
def test_a_min_on_a_bias_suggests_a_max_of_its_distance_from_no_bias(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    key: str,
    null: float,
    given: str,
    said: str,
) -> None:
    """`--min self_preference_eo=-0.1` was refused with "bound its distance … with --max
    self_preference_eo=-0.1", which --max refuses in turn (a number of 0 or more), and
    `--min position=0.6` suggested --max position=0.6, not its distance 0.1 from the
    no-bias 0.5 (hand: |−0.1 − 0| = 0.1, |0.6 − 0.5| = 0.1, |0.4 − 0.5| = 0.1)."""
    path = _report(tmp_path, [_finding(key, "j", null, null - 0.05, null + 0.05, null=null)])
    code, out = _run(["gate", str(path), "--min", f"{key}={given}"], capsys)
    assert code == 2 and said in out, out
    suggested = said.split()[1].split("=")[1]
    assert float(suggested) >= 0


@pytest.mark.parametrize(
    ("key", "null", "said"),
    [
        ("agreement_kappa", 0.0, "between its chance = 0 and its best 1 "
         "(e.g. --min agreement_kappa=0.5)"),
        ("agreement_alpha", 0.0, "between its chance = 0 and its best 1 "
         "(e.g. --min agreement_alpha=0.5)"),
        ("self_recognition", 0.5, "between its chance = 0.5 and its best 1 "
         "(e.g. --min self_recognition=0.75)"),
        ("agreement_accuracy", 0.5, "between its chance = 0.5 and its best 1 "
         "(e.g. --min agreement_accuracy=0.75)"),
    ],
)  # fmt: skip
def test_a_max_on_a_chance_score_suggests_a_floor_of_that_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, null: float, said: str
) -> None:
    """`--max agreement_kappa=…` was refused with "e.g. --min agreement_kappa=0.7 for
    accuracy": an accuracy's example on a κ, whose chance is 0. The example is the
    key's own: its chance value, its best, and a floor halfway (hand: (0 + 1) / 2 = 0.5,
    (0.5 + 1) / 2 = 0.75)."""
    path = _report(tmp_path, [_finding(key, "j", 0.6, 0.55, 0.65, null=null)])
    code, out = _run(["gate", str(path), "--max", f"{key}=0.1"], capsys)
    assert code == 2 and said in out, out
    assert "for accuracy" not in out and "Traceback" not in out


def test_a_not_measured_line_gives_the_reason_without_the_analysis_internal_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The family-preference analysis records the skip of ``family_preference`` as its
    metric's internal name says it: "family_preference_eo: no pairs …". The gate line
    names the estimate already, and read "family_preference (…): family_preference_eo:
    no pairs …" (judgebench, llmbar), a key no user gates; the headline's line named
    itself twice ("self_preference_calibrated of j (d): self_preference_calibrated:
    …"). The reason now reads without the name."""
    why = "no pairs holding a family member's answer against an outsider's"
    skipped = [
        {"analysis": "Family preference", "dataset": "d", "judge": "j",
         "reason": f"family_preference_eo: {why}", "bias": "family_preference_eo"},
        {"analysis": "Self-preference", "dataset": "d", "judge": "j",
         "reason": "self_preference_calibrated: none of its 350 pairs holds its own answer",
         "bias": "self_preference_calibrated"},
    ]  # fmt: skip
    other = _finding("position", "k", 0.5, 0.49, 0.51, null=0.5)
    path = _report(tmp_path, [other], skipped=skipped, provenance=_sources(d=["j", "k"]))
    code, out = _run(["gate", str(path), "--max", "family_preference_eo=0.1"], capsys)
    assert code == 3 and "unadjusted; the family-preference headline is " in out
    assert f"family_preference_calibrated) of j (d): {why}\n" in out, out
    assert "family_preference_eo: " not in out
    code, out = _run(["gate", str(path), "--max", "self-preference=0.1"], capsys)
    assert code == 3
    assert "NOT MEASURED: self_preference_calibrated of j (d): none of its 350 pairs" in out, out
    assert "self_preference_calibrated: " not in out
    # a reason of another estimate of the analysis, read for want of the key's own,
    # keeps the name that says whose it is
    other_skip = {"analysis": "Position", "dataset": "d", "judge": "j", "bias": "",
                  "reason": "flip_rate: only 3 pairs judged in both orders"}  # fmt: skip
    path = _report(tmp_path, [other], skipped=[other_skip], provenance=_sources(d=["j", "k"]))
    code, out = _run(["gate", str(path), "--max", "position=0.1"], capsys)
    assert "NOT MEASURED: position of j (d): flip_rate: only 3 pairs" in out, out


def test_a_part_of_the_calibrated_self_preference_says_whose_and_why_not_estimated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge with no calibrated self-preference (none of its pairs holds its own
    answer: the reward models of judgebench) has no ladder parts and no skip of its
    own for them: ``--max self_preference_part_human_neither`` read "the report holds
    no finding and no reason" for 13 judges of the real datasets. It gives the
    headline's reason; and each line of a part says what it is a part of (its key alone
    read as a bias of its own)."""
    part = "self_preference_part_human_neither"
    measured = _finding(part, "k", 0.01, -0.05, 0.06)
    skipped = [
        {"analysis": "Self-preference", "dataset": "d", "judge": "j",
         "reason": "self_preference_calibrated: no pairs holding the judge's own answer",
         "bias": "self_preference_calibrated"},
    ]  # fmt: skip
    path = _report(tmp_path, [measured], skipped=skipped, provenance=_sources(d=["j", "k"]))
    code, out = _run(["gate", str(path), "--max", f"{part}=0.1"], capsys)
    named = (
        f"{part} (Self-preference, the part where the human calls a tie or gave no label; "
        "a part of the self-preference headline self_preference_calibrated)"
    )
    assert code == 3 and f"PASS: {named} of k (d)" in out, out
    assert (
        f"NOT MEASURED: {named} of j (d): self_preference_calibrated not estimated: no "
        "pairs holding the judge's own answer"
    ) in out, out
    assert "no finding and no reason" not in out


def test_the_ladder_alone_records_why_a_judge_has_no_parts(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--only self-preference-ladder`` on llmbar-mtbench: none of the pairs holds an
    answer of Llama-2 or PaLM-2, so they have no calibrated headline and no parts; the
    reason was the self-preference analysis's skip alone, which this audit does not
    run, and the gate read "the report holds no finding and no reason" for both. The
    ladder records one skip per part not estimated, with the headline's reason (said in
    words, not by its id: a skip names its own estimate alone,
    tests/analyses/test_skips_name_their_estimate.py), and the gate says it."""
    out = tmp_path / "report"
    audit = ["audit", "llmbar-mtbench", "--only", "self-preference-ladder", "--out",
             str(out), "--data-dir", str(shared_data), "--n-boot", "200"]  # fmt: skip
    assert main(audit) == 0
    capsys.readouterr()
    report = json.loads((out / "report.json").read_text("utf-8"))
    why = (
        "the calibrated self-preference it is a part of was not estimated: no pairs holding "
        "the judge's own answer"
    )
    parts = ("self_preference_part_human_prefers_own", "self_preference_part_human_neither",
             "self_preference_part_human_prefers_other")  # fmt: skip
    skips = {(s["judge"], s["bias"]): s["reason"] for s in report["skipped"]}
    assert len(skips) == len(report["skipped"])  # none twice
    for judge in ("llama-2-70b-chat", "palm-2"):
        for part in parts:
            assert skips.get((judge, part)) == f"{part}: {why}", skips
    found = [f for s in report["sections"] for f in s["findings"]]
    measured = {f["judge"] for f in found if f["bias"] in parts}
    assert measured == {"gpt-3.5-turbo", "gpt-4"}  # none of them is skipped
    assert not [k for k in skips if k[0] in measured], skips
    code, printed = _run(["gate", str(out / "report.json"), "--max", f"{parts[1]}=0.2"], capsys)
    assert code == 3 and "no finding and no reason" not in printed, printed
    for judge in ("llama-2-70b-chat", "palm-2"):
        assert f"of {judge} (llmbar-mtbench): {why}\n" in printed, printed


def test_the_gate_reads_report_json_of_versions_1_and_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.json came to write ``n`` and ``clusters`` null for a value fixed by
    construction under schema_version 1, whose schema as first published required an
    integer ``n`` (a v1 consumer would reject it): the audit writes version 2 now, and
    the gate reads both (a v1 report's fixed value with its n, a v2 one's null)."""
    from recuse.report.export import schema
    from recuse.report.labels import SCHEMA_VERSION

    assert SCHEMA_VERSION == 2 and schema()["properties"]["schema_version"] == {"const": 2}
    part = "self_preference_part_human_neither"
    for version, n in ((1, 51), (2, None)):
        fixed = _finding(part, "j", 0.0, 0.0, 0.0, clusters=n, fixed_by_construction=True)
        path = _report(tmp_path, [{**fixed, "n": n}])
        path.write_text(
            path.read_text("utf-8").replace('"schema_version": 1', f'"schema_version": {version}'),
            "utf-8",
        )
        code, out = _run(["gate", str(path), "--max", f"{part}=0.1"], capsys)
        assert code == 0 and out.startswith(f"PASS: {part}"), (version, out)


def test_a_report_path_in_a_loop_of_links_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse gate` on a link in a loop said "file not found" of a link the user can
    list (`recuse audit` said "a loop of links")."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    code, out = _run(["gate", str(a), "--max", "position=0.1"], capsys)
    assert code == 2 and "a link in a loop of links (it leads to no file)" in out, out
    assert "file not found" not in out
