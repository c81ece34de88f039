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
    # enough resamples: nothing said
    (out,), note = adjust_sections([section], level=0.9, n_boot=319)
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
