"""The calibrated self- and family-preference headlines read material / small /
negligible like every other finding (0.05 of pick probability, the scale of DP and of
the ladder's parts), never the bare "flagged" of a bias without a threshold."""

from __future__ import annotations

import pytest

from recuse.analyses import BIASES
from recuse.analyses.family_preference import CALIBRATED as FAMILY
from recuse.analyses.self_preference import ANALYSIS, CALIBRATED, DP
from recuse.analyses.self_preference_ladder import PARTS
from recuse.data.inputs import Input
from recuse.driver import AuditOptions, run_audit
from recuse.report import AuditReport, Finding, Source
from recuse.report.summary_table import reading, summary_lines
from recuse.roster import Entry, Roster
from recuse.simulate.self_preference import AuthorJudge, simulate_self_preference


def test_the_default_is_the_pick_probability_scale_of_its_neighbours() -> None:
    assert CALIBRATED.material == FAMILY.material == 0.05
    assert BIASES[CALIBRATED.key].material == BIASES[FAMILY.key].material == 0.05
    # the same unit as DP (a pick-rate difference) and the ladder's parts (that add up
    # to the headline), so one threshold reads the same on all of them
    assert DP.material == CALIBRATED.material
    assert {p.material for p in PARTS.values()} == {CALIBRATED.material}


def _finding(est: float, lo: float, hi: float) -> Finding:
    return Finding(judge="j", bias=CALIBRATED, estimate=est, ci_low=lo, ci_high=hi, n=200,
                   level=0.9, method="m", dataset="d", material=CALIBRATED.material)  # fmt: skip


@pytest.mark.parametrize(
    ("est", "lo", "hi", "word", "red"),
    [
        (0.12, 0.07, 0.17, "▲ material", True),  # 0.12 ≥ 0.05 from 0, interval above 0
        (0.03, 0.01, 0.06, "▲ small", True),  # flagged, nearer than 0.05
        (-0.02, -0.04, -0.01, "negligible", False),  # excludes 0, but within ±0.05
        (0.00, -0.03, 0.04, "negligible", False),  # not flagged, ruled small
        (0.02, -0.08, 0.12, "no detectable bias", False),  # too wide to say
    ],
)
def test_the_words_by_hand(est: float, lo: float, hi: float, word: str, red: bool) -> None:
    f = _finding(est, lo, hi)
    assert reading(f) == word and f.flagged is red


def _audit(tau: float, material: dict[str, float] | None = None) -> AuditReport:
    """Three judges that are also authors, a self term ``tau`` planted in m0 only."""
    strengths = {"m0": 1.2, "m1": 0.4, "m2": 0.0, "m3": -0.5, "m4": -1.0}
    cast = {"m0": AuthorJudge(3.0, 0.5, tau), "m1": AuthorJudge(1.0, 0.5),
            "m2": AuthorJudge(0.5, -0.3)}  # fmt: skip
    sim = simulate_self_preference(cast, strengths, n_prompts=200, seed=11)
    roster = Roster.builtin()
    for m in strengths:
        roster.add(Entry(m, m))
    source = Source("sim", "pairs", len(sim.pairs), judges=tuple(cast))
    options = AuditOptions(n_boot=200, robustness=(), only=(ANALYSIS.id,),
                           material=material or {})  # fmt: skip
    return run_audit([Input("sim", "pairs", sim.pairs, source)], options=options,
                     roster=roster)  # fmt: skip


def test_the_audit_reads_a_planted_self_term_material_and_the_rest_not_red() -> None:
    report = _audit(0.3)
    by = {(f.judge, f.bias.key): f for f in report.findings}
    m0 = by[("m0", CALIBRATED.key)]
    assert m0.material == 0.05 and m0.estimate >= 0.05 and m0.ci_low > 0
    assert m0.materiality == "material" and m0.flagged
    lines = {(ln.judge, ln.reading) for ln in summary_lines(report)}
    assert ("m0", "▲ material") in lines
    assert not any("flagged" in r for _, r in lines)  # no bare "flagged" any more
    for j in ("m1", "m2"):  # no self term: not red, whatever the interval
        f = by[(j, CALIBRATED.key)]
        assert f.material == 0.05 and not f.flagged
        assert f.materiality in ("", "negligible")
    # --material overrides the default: a threshold between the estimate and its upper
    # bound reads "small" (flagged, nearer than the threshold)
    loose = _audit(0.3, {CALIBRATED.key: (m0.estimate + m0.ci_high) / 2})
    m0_loose = {(f.judge, f.bias.key): f for f in loose.findings}[("m0", CALIBRATED.key)]
    assert m0_loose.estimate == pytest.approx(m0.estimate)
    assert m0_loose.materiality == "small" and m0_loose.flagged
