"""The words of `recuse gate --certified` (:mod:`recuse.report.certified_gate`); the gate
on a whole audit's report is tested in tests/analyses/test_certification.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from recuse.report.certified_gate import Certified, gate_certified


def _row(**over: Any) -> dict[str, Any]:
    row = {"dataset": "d", "judge": "gpt-4", "stratum": "pooled", "target": 0.85,
           "delta": 0.1, "n_labelled": 200, "n_kept": 0, "coverage": 0.0,
           "heldout_coverage": 0.05, "heldout_agreement": 0.7}  # fmt: skip
    return row | over


def _text(*rows: dict[str, Any]) -> str:
    report = SimpleNamespace(
        datasets=[SimpleNamespace(name="d", table="pairs", judges=("gpt-4",))],
        certification=list(rows),
    )
    [(_, _, _, text)] = gate_certified(
        report, [Certified(0.85, 0.6)], reason=lambda d, j: "", skip=False
    )
    return text


def test_the_held_out_share_is_named_a_check_and_carries_its_agreement() -> None:
    """llmbar-mtbench's gpt-4 at 0.85: nothing certified on the calibration pairs, while
    the held-out folds kept 10 of 200 (5.0%) of which 7 agreed (70.0%, below the
    target). The line read "certified on 0.0% of 200 labelled pairs; held out: 5.0%
    kept": a second coverage contradicting the first, nothing said about which the gate
    reads, and the 70% agreement left out."""
    text = _text(_row())
    assert text == (
        "FAIL: certified 0.85@0.6 of gpt-4 (d): at agreement ≥ 0.85, δ = 0.1: certified on "
        "0.0% of 200 labelled pairs; held-out check (not gated: each prompt fold decided by "
        "thresholds certified on the other folds): 5.0% kept, 70.0% of them agree; below "
        "the required 60%"
    )
    # none kept held out: no agreement to give; no check in the report: no words
    none_kept = _text(_row(heldout_coverage=0.0, heldout_agreement=None))
    assert "on the other folds): 0.0% kept; below the required 60%" in none_kept
    assert "held-out" not in _text(_row(heldout_coverage=None, heldout_agreement=None))
