"""A skip names the estimate that was not made, never one that was: no (dataset, judge,
bias) of report.json is both a finding and a skip, and every skip's reason names its own
metric (``metric: reason``), on the real datasets and on the planted tables.

LLMBar's MT-Bench set with a quarter of its prompts' labels made ties (as
tests/cli/test_cli_doors.py builds it) under ``--human-ties drop`` leaves gpt-3.5-turbo
4 pairs where the humans prefer the outsider's answer to its family's: its EO is not
estimated, its calibrated family preference is. The EO skip was copied as a skip of the
calibrated estimate ("family_preference_eo: only 4 pairs…", bias
family_preference_calibrated) beside that finding."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analyses.conftest import Planted
from recuse.analyses import BIASES, REGISTRY
from recuse.cli import main
from recuse.metrics.summary import METRICS
from recuse.report import export
from recuse.roster import Roster

FAST = ("--n-boot", "100", "--seed", "1", "--robustness", "none")

#: every id a skip's reason may name: bias keys and metric ids (those with an "_", so
#: that words such as "position" in a reason's prose are not read as ids)
IDS = {n for n in {*BIASES, *METRICS, *(m for a in REGISTRY for m in a.metrics)} if "_" in n}
#: (analysis title, metric id) -> the key of the bias the metric's finding has ("" none)
METRIC_BIAS = {(a.title, m): (b.key if b else "") for a in REGISTRY for m, b in a.metrics.items()}


def breaks(report: dict[str, Any]) -> list[str]:
    """Each skip of ``report`` (report.json) that is also a finding (same dataset, bias
    and judge, or any judge of the dataset for a skip of all its judges), each whose
    reason names a metric or bias other than its own, and each judge's summary entry not
    estimated beside its finding of the same bias."""
    found: dict[tuple[str, str], set[str]] = {}
    for s in report["sections"]:
        for f in s["findings"]:
            found.setdefault((f["dataset"], f["bias"]), set()).add(f["judge"])
    out = []
    for k in report["skipped"]:
        judges = found.get((k["dataset"], k["bias"]), set()) if k["bias"] else set()
        if k["judge"] in judges or (judges and (not k["judge"] or k["judge"].startswith("all "))):
            out.append(f"both a finding and a skip: {k}")
        said = k["reason"]
        named = {n for n in IDS if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", said)}
        head = said.split(": ", 1)[0]
        if head in METRICS or head in BIASES:
            named.add(head)
        own = {k["bias"]} | {
            m for (t, m), b in METRIC_BIAS.items() if t == k["analysis"] and b == k["bias"]
        }
        if named - own:
            out.append(f"names {sorted(named - own)}, not its own estimate: {k}")
    for row in report["summary"]:  # each judge's summary: what it has and what it misses
        has = {(f["dataset"], f["bias"]) for f in row["findings"]}
        out += [
            f"{row['judge']}'s summary has and misses: {k}"
            for k in row["not_estimated"]
            if (k["dataset"], k["bias"]) in has
        ]
    for row in report.get("summary_matrix", {}).get("rows", []):  # and its matrix's cells
        for bias, cell in row["cells"].items():
            made = {e["dataset"] for e in cell["estimates"]}
            out += [
                f"{row['judge']}'s {bias} cell has and misses: {k}"
                for k in cell["not_estimated"]
                if k["dataset"] in made
            ]
    return out


def _audit(target: str, out: Path, *options: str) -> dict[str, Any]:
    assert main(["audit", target, *FAST, *options, "-o", str(out)]) == 0
    return json.loads((out / "report.json").read_text())


def _family_pairs(path: Path, judge: str) -> pd.DataFrame:
    """The judge's pairs holding an answer of its family (not its own) beside one from
    outside it (the roster's families, worked out here apart from the metric), with
    ``fam_won``: 1 where the human prefers the family's answer, 0 the outsider's."""
    roster = Roster.builtin()
    rows = pd.read_csv(path)
    rows = rows[rows["judge"] == judge]
    family = roster.family(judge)

    def kin(m: object) -> bool:
        return isinstance(m, str) and m in roster and roster.family(m) == family

    a_kin = rows["model_a"].map(lambda m: kin(m) and m != judge)
    b_kin = rows["model_b"].map(lambda m: kin(m) and m != judge)
    a_out = rows["model_a"].map(lambda m: isinstance(m, str) and not kin(m))
    b_out = rows["model_b"].map(lambda m: isinstance(m, str) and not kin(m))
    pairs = rows[(a_kin & b_out) | (b_kin & a_out)].copy()
    pairs["fam_won"] = pairs["human"].where(a_kin[pairs.index], 1 - pairs["human"])
    return pairs


def test_a_judge_with_a_calibrated_family_preference_has_no_skip_of_it(
    tied_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _audit(str(tied_table), tmp_path / "r", "--human-ties", "drop",
                    "--only", "family-preference")  # fmt: skip
    pairs = _family_pairs(tied_table, "gpt-3.5-turbo")
    # 42 pairs; the humans prefer the outsider's answer in 4 (EO needs 5), 10 are ties
    assert len(pairs) == 42
    assert [(pairs["fam_won"] == v).sum() for v in (0, 0.5, 1)] == [4, 10, 28]
    found = {
        f["bias"]: f
        for s in report["sections"]
        for f in s["findings"]
        if f["judge"] == "gpt-3.5-turbo"
    }
    assert found["family_preference_calibrated"]["n"] == 42
    skips = [k for k in report["skipped"] if k["judge"] == "gpt-3.5-turbo"]
    assert [(k["bias"], k["reason"]) for k in skips] == [
        (
            "family_preference_eo",
            "family_preference_eo: only 4 pairs where the human prefers the other response "
            "(need at least 5)",
        )
    ]
    assert breaks(report) == []


def test_a_judge_with_neither_family_estimate_misses_the_calibrated_one(
    tied_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PaLM-2 (no family member among the generators) has neither: one skip per metric,
    each said of its own metric, the calibrated one the summary's."""
    report = _audit(str(tied_table), tmp_path / "r", "--only", "family-preference")
    skips = {k["bias"]: k["reason"] for k in report["skipped"] if k["judge"] == "palm-2"}
    assert sorted(skips) == ["family_preference_calibrated", "family_preference_dp",
                             "family_preference_eo"]  # fmt: skip
    assert skips["family_preference_eo"].startswith("family_preference_eo: ")
    assert skips["family_preference_calibrated"].startswith("family_preference_calibrated: ")
    assert breaks(report) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "target",
    ["llmbar-mtbench", "llmbar", "judgebench", "mt-bench-human", "hh-rlhf",
     "play-favorites", "alpaca-eval", "tied drop", "tied split", "tied line"],
)  # fmt: skip
def test_no_estimate_is_both_made_and_not_made_on_real_data(
    target: str,
    tied_table: Path,
    shared_data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if target.startswith("tied"):
        how = target.split()[1]
        options = ("--self-scope", "line") if how == "line" else ("--human-ties", how)
        report = _audit(str(tied_table), tmp_path / "r", *options)
    else:
        report = _audit(target, tmp_path / "r", "--data-dir", str(shared_data))
    judged = target not in ("mt-bench-human", "hh-rlhf")  # human labels only
    assert report["skipped"] and any(s["findings"] for s in report["sections"]) == judged
    assert breaks(report) == []


def test_no_estimate_is_both_made_and_not_made_on_the_planted_tables(planted: Planted) -> None:
    report = json.loads(export.to_json(planted.report))
    assert report["skipped"] and any(s["findings"] for s in report["sections"])
    assert breaks(report) == []


def test_the_check_sees_a_skip_of_a_finding_and_one_naming_another_metric() -> None:
    """The check itself: a skip of a finding's (dataset, bias, judge), one of all the
    dataset's judges, and a reason that names another metric, are each reported."""
    finding = {"dataset": "d", "judge": "j", "bias": "family_preference_calibrated"}
    skip = {**finding, "analysis": "Family preference",
            "reason": "family_preference_calibrated: x"}  # fmt: skip
    report: dict[str, Any] = {
        "sections": [{"findings": [finding]}],
        "skipped": [skip],
        "summary": [],
    }
    assert len(breaks(report)) == 1
    report["skipped"] = [{**skip, "judge": "all 2 judges"}]
    assert len(breaks(report)) == 1
    report["skipped"] = [{**skip, "judge": "k", "reason": "family_preference_eo: only 4"}]
    assert breaks(report) == [f"names ['family_preference_eo'], not its own estimate: "
                              f"{report['skipped'][0]}"]  # fmt: skip
    report["skipped"] = [{**skip, "judge": "k"}]
    assert breaks(report) == []
    report["summary"] = [{"judge": "j", "findings": [finding], "not_estimated": [skip]}]
    assert len(breaks(report)) == 1
    cell = {"estimates": [finding], "not_estimated": [skip]}
    report["summary"] = []
    report["summary_matrix"] = {"rows": [{"judge": "j", "cells": {"b": cell}}]}
    assert len(breaks(report)) == 1
