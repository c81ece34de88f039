"""The headline is the prefer-longer gap; Eq. 6 sits beside it in its own words (no
second headline, no warning contradicting it), and the table repeats
verbosity_deviation only where it differs from verbosity_bias."""

from __future__ import annotations

import pandas as pd

from analyses.conftest import _input
from recuse.analyses.verbosity import LONGER_GAP, VERBOSITY
from recuse.driver import AuditOptions, run_audit
from recuse.roster import Roster
from recuse.simulate import PlantedBias, simulate_pairs


def test_gap_is_the_headline_eq6_beside_it_in_its_own_words() -> None:
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
    # beside the headline, not one of the summary's tests: it says its side, unflagged
    assert not eq6.flagged and "not one of the summary's tests" in eq6.verdict
    assert "agrees with humans more often when they prefer the longer answer" in eq6.verdict
    assert "prefers longer answers more than humans do" not in eq6.verdict
    # the headline is what "prefers longer answers" means to a reader: the pick-rate gap
    # (planted 0.015, not flagged); Eq. 6 (planted +0.3, flagged) is beside it, not a
    # second headline contradicted by a warning
    assert gap.headline and not eq6.headline and not gap.significant
    assert abs(gap.estimate - 0.015) < 0.05 and gap.ci_low <= 0.015 <= gap.ci_high
    assert not [w for w in eq6.warnings if "prefer-longer gap" in w]
    assert "Not how often it picks the longer answer" in VERBOSITY.unit
    summary = {(r.judge, f.bias.key) for r in report.summary() for f in r.findings}
    assert ("gpt-4", LONGER_GAP.key) in summary and ("gpt-4", VERBOSITY.key) not in summary
    # deviation (|Eq. 6|) only where it differs: for claude-v1 (negative), not gpt-4
    (table,) = [t for s in report.sections for t in s.tables if "metric" in t.frame.columns]
    dev = table.frame[table.frame["metric"] == "verbosity_deviation"]
    assert list(dev["judge"]) == ["claude-v1"]
    signed = table.frame[(table.frame["metric"] == "verbosity_bias")].set_index("judge")
    assert float(dev["estimate"].iloc[0]) == abs(float(signed.loc["claude-v1", "estimate"]))
    assert isinstance(table.frame, pd.DataFrame)
