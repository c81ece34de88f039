"""Eq. 6's words say what it is, a contradiction with the prefer-longer gap is a warning,
and the table repeats verbosity_deviation only where it differs from verbosity_bias."""

from __future__ import annotations

import pandas as pd

from analyses.conftest import _input
from recuse.analyses.verbosity import LONGER_GAP, VERBOSITY
from recuse.driver import AuditOptions, run_audit
from recuse.roster import Roster
from recuse.simulate import PlantedBias, simulate_pairs


def test_eq6_words_gap_warning_and_deviation_rows() -> None:
    # a planted Eq. 6 of +0.3 with accuracy 0.55 and humans preferring longer answers
    # (h = 0.15): the prefer-longer gap is 0.3/2 - 2 * 0.15 * 0.45 = 0.015, near 0
    judges = {"gpt-4": PlantedBias(verbosity=0.3, accuracy=0.55),
              "claude-v1": PlantedBias(verbosity=-0.3, accuracy=0.8)}  # fmt: skip
    sim = simulate_pairs(judges=judges, n_prompts=300, seed=2)
    assert abs(sim.true_value("verbosity_longer_gap", "gpt-4") - 0.015) < 1e-12
    options = AuditOptions(n_boot=300, only=("verbosity",), robustness=())
    report = run_audit([_input("sim", "pairs", sim.pairs)], options=options,
                       roster=Roster.builtin())  # fmt: skip
    by = {(f.judge, f.bias.key): f for f in report.findings}
    eq6, gap = by[("gpt-4", VERBOSITY.key)], by[("gpt-4", LONGER_GAP.key)]
    assert eq6.significant and gap.ci_low <= 0 <= gap.ci_high
    assert "agrees with humans more often when they prefer the longer answer" in eq6.verdict
    assert "prefers longer answers more than humans do" not in eq6.verdict
    (warning,) = [w for w in eq6.warnings if "prefer-longer gap" in w]
    assert gap.text in warning
    # deviation (|Eq. 6|) only where it differs: for claude-v1 (negative), not gpt-4
    (table,) = [t for s in report.sections for t in s.tables if "metric" in t.frame.columns]
    dev = table.frame[table.frame["metric"] == "verbosity_deviation"]
    assert list(dev["judge"]) == ["claude-v1"]
    signed = table.frame[(table.frame["metric"] == "verbosity_bias")].set_index("judge")
    assert float(dev["estimate"].iloc[0]) == abs(float(signed.loc["claude-v1", "estimate"]))
    assert isinstance(table.frame, pd.DataFrame)
