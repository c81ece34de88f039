"""The gate's rule on single findings (the CLI's exit codes: tests/cli/test_cli_gate.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recuse.errors import ConfigError
from recuse.report.gate import Threshold, evaluate, parse_thresholds


def _finding(bias: str, judge: str, est: float, lo: float, hi: float, **more: Any) -> dict:
    return {"bias": bias, "judge": judge, "dataset": "d", "estimate": est, "ci_low": lo,
            "ci_high": hi, "null": 0.0, "level": 0.9, "n": 100, **more}  # fmt: skip


def test_max_is_measured_from_the_findings_null() -> None:
    pos = _finding("position", "j", 0.56, 0.53, 0.58, null=0.5)
    assert evaluate(pos, Threshold("position", 0.1)).outcome == "pass"  # 0.5 +- 0.1
    assert evaluate(pos, Threshold("position", 0.05)).outcome == "inconclusive"
    assert evaluate(pos, Threshold("position", 0.02)).outcome == "fail"  # 0.53 > 0.52
    neg = _finding("verbosity", "j", -0.2, -0.3, -0.15)
    assert evaluate(neg, Threshold("verbosity", 0.1)).outcome == "fail"  # both signs count


def test_min_bound() -> None:
    acc = _finding("agreement_accuracy", "j", 0.74, 0.71, 0.77, null=0.5)
    assert evaluate(acc, Threshold("a", 0.7, "min")).outcome == "pass"
    assert evaluate(acc, Threshold("a", 0.75, "min")).outcome == "inconclusive"
    assert evaluate(acc, Threshold("a", 0.8, "min")).outcome == "fail"


def test_n_needed_uses_the_standard_error_when_present() -> None:
    f = _finding("x", "j", 0.04, 0.01, 0.07, std_error=0.01)
    line = evaluate(f, Threshold("x", 0.05))
    # z(0.95) = 1.6449; n = 100 * (1.6449 * 0.01 / 0.01)^2 = 270.6 -> 271
    assert line.outcome == "inconclusive" and line.n_needed == 271


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.123, 0.9999])
def test_the_gates_z_is_scipys_normal_quantile(level: float) -> None:
    """The gate's z (the standard library's NormalDist, so it imports no SciPy) is
    SciPy's norm.ppf((1 + level) / 2) to 1e-15 of itself (6.6e-16 at most measured over
    2,000 levels in [0.01, 0.999])."""
    from scipy.stats import norm

    from recuse.report.gate import two_sided_z

    scipy_z = float(norm.ppf((1 + level) / 2))
    assert abs(two_sided_z(level) - scipy_z) <= 1e-15 * scipy_z


def test_parse_thresholds_refuses_what_it_cannot_read() -> None:
    assert parse_thresholds(["a=0.1", "b=0.2,c=0"]) == [
        Threshold("a", 0.1),
        Threshold("b", 0.2),
        Threshold("c", 0.0),
    ]
    for bad in ("a", "a=", "=0.1", "a=-1", "a=nan", "a=x"):
        with pytest.raises(ConfigError, match="BIAS=NUMBER"):
            parse_thresholds([bad])


def test_the_example_in_a_threshold_error_gates_the_calibrated_headline() -> None:
    """The error's example is what a user copies: it named ``self_preference_eo``, the
    papers' equal opportunity, which reads high for any strong judge biased or not (the
    docs gate ``self-preference``, the calibrated headline); it names the analysis id."""
    for texts in (["a"], []):
        with pytest.raises(ConfigError) as caught:
            parse_thresholds(texts)
        assert "--max self-preference=0.05" in str(caught.value)
        assert "self_preference_eo" not in str(caught.value)


def test_a_bias_given_two_bounds_of_one_kind_is_refused() -> None:
    """``--max position=0.1 --max position=0.2`` gated the bias at both bounds, printing a
    PASS and a FAIL line for one judge; a --max and a --min of one bias are a band."""
    for texts in (["position=0.1", "position=0.2"], ["position=0.1,position=0.1"]):
        with pytest.raises(ConfigError, match=r"position is given twice .* one --max bound"):
            parse_thresholds(texts)
    band = [*parse_thresholds(["position=0.1"]), *parse_thresholds(["position=0.01"], "min")]
    assert [t.bound for t in band] == ["max", "min"]


def test_gate_doctests() -> None:
    import doctest

    import recuse.report.gate

    result = doctest.testmod(recuse.report.gate)
    assert result.attempted > 0 and result.failed == 0


def test_an_estimate_almost_on_the_bound_is_too_close_to_decide_not_a_sample_size() -> None:
    """LLMBar's PaLM-2 position, 0.599 against 0.5 + 0.1, read 'roughly 226,053
    comparisons (now 192) would decide it': the formula, but the estimate's own error is
    far larger than the 0.001 it divides by. Past 100 times n (the distance under a
    tenth of the half-width) the line says the estimate sits too close to the bound."""
    palm = _finding("position", "palm-2", 0.599, 0.566, 0.636, null=0.5, n=192)
    line = evaluate(palm, Threshold("position", 0.1))
    # no standard error: h = (0.636 - 0.566) / 2 = 0.035, g = 0.1 - 0.099 = 0.001,
    # n (h / g)^2 = 192 * 35^2 = 235,200 (ceil of a float within one of it)
    assert line.outcome == "inconclusive" and line.too_close
    assert line.n_needed is not None and abs(line.n_needed - 235_200) <= 1
    assert line.gap is not None and abs(line.gap - 0.001) < 1e-12
    assert "the estimate, 0.599, sits 0.001 below the bound 0.6" in line.text
    assert "too close to the bound for more data to decide it at any practical size" in line.text
    assert "half-width (0.035)" in line.text and "1,225 times the 192 now" in line.text
    assert "roughly" not in line.text
    # an estimate above the bound says so
    above = evaluate({**palm, "estimate": 0.6005}, Threshold("position", 0.1))
    assert above.too_close and "the estimate, 0.6005, sits 0.0005 above the bound 0.6" in (
        above.text
    )


@pytest.mark.parametrize(("multiple", "too_close"), [(99, False), (101, True)])
def test_too_close_starts_at_a_hundred_times_the_data(multiple: int, too_close: bool) -> None:
    """n (h / g)^2 > 100 n exactly when g < h / 10: just either side of it."""
    half, n = 0.1, 100
    gap = half / multiple**0.5
    f = _finding("x", "j", 0.05 - gap, 0.05 - gap - half, 0.05 - gap + half, n=n)
    line = evaluate(f, Threshold("x", 0.05))
    assert line.outcome == "inconclusive" and line.too_close is too_close
    assert line.n_needed is not None and abs(line.n_needed - multiple * n) <= 1
    assert ("roughly" in line.text) is not too_close


def test_an_estimate_exactly_on_the_bound_says_so() -> None:
    f = _finding("x", "j", 0.05, 0.0, 0.1)
    line = evaluate(f, Threshold("x", 0.05))
    assert line.too_close and line.n_needed is None and line.gap == 0
    assert "the estimate sits on the bound 0.05: more data alone may not decide it" in line.text
    # without n there is no projection to make, and the line says why
    no_n = {k: v for k, v in _finding("x", "j", 0.04, 0.0, 0.08).items() if k != "n"}
    line = evaluate(no_n, Threshold("x", 0.05))
    assert not line.too_close and "the report gives no n" in line.text


def test_numbers_read_as_the_audit_prints_them() -> None:
    """The gate printed `0.0007544 [-0.1228, 0.1093]` (raw floats, ASCII minus) where the
    audit prints `+0.00 [−0.12, 0.11]`."""
    f = _finding("self_preference_calibrated", "j", 0.0007544, -0.1228, 0.1093)
    line = evaluate(f, Threshold("self_preference_calibrated", 0.2))
    assert line.outcome == "pass"
    assert "j (d): +0.00 [\u22120.12, 0.11] (90% interval)" in line.text
    assert "the whole interval lies within ±0.2" in line.text
    assert "0.0007544" not in line.text and "-" not in line.text.split(": ", 2)[2]
    # a rate around 0.5 and a quality score print unsigned, as the audit's do
    pos = evaluate(_finding("position", "j", 0.7025, 0.6675, 0.7378, null=0.5),
                   Threshold("position", 0.1))  # fmt: skip
    assert "0.70 [0.67, 0.74]" in pos.text and "+0.70" not in pos.text
    assert pos.outcome == "fail" and "the whole interval lies above 0.6 (0.5 + 0.1)" in pos.text
    ece = evaluate(_finding("calibration_ece", "j", 0.031, 0.012, 0.05), Threshold("e", 0.1),
                   quality=True)  # fmt: skip
    assert "j (d): 0.031 [0.012, 0.050]" in ece.text
    below = evaluate(_finding("verbosity", "j", -0.2, -0.3, -0.15), Threshold("v", 0.1))
    assert "\u22120.20 [\u22120.30, \u22120.15]" in below.text
    assert "the whole interval lies below \u22120.1" in below.text


def test_a_rounded_end_on_or_across_the_bound_gets_its_exact_comparison() -> None:
    """0.6004 prints 0.60 and 0.5996 prints 0.60: against the bound 0.6 the line adds the
    comparison that decides it; an end the rounding leaves on its side adds nothing."""
    over = evaluate(_finding("position", "j", 0.58, 0.55, 0.6004, null=0.5),
                    Threshold("position", 0.1))  # fmt: skip
    assert over.outcome == "inconclusive"
    shown = "0.58 [0.55, 0.60] (90% interval); the interval straddles the bound 0.6 (0.5 + 0.1) "
    assert shown in over.text
    assert "(high end 0.6004 > 0.6)" in over.text
    under = evaluate(_finding("position", "j", 0.58, 0.55, 0.5996, null=0.5),
                     Threshold("position", 0.1))  # fmt: skip
    assert under.outcome == "pass" and "(high end 0.5996 < 0.6)" in under.text
    clear = evaluate(_finding("position", "j", 0.58, 0.55, 0.59, null=0.5),
                     Threshold("position", 0.1))  # fmt: skip
    assert clear.outcome == "pass" and "end" not in clear.text
    # the bound a user means, not its float sum: 0.7 + 0.1 is 0.7999999999999999
    edge = evaluate(_finding("position", "j", 0.75, 0.7, 0.8, null=0.7),
                    Threshold("position", 0.1))  # fmt: skip
    assert edge.outcome == "pass" and "0.7 ± 0.1 = [0.6, 0.8]" in edge.text


def test_min_and_straddling_both_bounds_are_written_out() -> None:
    acc = _finding("agreement_accuracy", "j", 0.74, 0.71, 0.77, null=0.5)
    assert "lies at or above the bound 0.7" in evaluate(acc, Threshold("a", 0.7, "min")).text
    assert "lies below the bound 0.8" in evaluate(acc, Threshold("a", 0.8, "min")).text
    assert "straddles the bound 0.75" in evaluate(acc, Threshold("a", 0.75, "min")).text
    wide = _finding("x", "j", 0.0, -0.3, 0.3)
    line = evaluate(wide, Threshold("x", 0.1))
    assert "straddles both bounds, \u22120.1 and 0.1 (0 ± 0.1)" in line.text


def test_a_rate_exactly_on_its_bound_away_from_the_null_is_on_the_bound() -> None:
    """A first-position rate of 240/400 = 0.6 against ``--max position=0.1`` (the band
    0.5 ± 0.1) sits on the bound 0.6. The distance was float arithmetic, |0.6 − 0.5| −
    0.1 = 2.8e−17, so the line said the estimate sat 2.8e−17 below the bound and
    projected 1.3e33 comparisons; below the null too (0.3 on 0.5 − 0.2)."""
    for est, x in ((0.6, 0.1), (0.3, 0.2)):
        f = _finding("position", "j", est, est - 0.05, est + 0.05, null=0.5, n=400)
        line = evaluate(f, Threshold("position", x))
        assert line.outcome == "inconclusive" and line.gap == 0 and line.n_needed is None
        assert f"the estimate sits on the bound {est}: more data alone" in line.text


def test_an_interval_end_exactly_on_the_bound_is_within_it() -> None:
    """``--max`` is "within x of the no-bias value", ends included. The bound was rounded
    to 12 decimals (so that 0.7 + 0.1 reads 0.8), which moved a bound given to full
    precision: an interval ending at 0.33571915785840817 (LLMBar's GPT-3.5
    self_preference_eo, n-boot 1000) read inconclusive against that very bound, and one
    starting on it failed. The bound is the decimal sum of the no-bias value and x as
    written, as near as a float holds it: both cases as at 442ebec, 0.7 + 0.1 still 0.8."""
    hi = 0.33571915785840817
    f = _finding("self_preference_eo", "j", 0.1, -0.1, hi)
    assert evaluate(f, Threshold("self_preference_eo", hi)).outcome == "pass"
    above = _finding("self_preference_eo", "j", 0.5, hi, 0.6)
    assert evaluate(above, Threshold("self_preference_eo", hi)).outcome == "inconclusive"
    # a no-bias value and a bound whose float sum misses the decimal one
    assert 0.7 + 0.1 != 0.8 and 0.5 + 0.1 == 0.6
    odd = _finding("x", "j", 0.75, 0.7, 0.8, null=0.7)
    assert evaluate(odd, Threshold("x", 0.1)).outcome == "pass"
    assert evaluate({**odd, "ci_high": 0.8000000000000002}, Threshold("x", 0.1)).outcome == (
        "inconclusive"
    )
    pos = _finding("position", "j", 0.55, 0.5, 0.5 + 0.09894805978331686, null=0.5)
    assert evaluate(pos, Threshold("position", 0.09894805978331686)).outcome == "pass"


def test_a_bound_is_written_as_given() -> None:
    """The bound was written with 6 significant digits (``%g``): --max 0.1234567891
    read 'lies within 0.5 ± 0.123457 = [0.376543, 0.623457]', a bound other than the
    one applied, and an interval end on a full-precision bound read '(high end
    0.33571915785840817 = 0.335719)'. Bounds are written in the fewest digits that give
    them back; a short one reads as before (0.1, 0.6, 1)."""
    pos = _finding("position", "j", 0.51, 0.48, 0.54, null=0.5)
    text = evaluate(pos, Threshold("position", 0.1234567891)).text
    assert "within 0.5 ± 0.1234567891 = [0.3765432109, 0.6234567891]" in text
    hi = 0.33571915785840817
    text = evaluate(_finding("b", "j", 0.2, 0.08, hi), Threshold("b", hi)).text
    assert f"within ±{hi!r} (high end {hi!r} = {hi!r})" in text
    assert "within 0.5 ± 0.1 = [0.4, 0.6]" in evaluate(pos, Threshold("position", 0.1)).text
    acc = _finding("a", "j", 0.8, 0.75, 0.85, null=0.5)
    assert "at or above the bound 0" in evaluate(acc, Threshold("a", 0.0, "min")).text
    assert "below the bound 1;" in evaluate(acc, Threshold("a", 1.0, "min")).text + ";"


def test_an_interval_that_rules_nothing_out_neither_passes_nor_fails() -> None:
    """A judge always right on 6 prompts: EO 0.00 [0.00, 0.00], no variation in the
    resamples. The audit reads it "no detectable bias", never negligible (a real 0.2
    difference gives that sample half the time), yet the gate passed it against ±0.05
    ("the whole interval lies within"); a first-position rate 1.00 [1.00, 1.00] from 3
    prompts (the report: p = 0.25, not flagged) failed ±0.1. Both are inconclusive
    now, saying why; a value fixed by construction (a reward model's position, 0.5)
    and a zero-width interval in an older report without its "no variation" warning
    still pass."""
    said = ["no variation in the resamples: the interval says nothing"]
    flat = _finding("self_preference_eo", "j", 0.0, 0.0, 0.0, clusters=6,
                    fixed_by_construction=False, warnings=said)  # fmt: skip
    line = evaluate(flat, Threshold("self_preference_eo", 0.05))
    assert line.outcome == "inconclusive"
    assert "of zero width, the resamples never varied" in line.text
    assert "rules nothing out" in line.text
    few = _finding("position", "j", 1.0, 1.0, 1.0, null=0.5, clusters=3, n=6)
    line = evaluate(few, Threshold("position", 0.1))
    assert line.outcome == "inconclusive" and "from 3 prompts" in line.text
    # an older report (no fixed_by_construction): its warning tells
    old = {k: v for k, v in flat.items() if k != "fixed_by_construction"}
    assert evaluate(old, Threshold("self_preference_eo", 0.05)).outcome == "inconclusive"
    fixed = _finding("position", "rm", 0.5, 0.5, 0.5, null=0.5, clusters=6,
                     fixed_by_construction=True)  # fmt: skip
    assert evaluate(fixed, Threshold("position", 0.05)).outcome == "pass"
    assert evaluate({**fixed, "fixed_by_construction": None, "warnings": []},
                    Threshold("position", 0.05)).outcome == "pass"  # fmt: skip
    # a narrow interval with width still reads by its ends
    narrow = _finding("self_preference_eo", "j", 0.0, -0.01, 0.01, clusters=6)
    assert evaluate(narrow, Threshold("self_preference_eo", 0.05)).outcome == "pass"


def test_a_clamped_zero_width_interval_with_a_standard_error_reads_by_its_ends() -> None:
    """A calibration error whose whole interval of the squared error lies below 0 reads
    0.00 [0.00, 0.00] with a standard error (the jackknife's): its ends were clamped at
    0, its resamples did vary. It passes --max calibration_ece=0.05, as the audit reads
    it (informative), unlike a bootstrap's zero width with no variation."""
    from recuse.analyses import BIASES
    from recuse.report import Finding

    ece = _finding("calibration_ece", "j", 0.0, 0.0, 0.0, clusters=40, std_error=0.004,
                   fixed_by_construction=False)  # fmt: skip
    assert evaluate(ece, Threshold("calibration_ece", 0.05)).outcome == "pass"
    f = Finding(judge="j", bias=BIASES["calibration_ece"], estimate=0.0, ci_low=0.0,
                ci_high=0.0, n=200, level=0.9, method="m", clusters=40,
                std_error=0.004)  # fmt: skip
    assert f.zero_width and f.informative
    flat = {**ece, "std_error": 0.0}
    assert evaluate(flat, Threshold("calibration_ece", 0.05)).outcome == "inconclusive"
    # identical bootstrap replicates of 0.1 have a standard deviation of rounding, 1e-17
    import numpy as np

    se = float(np.std([0.1] * 7, ddof=1))
    assert 0 < se < 1e-16
    tenth = _finding("self_preference_eo", "j", 0.1, 0.1, 0.1, clusters=6, std_error=se,
                     fixed_by_construction=False)  # fmt: skip
    assert evaluate(tenth, Threshold("self_preference_eo", 0.2)).outcome == "inconclusive"
    g = Finding(judge="j", bias=BIASES["self_preference_eo"], estimate=0.1, ci_low=0.1,
                ci_high=0.1, n=12, level=0.9, method="m", clusters=6, std_error=se)  # fmt: skip
    assert not g.informative


def test_an_inconclusive_line_projects_ratings_for_a_bias_of_a_ratings_table() -> None:
    """Play Favorites' claude-3.5-sonnet: self-bias +0.044 [0.037, 0.051] from n = 7,099,
    the judge's ratings in the regression. The gate said "roughly 10,072 comparisons (now
    7,099) would decide it": the audit's summary counts n in comparisons or ratings, and
    these are ratings. The same finding of a pairs dataset keeps "comparisons"; so does
    one whose dataset the report does not list, unless its bias is measured on ratings."""
    from recuse.report.gate import AuditedDataset, GatedReport, Scope, counted, gate_report

    f = _finding("self_bias", "claude", 0.044, 0.037, 0.051, dataset="pf", n=7099)
    # n_needed = 7,099 · (0.007 / 0.006)² = 9,662.4 -> 9,663 (half-width 0.007, gap 0.006)
    by_hand = "roughly 9,663 ratings (now 7,099) would decide it"
    for table, word in (("ratings", "ratings"), ("pairs", "comparisons")):
        report = GatedReport((f,), (), (AuditedDataset("pf", table, ("claude",)),))
        (line,) = gate_report(report, [Threshold("self_bias", 0.05)]).lines
        assert line.outcome == "inconclusive" and line.n_needed == 9663
        assert by_hand.replace("ratings", word) in line.text
    unlisted = GatedReport((f,), (), ())
    assert counted(unlisted, f, None) == "comparisons"
    assert counted(unlisted, f, Scope("ratings", "favoritism", "Favoritism")) == "ratings"


def test_an_exact_bound_is_projected_as_it_shrinks_1_over_n() -> None:
    """An order-blind judge on 12 one-pair prompts: 0.5 ± u/2, u = 1 − 0.1^(1/12) (the
    exact bound, 'exact bound (not a bootstrap)' in its method). Under --max position=0.05
    it needs u(c)/2 ≤ 0.05: c = ⌈ln 0.1 / ln 0.9⌉ = 22 prompts, 22 comparisons; the
    1/sqrt(n) projection said 12 · (0.0873 / 0.05)² → 37."""
    import math

    u = 1 - 0.1 ** (1 / 12)
    f = _finding("position", "rm", 0.5, 0.5 - u / 2, 0.5 + u / 2, null=0.5, n=12, clusters=12,
                 method="first-position rate; 90% exact bound (not a bootstrap): ...")  # fmt: skip
    line = evaluate(f, Threshold("position", 0.05))
    by_formula = min(c for c in range(1, 100) if 1 - 0.1 ** (1 / c) <= 0.1)
    assert by_formula == 22 == math.ceil(math.log(0.1) / math.log(0.9))
    assert line.outcome == "inconclusive" and line.n_needed == 22
    assert "roughly 22 comparisons (now 12)" in line.text and "1/n, an exact bound" in line.text
    # 3 pairs a prompt: the same 22 prompts, 66 pairs; a bootstrap's interval keeps 1/sqrt(n)
    assert evaluate({**f, "n": 36}, Threshold("position", 0.05)).n_needed == 66
    boot = evaluate({**f, "method": "BCa"}, Threshold("position", 0.05))
    assert boot.n_needed == math.ceil(12 * (u / 2 / 0.05) ** 2) == 37


def test_an_interval_whose_ends_differ_reads_apart_on_the_gate_line() -> None:
    """JudgeBench's reward models: position 0.5, the exact bound [0.4967, 0.5033], read
    ``0.50 [0.50, 0.50]`` on the gate's line, as if it were fixed. Three decimals tell the
    ends apart; a zero-width interval reads as it."""
    apart = _finding("position", "rm", 0.5, 0.4967, 0.5033, null=0.5, n_clusters=350)
    assert "0.500 [0.497, 0.503] (90% interval)" in evaluate(apart, Threshold("position", 0.1)).text
    flat = _finding("position", "rm", 0.5, 0.5, 0.5, null=0.5, n_clusters=350)
    assert "0.50 [0.50, 0.50] (90% interval)" in evaluate(flat, Threshold("position", 0.1)).text


def test_the_gate_reads_the_interval_rule_field_before_the_method_words() -> None:
    """report.json says which rule made each interval (``interval_rule``); the gate read
    the exact bound off its method's words. A finding whose field says "exact_bound" is
    projected as 1/n whatever its method says (22 comparisons, the hand count of the test
    above), one whose field says "bca" as 1/sqrt(n) though its words name the bound (37);
    a report written before the field (no key) is still read by its words (22)."""
    import math

    u = 1 - 0.1 ** (1 / 12)
    f = _finding("position", "rm", 0.5, 0.5 - u / 2, 0.5 + u / 2, null=0.5, n=12, clusters=12,
                 method="first-position rate; an interval")  # fmt: skip
    at = Threshold("position", 0.05)
    assert evaluate({**f, "interval_rule": "exact_bound"}, at).n_needed == 22
    worded = {**f, "method": "first-position rate; 90% exact bound (not a bootstrap): ..."}
    assert (
        evaluate({**worded, "interval_rule": "bca"}, at).n_needed
        == math.ceil(12 * (u / 2 / 0.05) ** 2)
        == 37
    )
    assert evaluate(worded, at).n_needed == 22  # an old report: the words
    assert evaluate({**f, "interval_rule": None}, at).n_needed == 37  # not a bootstrap's


def test_a_crafted_interval_rule_or_heaviest_prompt_is_an_input_error(tmp_path: Path) -> None:
    import json

    from recuse.errors import InputError
    from recuse.report.gate import load_report

    base = _finding("position", "rm", 0.5, 0.4, 0.6, null=0.5, clusters=12)
    for bad, said in (({"interval_rule": "exact"}, "interval_rule"),
                      ({"heaviest_prompt": 0.5}, "heaviest_prompt")):  # fmt: skip
        path = tmp_path / "report.json"
        path.write_text(json.dumps({"schema_version": 1, "level": 0.9, "sections": [
            {"id": "position", "findings": [{**base, **bad}]}]}))  # fmt: skip
        with pytest.raises(InputError, match=said):
            load_report(path)


def _blind_table(big: int) -> pd.DataFrame:
    """An order-blind judge (the same verdict in both orders) on 12 prompts, one holding
    ``big`` pairs and eleven one each: max/mean = 12 · big / (big + 11)."""
    rows = []
    for p in range(12):
        for k in range(big if p == 0 else 1):
            v = float((p + k) % 2)
            rows.append({"item_id": f"{p}-{k}", "prompt_id": f"p{p}", "judge": "rm",
                         "model_a": "x", "model_b": "y", "p_a_first": v, "p_a_second": v,
                         "human": v})  # fmt: skip
    return pd.DataFrame(rows)


def test_an_exact_bound_capped_at_1_is_projected_from_the_heaviest_prompt() -> None:
    """One prompt of 30 pairs among 12 (max/mean = 360 / 41 = 8.78): the share of pairs
    the unchanged prompts could hide is u · 8.78 = 1.53 > 1, capped at 1, so the position
    rate's exact bound is 0.5 ± 0.5. The gate projected the prompts from u alone (the
    bound read as k · u with k = 0.5 / u, 2.9 where it is 0.5 · 8.78 = 4.4) and came out
    about a third low (448 comparisons where 691 are needed); report.json now carries
    ``heaviest_prompt`` and the projection is checked against the bound's own formula
    (unseen_span) recomputed at the projected n: within the gap there, wider one prompt
    fewer."""
    import recuse
    from recuse.metrics.estimate import unseen_span

    table = _blind_table(30)
    report = recuse.audit(table, only="position", n_boot=200)
    sections = report.result.sections
    (f,) = [f.to_dict() for s in sections for f in s.findings if f.bias.key == "position"]
    h = 12 * 30 / 41
    assert f["interval_rule"] == "exact_bound" and f["heaviest_prompt"] == pytest.approx(h)
    assert (f["ci_low"], f["ci_high"], f["n"], f["clusters"]) == (0.0, 1.0, 41, 12)
    line = evaluate(f, Threshold("position", 0.05))
    assert line.outcome == "inconclusive" and line.n_needed is not None

    def half(c: int) -> float:
        low, high = unseen_span(0.5, c, 0.9, heaviest=h)
        return (high - low) / 2

    by_formula = min(c for c in range(12, 10_000) if half(c) <= 0.05)  # 202 prompts
    assert by_formula == 202
    # the comparisons at the pairs per prompt unchanged: n · c' / c
    assert line.n_needed == math.ceil(41 * by_formula / 12) == 691
    # an older report without the field: the projection as before, a third too few
    old = {k: v for k, v in f.items() if k != "heaviest_prompt"}
    assert evaluate(old, Threshold("position", 0.05)).n_needed < 0.75 * line.n_needed
    # every other finding of a bootstrap says its rule and carries no prompt factor
    other = recuse.audit(_blind_table(1).assign(p_a_second=0.5), only="position", n_boot=200)
    found = [f for s in other.result.sections for f in s.findings]
    assert found and "exact_bound" not in {f.interval_rule for f in found}
    assert {f.heaviest_prompt for f in found} == {None}


def test_a_heaviest_prompt_beyond_its_prompts_is_refused_not_a_traceback(tmp_path: Path) -> None:
    """A crafted ``heaviest_prompt`` of 1.7e308 on an exact bound (12 prompts) made the
    projection's prompt count infinite: ``recuse gate`` ended in an OverflowError, exit 1,
    which CI reads as a failed gate. The largest prompt's pairs over the mean prompt's is
    at most the number of prompts (one prompt holding every pair: 41 pairs on 12 prompts,
    41 / (41 / 12) = 12), so a larger one is a crafted report (exit 2, the field named);
    12 itself is read, and its projection is checked by hand: t = 0.05 / (0.5 · 12) with
    k = 0.5 / min(1, u · 12) = 0.5, c' = ⌈ln 0.1 / ln(1 − t)⌉ = ⌈275.2⌉ = 276 prompts,
    41 · 276 / 12 = 943 comparisons."""
    import json

    from recuse.cli import main
    from recuse.report.gate import bound_needed

    exact = _finding("position", "rm", 0.5, 0.0, 1.0, null=0.5, n=41, clusters=12,
                     interval_rule="exact_bound")  # fmt: skip
    path = tmp_path / "report.json"
    for h, code in ((1.7e308, 2), (12.5, 2), (12.0, 3)):
        path.write_text(json.dumps({"schema_version": 1, "level": 0.9, "sections": [
            {"id": "position", "findings": [{**exact, "heaviest_prompt": h}]}]}))  # fmt: skip
        assert main(["gate", str(path), "--max", "position=0.05"]) == code, h
    t = 0.05 / (0.5 * 12)
    prompts = math.ceil(math.log(0.1) / math.log(1 - t))
    assert prompts == 276 and math.ceil(41 * prompts / 12) == 943
    assert evaluate({**exact, "heaviest_prompt": 12.0}, Threshold("position", 0.05)).n_needed == (
        math.ceil(41 * prompts / 12)
    )
    # without load_report's check (a library caller's dict), no OverflowError either
    assert bound_needed(n=41, clusters=12, reach=0.5, gap=0.05, level=0.9, heaviest=1e308) is None
    line = evaluate({**exact, "heaviest_prompt": 1.7e308}, Threshold("position", 0.05))
    assert line.outcome == "inconclusive" and line.n_needed is None


def test_a_finding_of_no_comparisons_is_projected_from_nothing() -> None:
    """A crafted finding with n = 0 read "roughly 0 comparisons (now 0) would decide it"
    (1/sqrt(n) and the exact bound's 1/n alike: 0 times anything); it now says the
    report gives no n to project from, and n_needed is null."""
    u = 1 - 0.1 ** (1 / 12)
    for extra in ({}, {"interval_rule": "exact_bound", "clusters": 12}):
        f = _finding("position", "rm", 0.5, 0.5 - u / 2, 0.5 + u / 2, null=0.5, **extra)
        line = evaluate({**f, "n": 0}, Threshold("position", 0.05))
        assert line.outcome == "inconclusive" and line.n_needed is None, extra
        assert "roughly 0" not in line.text and "gives no n" in line.text
        assert evaluate(f, Threshold("position", 0.05)).n_needed  # n = 100 projects


def test_an_exact_bound_without_its_prompts_says_so() -> None:
    """An exact_bound finding whose report gives no clusters cannot be projected (its
    bound shrinks with the prompts, 1/n): the line said "the interval is too wide to say
    how much data would decide it" of 0.50 [0.41, 0.59], the words for an interval of
    ±1e308; it now names what is missing."""
    u = 1 - 0.1 ** (1 / 12)
    f = _finding("position", "rm", 0.5, 0.5 - u / 2, 0.5 + u / 2, null=0.5, n=12,
                 interval_rule="exact_bound")  # fmt: skip
    line = evaluate(f, Threshold("position", 0.05))
    assert line.outcome == "inconclusive" and line.n_needed is None
    assert "too wide" not in line.text and "no prompts (clusters)" in line.text
    assert evaluate({**f, "clusters": 12}, Threshold("position", 0.05)).n_needed == 22
