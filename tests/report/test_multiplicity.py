"""Benjamini–Hochberg across the summary, by hand; the detectable effect, by hand."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from scipy.stats import norm

from recuse.report.bias import RATE_DIFFERENCE, Bias
from recuse.report.model import Finding, Section
from recuse.report.multiplicity import adjust_sections

BIAS = Bias(key="b", title="B", unit="u", positive="p", negative="n", none="0", order=1,
            span=RATE_DIFFERENCE)  # fmt: skip


def _f(judge: str, p: float | None, lo: float = 0.01, hi: float = 0.2) -> Finding:
    return Finding(judge=judge, bias=BIAS, estimate=0.1, ci_low=lo, ci_high=hi, n=50,
                   level=0.9, method="m", p_value=p, std_error=0.05,
                   p_method="bootstrap" if p is not None else "")  # fmt: skip


def test_benjamini_hochberg_by_hand() -> None:
    ps = [0.01, 0.04, 0.03, 0.2, 0.07]
    section = Section("s", "S", "intro", findings=tuple(_f(f"j{k}", p) for k, p in enumerate(ps)))
    (out,), note = adjust_sections([section], level=0.9)
    q = [f.q_value for f in out.findings]
    # sorted p: .01 .03 .04 .07 .2; p*m/rank: .05 .075 .0667 .0875 .2; running min from the top
    by_hand = {0.01: 0.05, 0.03: 0.0667, 0.04: 0.0667, 0.07: 0.0875, 0.2: 0.2}
    assert q == pytest.approx([by_hand[p] for p in ps], abs=1e-4)
    # flagged: q <= 0.10 although every raw interval (0.01, 0.2) excludes 0
    assert [f.significant for f in out.findings] == [True, True, True, False, True]
    assert "Benjamini–Hochberg" in note and "5 tests" in note


def test_a_value_fixed_by_construction_is_not_a_test_of_the_family() -> None:
    """A reward model's position rate is 0.5 by construction (p = 1): counted as a
    test it raised the others' q by m / (m − k). The family is the five tests of
    :func:`test_benjamini_hochberg_by_hand` (same q by hand), the fixed values say so."""
    ps = [0.01, 0.04, 0.03, 0.2, 0.07]
    fixed = [
        replace(_f(f"rm{k}", 1.0, 0.0, 0.0), estimate=0.0, fixed=True, std_error=0.0)
        for k in range(3)
    ]
    tests = tuple(_f(f"j{k}", p) for k, p in enumerate(ps))
    (out,), note = adjust_sections([Section("s", "S", "i", findings=(*tests, *fixed))], level=0.9)
    by_hand = {0.01: 0.05, 0.03: 0.0667, 0.04: 0.0667, 0.07: 0.0875, 0.2: 0.2}
    assert [f.q_value for f in out.findings[:5]] == pytest.approx(
        [by_hand[p] for p in ps], abs=1e-4
    )
    assert all(f.q_value is None and not f.significant for f in out.findings[5:])
    assert "across the summary's 5 tests" in note
    assert "Not tests, so not in the family: 3 values fixed by construction (B)" in note
    assert "Without a p-value" not in note


def test_a_finding_without_p_value_keeps_its_interval_flag_and_is_named() -> None:
    section = Section("s", "S", "i", findings=(_f("a", 0.5), _f("b", None)))
    (out,), note = adjust_sections([section], level=0.9)
    assert out.findings[1].q_value is None and out.findings[1].significant
    assert "Without a p-value" in note


def test_detectable_effect_is_z_sum_times_se() -> None:
    f = _f("a", 0.5)
    assert f.detectable == pytest.approx((norm.ppf(0.95) + norm.ppf(0.8)) * 0.05)


def test_audit_adjusts_by_default_and_not_with_no_fdr(tmp_path: Path) -> None:
    from recuse.cli import main
    from recuse.simulate.pairs import PlantedBias, simulate_pairs

    sim = simulate_pairs(judges={"gpt-4": PlantedBias(self_preference=0.3)}, n_prompts=60,
                         seed=1)  # fmt: skip
    path = tmp_path / "p.csv"
    sim.pairs.to_csv(path, index=False)
    for flag, adjusted in (("--fdr", True), ("--no-fdr", False)):
        out = tmp_path / flag
        assert main(["audit", str(path), flag, "--out", str(out), "--n-boot", "200"]) == 0
        d = json.loads((out / "report.json").read_text())
        qs = [f.get("q_value") for r in d["summary"] for f in r["findings"] if f["headline"]]
        assert any(q is not None for q in qs) == adjusted
        assert any("Benjamini" in n for n in d["notes"]) == adjusted
        # the figures' captions said "before the false-discovery adjustment; the summary's
        # flags are adjusted" under --no-fdr too, where nothing is adjusted
        figures = [f for s in d["sections"] for f in s["figures"]]
        captions = [f["caption"] for f in figures if "Red: the interval" in f["caption"]]
        assert captions
        for caption in captions:
            assert ("false-discovery adjustment" in caption) == adjusted, caption
            assert ("not adjusted for the number of tests: --no-fdr" in caption) != adjusted


def test_a_pooled_estimate_shown_for_several_judges_is_one_test() -> None:

    pooled = replace(BIAS, key="fam", pooled=True)
    fam = [
        Finding(judge=j, bias=pooled, estimate=0.1, ci_low=0.01, ci_high=0.2, n=50, level=0.9,
                method="m", p_value=0.03, std_error=0.05, detail="λ of family x")
        for j in ("j1", "j2", "j3")
    ]  # fmt: skip
    other = [_f("j1", 0.01), _f("j2", 0.2)]
    (out,), note = adjust_sections([Section("s", "S", "i", findings=(*fam, *other))], level=0.9)
    # three distinct tests: p = .01, .03, .2 -> q = .03, .045, .2 (by hand)
    q = [f.q_value for f in out.findings]
    assert q == pytest.approx([0.045, 0.045, 0.045, 0.03, 0.2])
    assert "3 tests" in note and "counts once" in note


def test_too_few_resamples_for_the_family_is_said() -> None:
    """A bootstrap p-value is at least 2/(B+1): with B = 100 that is 0.0198, and among 16
    tests Benjamini–Hochberg flags one bias alone only at p <= 0.10/16 = 0.00625. A bias
    whose interval is far from no bias, at the floor, is not flagged (q = 0.0198 * 16 =
    0.317): the note and the finding say why and how many resamples would do (2 * 16 /
    0.10 - 1 = 319). A regression's p-value (a Wald test, as the finding states) gets no
    such warning, whatever its section; a bootstrap one does, in any section."""
    floor = 2 / 101
    strong = replace(_f("strong", floor, lo=0.3, hi=0.5), section="favoritism", p_floor=floor)
    regression = Finding(judge="r", bias=BIAS, estimate=0.4, ci_low=0.3, ci_high=0.5, n=50,
                         level=0.9, method="ols", p_value=floor, section="self-preference",
                         p_method="wald")  # fmt: skip
    rest = [_f(f"j{k}", 0.5, lo=-0.1, hi=0.2) for k in range(14)]
    section = Section("s", "S", "i", findings=(strong, regression, *rest))
    (out,), note = adjust_sections([section], level=0.9, n_boot=100)
    got = {f.judge: f for f in out.findings}
    assert got["strong"].q_value == pytest.approx(floor * 16 / 2)  # two at the floor: rank 2
    assert not got["strong"].significant
    (warning,) = got["strong"].warnings
    assert "2/101 = 0.0198" in warning and "--n-boot 319 or more" in warning
    assert got["r"].warnings == () and all(got[f"j{k}"].warnings == () for k in range(14))
    assert "A large bias can go unflagged" in note and "--n-boot 319" in note
    # enough resamples, all kept (the floor 2/320): nothing said
    enough = Section("s", "S", "i", findings=(replace(strong, p_floor=2 / 320), regression,
                                              *rest))  # fmt: skip
    (out,), note = adjust_sections([enough], level=0.9, n_boot=319)
    assert all(f.warnings == () for f in out.findings) and "unflagged" not in note
    (out,), note = adjust_sections([section], level=0.9)  # the library's default: no n_boot
    assert "unflagged" not in note


def test_a_family_of_wald_tests_only_is_not_told_to_add_resamples() -> None:
    """An audit of a ratings table (Play Favorites, --n-boot 100): all 13 tests of the
    family are the favoritism regression's Wald tests, yet the note said 'A large bias
    can go unflagged: with 100 resamples no bootstrap p-value is below 2/101 ...; rerun
    with --n-boot 259 or more', which changes none of them. The floor is said when a
    bootstrap p-value is in the family."""
    wald = [Finding(judge=f"r{k}", bias=BIAS, estimate=0.4, ci_low=0.3, ci_high=0.5, n=50,
                    level=0.9, method="ols", p_value=0.3 if k else 1e-6,
                    section="favoritism", p_method="wald") for k in range(13)]  # fmt: skip
    (out,), note = adjust_sections([Section("s", "S", "i", findings=tuple(wald))], level=0.9,
                                   n_boot=100)  # fmt: skip
    assert "unflagged" not in note and "resamples" not in note, note
    assert out.findings[0].significant and all(f.warnings == () for f in out.findings)
    # one bootstrap p among them: the note is back (14 tests: 2 * 14 / 0.1 - 1 = 279)
    mixed = (*wald, _f("b", 0.5, lo=-0.1, hi=0.2))
    (out,), note = adjust_sections([Section("s", "S", "i", findings=mixed)], level=0.9,
                                   n_boot=100)  # fmt: skip
    assert "A large bias can go unflagged" in note and "--n-boot 279" in note


def _lone(kept: int, asked: int, level: float = 0.9, m: int = 16) -> tuple[Finding, str]:
    """A bias far from no bias, its bootstrap p-value at the floor 2/(kept+1) of the
    ``kept`` resamples (of ``asked``), among ``m`` tests whose others are null."""
    floor = 2 / (kept + 1)
    strong = replace(_f("strong", floor, lo=0.3, hi=0.5), level=level, p_floor=floor)
    rest = [replace(_f(f"j{k}", 0.5, lo=-0.1, hi=0.2), level=level) for k in range(m - 1)]
    (out,), note = adjust_sections([Section("s", "S", "i", findings=(strong, *rest))],
                                   level=level, n_boot=asked)  # fmt: skip
    return out.findings[0], note


def test_too_few_resamples_kept_is_said_at_the_threshold() -> None:
    """Before: the note counted the resamples asked for, the floor those kept. 319
    resamples asked for among 16 tests at 90% are just enough (2 * 16 / 0.10 - 1 = 319:
    2/320 = 0.00625 = 0.10/16); with one dropped, 318 are kept, the floor is 2/319 =
    0.00627 > 0.00625, so a lone bias at the floor has q = 16 * 2/319 = 0.1003 > 0.10
    and is not flagged, and nothing was said. Now the note and the finding say so with
    both counts, and the rerun asked for keeps enough at the same share kept: 319 kept
    need 319 * 319/318 = 320.003, so 321 asked for."""
    f, note = _lone(318, 319)
    assert f.q_value == pytest.approx(16 * 2 / 319) and not f.significant
    (warning,) = f.warnings
    for said in (warning, note):
        assert "with 318 of the 319 resamples kept" in said, said
        assert "2/319 = 0.0063," in said and "p ≤ 0.0062 (0.10 / 16)" in said
        assert "rerun with --n-boot 321 or more (319 must be kept)" in said
    assert "A large bias can go unflagged" in note
    # none dropped, too few asked for: the words as before (one count)
    f, note = _lone(100, 100)
    assert "with 100 resamples no bootstrap p-value is below 2/101 = 0.0198," in note
    assert "rerun with --n-boot 319 or more;" not in note and note.endswith("319 or more.")


def test_a_lone_bias_at_the_floor_with_just_enough_resamples_is_flagged() -> None:
    """Before: with 319 resamples, all kept, among 16 tests at 90%, a lone bias at the
    floor has q = 16 * 2/320 = 0.1, which is 1 - level; but 1 - 0.9 is
    0.09999999999999998 in floating point, so it was not flagged, and nothing was said
    (319 is enough by the note's rule). It is flagged now, and counted so in the note."""
    f, note = _lone(319, 319)
    assert f.q_value == pytest.approx(0.1)
    assert f.significant and f.warnings == () and "unflagged" not in note
    assert "(1 flagged; 1 with raw p ≤ 0.10)" in note
    # a hair above the threshold is still not flagged
    assert not replace(f, q_value=0.1 * (1 + 1e-6)).significant


def test_each_finding_is_told_of_the_resamples_it_kept() -> None:
    """Findings keep different numbers of resamples (a statistic undefined in some of
    them). One kept 200 of 319: its floor 2/201 = 0.00995 is above 0.10/16, its
    interval far from 0, unflagged (q = 16 * 0.00995 = 0.159): it is told 200 of 319,
    and to ask for ceil(319 * 319/200) = 509. Another kept all 319 and is unflagged for
    its p-value (0.03, q = 0.03 * 16/2 = 0.24), not the floor: no warning. The note
    names the fewest kept (200)."""
    few = replace(_f("few", 2 / 201, lo=0.3, hi=0.5), p_floor=2 / 201)
    full = replace(_f("full", 0.03, lo=0.01, hi=0.5), p_floor=2 / 320)
    rest = [replace(_f(f"j{k}", 0.5, lo=-0.1, hi=0.2), p_floor=2 / 320) for k in range(14)]
    (out,), note = adjust_sections([Section("s", "S", "i", findings=(few, full, *rest))],
                                   level=0.9, n_boot=319)  # fmt: skip
    got = {f.judge: f for f in out.findings}
    assert got["few"].q_value == pytest.approx(16 * 2 / 201) and not got["few"].significant
    assert got["full"].q_value == pytest.approx(0.03 * 16 / 2) and not got["full"].significant
    (warning,) = got["few"].warnings
    assert "with 200 of the 319 resamples kept" in warning and "2/201 = 0.0100," in warning
    assert "--n-boot 509 or more (319 must be kept)" in warning
    assert got["full"].warnings == () and all(got[f"j{k}"].warnings == () for k in range(14))
    assert "with 200 of the 319 resamples kept" in note


def test_the_thresholds_are_told_apart_when_four_decimals_do_not() -> None:
    """At 95% among 8 tests one bias alone needs p ≤ 0.05/8 = 0.00625; 318 kept of 319
    give a floor 2/319 = 0.006270: both read 0.0063 at four decimals ("no p-value is
    below 0.0063 ... needs p ≤ 0.0063"), so five are shown."""
    f, note = _lone(318, 319, level=0.95, m=8)
    assert not f.significant
    assert "2/319 = 0.00627," in note and "p ≤ 0.00625 (0.05 / 8)" in note


def test_the_note_reads_the_count_from_the_floor_from_result_sets() -> None:
    """End to end from a metric's result: 319 resamples with one dropped give
    p_floor 2/319 (from_result), and the note reads 318 from it."""
    from recuse.analyses.base import from_result
    from recuse.analyses.self_preference import ANALYSIS
    from recuse.metrics.result import MetricResult

    bias = next(b for b in ANALYSIS.biases if b.key == "self_preference_calibrated")
    r = MetricResult(metric="self_preference_calibrated", estimate=0.4, ci_low=0.3, ci_high=0.5,
                     level=0.9, n=40, n_clusters=20, method="m", judge="j", n_boot=319,
                     n_boot_dropped=1, p_value=2 / 319)  # fmt: skip
    f = from_result(ANALYSIS, bias, r, dataset="d")
    assert isinstance(f, Finding)
    rest = [replace(f, judge=f"j{k}", p_value=0.5, ci_low=-0.1) for k in range(15)]
    (out,), note = adjust_sections([Section("s", "S", "i", findings=(f, *rest))], level=0.9,
                                   n_boot=319)  # fmt: skip
    assert "with 318 of the 319 resamples kept" in note
    assert any("318 of the 319" in w for w in out.findings[0].warnings)


def test_the_detectable_line_is_the_shown_intervals_and_not_on_a_cell_adjusted_away() -> None:
    """A cell whose raw interval excludes no bias but which the adjustment left unflagged
    showed "±0.12 detectable", titled "no bias detected": of the unadjusted test, which
    did detect it (its interval, shown, excludes 0), beside the note giving its q. The
    line is now shown only where the interval shown holds no bias; the unflagged cell
    keeps its q note, and the JSON its detectable effect, a number of its own."""
    import re

    from recuse.report import AuditReport, Provenance, Source
    from recuse.report.html import render_html

    holds = _f("j5", 0.5, lo=-0.05)  # raw interval holds 0: nothing found
    section = Section("s", "S", "i", findings=(*(_f(f"j{k}", p) for k, p in enumerate(
        [0.01, 0.04, 0.03, 0.2, 0.07])), holds))  # fmt: skip
    (out,), _ = adjust_sections([section], level=0.9)
    away, kept = out.findings[3], out.findings[5]
    # six tests: sorted p .01 .03 .04 .07 .2 .5, p*6/rank .06 .09 .08 .105 .24 .5, running
    # min from the top: q = .06 .08 .08 .105 .24 .5 — j0-j2 flagged, j3 and j4 adjusted away
    q = [f.q_value for f in out.findings]
    assert q == pytest.approx([0.06, 0.08, 0.08, 0.24, 0.105, 0.5])
    assert [f.adjusted_away for f in out.findings] == [False, False, False, True, True, False]
    assert not kept.excludes_null and not kept.significant
    assert [f.shows_detectable for f in out.findings] == [False] * 5 + [True]
    # (z_0.95 + z_0.80) x 0.05 = (1.6449 + 0.8416) x 0.05 = 0.1243
    assert kept.detectable_text == "0.12" and away.detectable == pytest.approx(0.1243, abs=1e-4)
    prov = Provenance((Source("d", "pairs", 50, judges=tuple(f.judge for f in out.findings)),),
                      "0.1.0", None, {"multiple testing (--fdr)": "Benjamini–Hochberg"}, 0,
                      "2025-01-01T00:00:00", "3.11")  # fmt: skip
    page = render_html(AuditReport("Audit", (out,), (), (), prov, 0.9))

    def cell(judge: str) -> str:
        found = re.search(rf'<tr data-judge="{judge}">.*?<td data-bias="b">(.*?)</td>', page,
                          flags=re.S)  # fmt: skip
        assert found is not None, judge
        return found.group(1)

    for judge, said in (("j3", "q = 0.240 &gt; 0.1"), ("j4", "q = 0.105 &gt; 0.1")):
        assert 'class="mde"' not in cell(judge) and said in cell(judge)  # no "no bias detected"
    assert "&plusmn;0.12 detectable</span>" in cell("j5") and "data-adjusted" not in cell("j5")
    assert all('class="mde"' not in cell(f"j{k}") for k in (0, 1, 2))  # flagged
    # --no-fdr: the same interval is flagged, and shows no line either
    raw = _f("j3", 0.2)  # q_value None
    assert raw.significant and not raw.shows_detectable
    assert away.to_dict()["detectable_with_80pct_power"] == pytest.approx(0.1243, abs=1e-4)


def test_the_notes_flag_count_leaves_out_what_the_summary_reads_negligible() -> None:
    """The note counted every test the adjustment kept as flagged: on the audit of
    llmbar-mtbench and play-favorites it read "14 flagged" beside a summary with 6
    flagged biases, the other 8 (ratings' self-biases within ±0.05, their intervals
    excluding 0) marked negligible, which the summary defines as not flagged. Two tests
    kept, one of them negligible: 1 flagged, and the other said as negligible."""
    big = replace(_f("a", 0.001, lo=0.06, hi=0.2), material=0.05)  # 0.1 [0.06, 0.2]
    small = replace(_f("b", 0.001, lo=0.01, hi=0.03), material=0.05)  # within ±0.05
    none = replace(_f("c", 0.8, lo=-0.1, hi=0.2), material=0.05)
    section = Section("s", "S", "i", findings=(big, small, none))
    (out,), note = adjust_sections([section], level=0.9)
    assert [f.flagged for f in out.findings] == [True, False, False]
    assert out.findings[1].significant and out.findings[1].materiality == "negligible"
    assert "(1 flagged, 1 more kept by the adjustment but negligible (not flagged); " in note
    assert "2 with raw p ≤ 0.10)" in note


def test_a_value_fixed_by_construction_has_no_detectable_effect() -> None:
    """JudgeBench's reward models: position 0.50 [0.50, 0.50], fixed by construction (a
    reward model scores each answer alone), its bootstrap standard error 0. The matrix
    cell read "negligible … ±0.000 detectable" and report.json held
    detectable_with_80pct_power 0.0: as if the test would find the smallest position
    bias, where none can exist. A judge whose interval is as narrow but not fixed keeps
    its line: (z_0.95 + z_0.80) × 0.002 = 0.005."""
    from recuse.analyses import BIASES

    fixed = Finding(judge="rm", bias=BIASES["position"], estimate=0.5, ci_low=0.5,
                    ci_high=0.5, n=350, level=0.9, method="m", clusters=60, std_error=0.0,
                    p_value=1.0, p_method="bootstrap", fixed=True)  # fmt: skip
    assert fixed.informative and fixed.detectable is None and not fixed.shows_detectable
    assert fixed.detectable_text == ""
    assert fixed.to_dict()["detectable_with_80pct_power"] is None
    narrow = replace(fixed, judge="j", ci_low=0.497, ci_high=0.503, std_error=0.002, fixed=False)
    assert narrow.detectable == pytest.approx(0.004973, abs=1e-6)
    assert narrow.shows_detectable and narrow.detectable_text == "0.005"


@pytest.mark.parametrize(
    ("level", "q"), [(0.9, "0.10"), (0.95, "0.05"), (0.975, "0.025"), (0.999, "0.001")]
)
def test_the_notes_q_is_one_minus_the_level_as_typed(level: float, q: str) -> None:
    """The note wrote q = 1 − level with two decimals: a level of 0.999 read "control at
    q = 0.00" (no discoveries allowed at all) and 0.975 read q = 0.03 (0.025)."""
    section = Section("s", "S", "i", findings=(_f("a", 0.0004), _f("b", 0.5)))
    (_,), note = adjust_sections([section], level=level)
    assert f"false-discovery control at q = {q} across" in note, note
    assert f"with raw p ≤ {q});" in note, note
